/**
 * The scenario matrix on the console (issue 25): the all-pairs covering set in `npm test`, the whole product with
 * STEWARD_SCENARIOS=all (`npm run scenarios`). Each cell runs on its own stage (its own database, Steward, fake model
 * and audit server; about 0.3 s to start), so cells cannot leak runs into each other.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runConsoleCell } from './console-driver.ts';
import { planFor } from './matrix.ts';
import { tally, testName } from './summary.ts';

const planned = planFor('console', { full: process.env.STEWARD_SCENARIOS === 'all' });
const failed: string[] = [];
let ran = 0;
const started = performance.now();
afterAll(() => console.log(tally('console', planned, ran, failed, performance.now() - started)));

describe('scenario matrix: console', () => {
  it.each(planned.filter((p) => p.fate === 'run').map((p) => [testName(p), p.cell] as const))(
    '%s',
    async (name, cell) => {
      ran++;
      const problems = await runConsoleCell(cell).catch((err: unknown) => [
        String(
          err instanceof Error
            ? process.env.STEWARD_SCENARIOS_VERBOSE
              ? err.message
              : err.message.split('; console so far')[0]
            : err,
        ),
      ]);
      if (problems.length > 0) failed.push(`${name}: ${problems.join('; ')}`);
      expect(problems).toEqual([]);
    },
  );
});
