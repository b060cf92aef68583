/**
 * The chaos verdict's restart-notice check (issue 26: a run waiting through several takeovers was told the same
 * "restarted while r1, r2 were running" at each one): a notice may name a step only as often as takeovers found it
 * in flight, which the database shows as its attempts ended `interrupted`.
 */
import { describe, expect, it } from 'vitest';
import { requestText } from './chaos-plans.ts';
import { tallyChaos, type AttemptRow, type ChaosObservations } from './chaos-tally.ts';

const run = { id: 'run-1', status: 'paused', request: requestText(5, 'records'), conversation_key: 'C1:100.1' };
const interrupted = (attempt: number): AttemptRow => ({
  run_id: run.id,
  step_id: 'r1',
  attempt,
  status: 'failed',
  args: { tag: 'k5.r1' },
  error: { code: 'interrupted', message: 'Steward stopped while this step was running' },
  ended_at: new Date(),
});
const notice =
  '⚠️ Steward restarted while r1 was running. Its tool may have acted already and is not safe to repeat blindly: resume to run it again, or stop.';

function verdict(posts: string[], attempts: AttemptRow[]) {
  const observations: ChaosObservations = {
    requests: [],
    stops: [],
    audit: [],
    decisions: [],
    reports: new Map(),
    ephemerals: new Map(),
    runs: [{ ...run, requester_id: 'U1', report_due: false }],
    attempts,
    posts: new Map([['100.1', posts]]),
  };
  return tallyChaos(observations).checks.find((c) => c.name.startsWith('restart notices'));
}

describe('chaos tally: restart notices', () => {
  it('one notice per takeover that found the step in flight passes', () => {
    expect(verdict([notice, notice], [interrupted(1), interrupted(2)])?.failures).toBe(0);
  });

  it('the same notice again at a takeover that found nothing in flight fails', () => {
    const check = verdict([notice, notice, notice], [interrupted(1)]);
    expect(check?.failures).toBe(1);
    expect(check?.examples[0]).toMatch(/r1 named in 3 notices, found in flight 1 time/);
  });
});
