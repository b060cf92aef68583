/**
 * One channel's matrix as a vitest suite: the all-pairs covering set (the whole product with STEWARD_SCENARIOS=all,
 * `npm run scenarios`), each cell on a fresh stage, and the tally printed at the end.
 * A stage's audit MCP server is a session of its own, logging to a file of its own, on one audit server per test
 * process reached over Streamable HTTP (`startSharedAuditServer`), not a stdio child per cell: starting that child
 * was about 0.23 s of a console cell's 0.26 s of CPU, some 300 times a CI run (issue 27). A session is a server of its
 * own as a child was (its tools, its in-flight count; a host connecting again, or a second process, gets a new one
 * on the same log), so the cells check the same things.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { planFor, type Cell, type Channel } from './matrix.ts';
import type { Person } from './person.ts';
import { runCell } from './scenario-driver.ts';
import { tally, testName } from './summary.ts';

/**
 * Declares the suite of `channel`, whose person starts with `start`. With `part` ([k, n]) it runs every n-th cell
 * from the k-th (1-based), so a channel's cells spread over n files that vitest runs side by side.
 */
export function matrixSuite(
  channel: Channel,
  start: (script: FakeLlmScript, cell: Cell) => Promise<Person>,
  part: readonly [number, number] = [1, 1],
): void {
  const [k, n] = part;
  const planned = planFor(channel, { full: process.env.STEWARD_SCENARIOS === 'all' });
  const failed: string[] = [];
  let ran = 0;
  const started = performance.now();
  const label = n > 1 ? `${channel} (part ${k} of ${n})` : channel;
  afterAll(() => console.log(tally(label, planned, ran, failed, performance.now() - started)));

  describe(`scenario matrix: ${label}`, () => {
    const cells = planned
      .filter((p) => p.fate === 'run')
      .filter((_, i) => i % n === k - 1)
      .map((p) => [testName(p), p.cell] as const);
    it.each(cells)('%s', async (name, cell) => {
      ran++;
      const problems = await runCell(cell, start).catch((err: unknown) => [
        // A wait's message ends with everything shown so far: kept whole only with STEWARD_SCENARIOS_VERBOSE.
        err instanceof Error
          ? process.env.STEWARD_SCENARIOS_VERBOSE
            ? err.message
            : err.message.slice(0, 200)
          : String(err),
      ]);
      if (problems.length > 0) failed.push(`${name}: ${problems.join('; ')}`);
      expect(problems).toEqual([]);
    });
  });
}
