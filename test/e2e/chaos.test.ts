/**
 * The short chaos run (issue 10; `npm run chaos` is the long one): three real Steward processes on one private
 * PostgreSQL cluster, requests and Stops sent to random processes while processes are SIGKILLed and restarted and
 * PostgreSQL restarts. Every invariant is judged from what the MCP server really received, what Slack showed and
 * what the database holds (test/chaos/chaos-tally.ts); the counts are printed when one fails. Several fixed seeds, since
 * a fault schedule that passes on one proves little (issue 26: the long run passed on its tuned seed and failed on
 * others); a seed that fails is a bug to find, never a retry.
 */
import { expect, it } from 'vitest';
import { runChaos } from '../chaos/chaos-run.ts';
import { chaosPassed, formatTally } from '../chaos/chaos-tally.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { privatePostgresMissing } from '../helpers/private-postgres.ts';

describeNeeding(privatePostgresMissing, 'chaos, short', () => {
  it.each([11, 12, 13])(
    'seed %i: 12 runs across 3 processes under kills, PostgreSQL restarts and Stops: nothing runs twice, every run ends once or waits on a person',
    async (seed) => {
      const lines: string[] = [];
      const result = await runChaos({
        runs: 12,
        processes: 3,
        seconds: 25,
        seed,
        killEverySeconds: 5,
        pgRestartEverySeconds: 12,
        stopEverySeconds: 5,
        settleSeconds: 120,
        log: (line) => lines.push(line),
      });
      const tally = result.tally;
      const failed = tally.checks.filter((c) => c.failures > 0).map((c) => c.name);
      expect(failed, `${formatTally(tally)}\n\n${lines.join('\n')}`).toEqual([]);
      expect(chaosPassed(tally)).toBe(true);
      // The faults really happened: processes were killed and PostgreSQL restarted while runs were in flight.
      expect(result.events.kills).toBeGreaterThan(0);
      expect(result.events.pgRestarts).toBeGreaterThan(0);
    },
    360_000,
  );
});
