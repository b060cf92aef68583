/**
 * The short chaos run (issue 10; `npm run chaos` is the long one): three real Steward processes on one private
 * PostgreSQL cluster, requests and Stops sent to random processes while processes are SIGKILLed and restarted and
 * PostgreSQL restarts. Every invariant is judged from what the MCP server really received, what Slack showed and
 * what the database holds (test/chaos/chaos-tally.ts); the counts are printed when one fails.
 */
import { describe, expect, it } from 'vitest';
import { runChaos } from '../chaos/chaos-run.ts';
import { chaosPassed, formatTally } from '../chaos/chaos-tally.ts';
import { privatePostgresMissing } from '../helpers/private-postgres.ts';

const title = `chaos, short${privatePostgresMissing ? ` (skipped: ${privatePostgresMissing})` : ''}`;

describe.skipIf(privatePostgresMissing !== undefined)(title, () => {
  it('12 runs across 3 processes under kills, a PostgreSQL restart and Stops: nothing runs twice, every run ends once or waits on a person', async () => {
    const lines: string[] = [];
    const result = await runChaos({
      runs: 12,
      processes: 3,
      seconds: 25,
      seed: 11,
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
  }, 360_000);
});
