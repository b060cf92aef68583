/**
 * scripts/test-report.mjs, which .ci/run reads each vitest JSON report with: the counts line (a skip or a todo
 * counting as skipped, which fails CI), the skipped tests by name, and the slowest files in seconds.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SCRIPT = join(ROOT, 'scripts/test-report.mjs');

interface FileResult {
  name: string;
  startTime: number;
  endTime: number;
  assertionResults: { fullName: string; status: string }[];
}

/** A test file's entry as vitest's JSON reporter writes it: `seconds` long, its tests `passed` unless named. */
function createFileResult(path: string, seconds: number, tests: Record<string, string> = {}): FileResult {
  const startTime = 1_796_469_600_000;
  return {
    name: join(ROOT, path),
    startTime,
    endTime: startTime + seconds * 1000,
    assertionResults: Object.entries(tests).map(([fullName, status]) => ({ fullName, status })),
  };
}

const report = {
  numPassedTests: 7,
  numFailedTests: 1,
  numPendingTests: 2,
  numTodoTests: 1,
  testResults: [
    createFileResult('test/engine/plan/refs.test.ts', 0.04, { 'refs resolve': 'passed' }),
    createFileResult('test/e2e/chaos.test.ts', 61.26, { 'chaos, short (skipped: no initdb) seed 11': 'skipped' }),
    createFileResult('test/e2e/slack.test.ts', 9.94, { 'slack later': 'todo', 'slack renders': 'failed' }),
    createFileResult('test/store/run-reports.test.ts', 12.5, { 'reports on pglite old': 'pending' }),
  ],
};

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'steward-test-report-'));
  file = join(dir, 'report.json');
  await writeFile(file, JSON.stringify(report));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const run = async (...args: string[]) =>
  (await promisify(execFile)(process.execPath, [SCRIPT, ...args], { cwd: ROOT })).stdout;

describe('scripts/test-report.mjs', () => {
  it('counts passed, failed, and skipped as pending plus todo', async () => {
    expect(await run('counts', file)).toBe('7 1 3\n');
  });

  it('names each skipped or todo test with its file', async () => {
    expect(await run('skipped', file)).toBe(
      [
        '  test/e2e/chaos.test.ts: chaos, short (skipped: no initdb) seed 11',
        '  test/e2e/slack.test.ts: slack later',
        '  test/store/run-reports.test.ts: reports on pglite old',
        '',
      ].join('\n'),
    );
  });

  it('lists the n slowest files, slowest first, in seconds with one decimal', async () => {
    expect(await run('slowest', file, '3')).toBe(
      [
        '  61.3 s  test/e2e/chaos.test.ts',
        '  12.5 s  test/store/run-reports.test.ts',
        '   9.9 s  test/e2e/slack.test.ts',
        '',
      ].join('\n'),
    );
  });

  it('fails, saying so, on a report it cannot read', async () => {
    await expect(run('counts', join(dir, 'missing.json'))).rejects.toThrow(/cannot read the vitest report/);
  });
});
