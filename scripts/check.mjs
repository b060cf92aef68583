// `npm run check`: the type check, ESLint and Prettier, side by side (one after another they took over a minute on a
// 2-CPU machine), each one's output printed whole in a fixed order, then which failed.
// Each keeps a cache in STEWARD_CHECK_CACHE (default node_modules/.cache/steward; .ci/run points it outside the
// checkout so it survives between CI runs), and each cache only skips work whose inputs did not change: tsc's build
// info, Prettier's per-file content hash (with the options' hash), and scripts/lint.mjs's per-file key, which covers
// the file and everything its types can come from. ESLint's own --cache is not used: it keys a file by its content
// alone, and a type-aware rule can change verdict on a file whose imports changed.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const cache = process.env.STEWARD_CHECK_CACHE || 'node_modules/.cache/steward';

const checks = [
  ['types', 'tsc', ['--noEmit', '--incremental', '--tsBuildInfoFile', join(cache, 'tsbuildinfo')]],
  ['lint', process.execPath, ['scripts/lint.mjs']],
  [
    'format',
    'prettier',
    [
      '--check',
      '--cache',
      '--cache-strategy',
      'content',
      '--cache-location',
      join(cache, 'prettier'),
      '--log-level',
      'warn',
      '.',
    ],
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
