/**
 * describeNeeding and itNeeding as vitest reports them: a suite missing what it needs is skipped with the reason
 * in its title on a developer's machine, and fails with the reason under STEWARD_REQUIRE_ALL=1 (.ci/run), while
 * one that has what it needs runs either way. Each case runs vitest on test/fixtures/needs/ in a child process.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REQUIRE_ALL } from './needs.ts';

const ROOT = join(import.meta.dirname, '../..');
const VITEST = join(ROOT, 'node_modules/vitest/vitest.mjs');
const CONFIG = join(ROOT, 'test/fixtures/needs/vitest.config.ts');

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: { assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[];
}

/** Runs the fixture suite with `requireAll` as STEWARD_REQUIRE_ALL (unset when undefined); its JSON report. */
async function runFixture(requireAll: string | undefined): Promise<Report> {
  const dir = await mkdtemp(join(tmpdir(), 'steward-needs-'));
  const out = join(dir, 'report.json');
  // Not this worker's own vitest settings, nor the variable from the outside when this runs under .ci/run.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== REQUIRE_ALL),
  );
  if (requireAll !== undefined) env[REQUIRE_ALL] = requireAll;
  try {
    await new Promise<void>((resolve) => {
      // A failing run exits non-zero: that is an outcome to read from the report, not an error here.
      execFile(
        process.execPath,
        [VITEST, 'run', '--config', CONFIG, '--reporter=json', `--outputFile.json=${out}`],
        { cwd: ROOT, env, timeout: 50_000 },
        () => resolve(),
      );
    });
    return JSON.parse(await readFile(out, 'utf8')) as Report;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const outcomes = (report: Report) =>
  report.testResults.flatMap((file) => file.assertionResults.map((test) => `${test.status}: ${test.fullName}`));

describe('a suite that needs something of the machine', () => {
  it('is skipped with the reason in its title on a developer machine, and runs when nothing is missing', async () => {
    for (const requireAll of [undefined, '', '0']) {
      const report = await runFixture(requireAll);
      expect(outcomes(report).sort()).toEqual([
        'passed: a suite with what it needs runs',
        'passed: a test with what it needs',
        'skipped: a suite without its frobnicator (skipped: no frobnicator on this machine) would use it twice',
        'skipped: a suite without its frobnicator (skipped: no frobnicator on this machine) would use the frobnicator',
        'skipped: a test without an outside address (skipped: no address but loopback)',
      ]);
      expect(report.numPendingTests).toBe(3);
    }
  });

  it(`fails with the reason under ${REQUIRE_ALL}=1, as .ci/run sets it, and still runs what has its needs`, async () => {
    const report = await runFixture('1');
    expect(outcomes(report).sort()).toEqual([
      'failed: a suite without its frobnicator has what it needs',
      'failed: a test without an outside address',
      'passed: a suite with what it needs runs',
      'passed: a test with what it needs',
    ]);
    expect(report.numPendingTests).toBe(0);
    const failures = report.testResults.flatMap((f) => f.assertionResults.flatMap((t) => t.failureMessages));
    expect(failures).toEqual([
      expect.stringContaining(
        `"a suite without its frobnicator" cannot run here: no frobnicator on this machine (${REQUIRE_ALL} is set`,
      ),
      expect.stringContaining(`"a test without an outside address" cannot run here: no address but loopback`),
    ]);
  });
});
