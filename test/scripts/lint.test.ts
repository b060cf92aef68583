/**
 * scripts/lint.mjs, `npm run check`'s ESLint with a sound cache, on a tiny project with the repository's own
 * eslint.config.js and tsconfig.json: app.ts imports engine.ts, which imports ports.ts; leaf.ts imports nothing;
 * broken.ts has an error. The steps run in order, each on the state the one before left.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SCRIPT = join(ROOT, 'scripts/lint.mjs');

const SOURCES: Record<string, string> = {
  'src/ports.ts': 'export function save(): void {}\n',
  'src/engine.ts': "import { save } from './ports.ts';\n\nexport function run(): void {\n  save();\n}\n",
  'src/app.ts': "import { run } from './engine.ts';\n\nexport function start(): void {\n  run();\n}\n",
  'src/leaf.ts': 'export const answer = 42;\n',
  'src/broken.ts': 'const unused = 1;\n\nexport {};\n',
};

/** What `eslint .` lints in the tiny project: the sources and the config itself. */
const FILES = ['eslint.config.js', ...Object.keys(SOURCES)].sort();

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'steward-lint-'));
  await mkdir(join(dir, 'src'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  await copyFile(join(ROOT, 'eslint.config.js'), join(dir, 'eslint.config.js'));
  await copyFile(join(ROOT, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  await writeFile(join(dir, 'package.json'), '{ "name": "tiny", "private": true, "type": "module" }\n');
  for (const [path, text] of Object.entries(SOURCES)) await writeFile(join(dir, path), text);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  output: string;
  linted: string[];
}

/** Runs a command in the tiny project, resolving (not rejecting) with its exit code and whole output. */
const exec = (command: string, args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; output: string }>((resolve) => {
    execFile(command, args, { cwd: dir, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });

const lint = async (): Promise<Run> => {
  const { code, output } = await exec(process.execPath, [SCRIPT], {
    STEWARD_LINT_CACHE: join(dir, 'cache/lint.json'),
    STEWARD_LINT_VERBOSE: '1',
  });
  const linted = [...output.matchAll(/^linted (.+)$/gm)].map((m) => m[1]!).sort();
  return { code, output, linted };
};

/** ESLint's own cache, which keys a file by its content only. */
const eslintWithItsCache = () =>
  exec(join(ROOT, 'node_modules/.bin/eslint'), ['--cache', '--cache-location', join(dir, 'cache/eslint'), 'src']);

const FLOATING = /engine\.ts\n\s+4:3\s+error\s+Promises must be awaited.*no-floating-promises/;

describe('scripts/lint.mjs', () => {
  it('lints every file on a cold cache, and fails on the error in broken.ts', async () => {
    const run = await lint();
    expect(run.linted).toEqual(FILES);
    expect(run.output).toMatch(/broken\.ts\n\s+1:7\s+error\s+'unused' is assigned a value but never used/);
    expect(run.code).toBe(1);
    expect((await eslintWithItsCache()).code).toBe(1); // fills ESLint's cache, for the comparison below
  });

  it('lints again only the file with an error when nothing changed, and still prints its error', async () => {
    const run = await lint();
    expect(run.linted).toEqual(['src/broken.ts']);
    expect(run.output).toMatch(/broken\.ts\n\s+1:7\s+error/);
    expect(run.code).toBe(1);
  });

  it('lints a changed file and its importers, transitively, and sees the floating promise its change made', async () => {
    await writeFile(join(dir, 'src/ports.ts'), 'export async function save(): Promise<void> {}\n');
    const run = await lint();
    expect(run.linted).toEqual(['src/app.ts', 'src/broken.ts', 'src/engine.ts', 'src/ports.ts']);
    expect(run.output).toMatch(FLOATING);
    // ESLint's own cache re-lints ports.ts only (its content changed), and misses the error in engine.ts.
    const theirs = await eslintWithItsCache();
    expect(theirs.output).toMatch(/broken\.ts/);
    expect(theirs.output).not.toMatch(/no-floating-promises/);
  });

  it('never caches a file with an error: engine.ts is linted again, app.ts and ports.ts are not', async () => {
    const run = await lint();
    expect(run.linted).toEqual(['src/broken.ts', 'src/engine.ts']);
    expect(run.output).toMatch(FLOATING);
  });

  it('remembers earlier clean keys: putting ports.ts back lints none of the files that import it', async () => {
    await writeFile(join(dir, 'src/ports.ts'), SOURCES['src/ports.ts']!);
    const run = await lint();
    expect(run.linted).toEqual(['src/broken.ts']);
    expect(run.output).not.toMatch(/no-floating-promises/);
  });

  // A module that declares a global is seen by every file without being imported, like a .d.ts file or a script.
  it('lints every file when a module declaring a global appears', async () => {
    await writeFile(join(dir, 'src/env.ts'), 'export {};\n\ndeclare global {\n  const BUILD_ID: string;\n}\n');
    const run = await lint();
    expect(run.linted).toEqual([...FILES, 'src/env.ts'].sort());
  });
});
