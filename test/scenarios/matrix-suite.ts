/**
 * One channel's matrix as a vitest suite: the all-pairs covering set (the whole product with STEWARD_SCENARIOS=all,
 * `npm run scenarios`), each cell on a fresh stage, and the tally printed at the end.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { planFor, type Cell, type Channel } from './matrix.ts';
import type { Person } from './person.ts';
import { runCell } from './scenario-driver.ts';
import { tally, testName } from './summary.ts';

/** Declares the suite of `channel`, whose person starts with `start`. */
export function matrixSuite(channel: Channel, start: (script: FakeLlmScript, cell: Cell) => Promise<Person>): void {
  const planned = planFor(channel, { full: process.env.STEWARD_SCENARIOS === 'all' });
  const failed: string[] = [];
  let ran = 0;
  const started = performance.now();
  afterAll(() => console.log(tally(channel, planned, ran, failed, performance.now() - started)));

  describe(`scenario matrix: ${channel}`, () => {
    const cells = planned.filter((p) => p.fate === 'run').map((p) => [testName(p), p.cell] as const);
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
