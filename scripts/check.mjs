// `npm run check`: the type check, ESLint and Prettier, side by side (one after another they took over a minute on a
// 2-CPU machine), each one's output printed whole in a fixed order, then which failed.
// The type check and Prettier keep caches in node_modules/.cache, which only skip work whose inputs did not change
// (tsc's build info, Prettier's per-file content hash), so a second run takes seconds for them. ESLint has no cache
// here: its type-aware rules can change verdict on a file whose imports changed, which its cache would not see.
import { spawn } from 'node:child_process';

const checks = [
  ['types', 'tsc', ['--noEmit', '--incremental', '--tsBuildInfoFile', 'node_modules/.cache/steward/tsbuildinfo']],
  ['lint', 'eslint', ['.']],
  [
    'format',
    'prettier',
    ['--check', '--cache', '--cache-location', 'node_modules/.cache/steward/prettier', '--log-level', 'warn', '.'],
  ],
];

const run = ([name, command, args]) =>
  new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { shell: process.platform === 'win32' });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (err) => resolve({ name, code: 1, output: `${command}: ${err.message}\n`, seconds: 0 }));
    child.on('close', (code) => resolve({ name, code, output, seconds: (Date.now() - started) / 1000 }));
  });

// npm puts node_modules/.bin on the PATH of scripts, so the tools are found by name.
const results = await Promise.all(checks.map(run));
for (const r of results) {
  process.stdout.write(r.output);
  console.log(`${r.code === 0 ? 'ok' : 'FAILED'}: ${r.name} (${r.seconds.toFixed(1)} s)`);
}
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
