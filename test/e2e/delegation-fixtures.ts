/**
 * What the delegation tests on the console, Slack and Discord share: the `delegate` step, the two stories the chat
 * platforms both tell (a hand-off whose report feeds the parent's next step, and a child stopped through its
 * parent's card), and waits on the runs as the database holds them.
 */
import type { StoredRun } from '../../src/engine/ports.ts';
import { byRole, type FakeLlmScript } from '../fakes/fake-llm-server.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import { waitUntil } from '../helpers/wait.ts';
import type { PgRunStore } from '../../src/store/pg-run-store.ts';
import { planReply } from './harness.ts';

/** What the run helpers read: any harness's database and store. */
type RunsOf = { db: TestDatabase; store: PgRunStore };

/** A plan step handing `task` to the Assistant "ops". */
export const delegate = (id: string, task: string, extra: Record<string, unknown> = {}) => ({
  id,
  tool: 'steward.delegate',
  args: { assistant: 'ops', task },
  ...extra,
});

/**
 * The hand-off: the parent asks ops where Ada is and looks up ops's report; ops looks Ada up. The child reports
 * "Ada Lovelace is in room 12.", the parent "ops found Ada: room 12.".
 */
export function handOffScript(): FakeLlmScript {
  return byRole({
    planner: [
      planReply(
        [
          delegate('ask', 'Find Ada in the contacts.'),
          {
            id: 'use',
            tool: 'audit.lookup',
            args: { answer: { $ref: 'steps.ask.output.content[0].text' } },
            dependsOn: ['ask'],
          },
        ],
        { summary: 'Ask ops where Ada is' },
      ),
      planReply([{ id: 'find', tool: 'audit.lookup', args: { answer: 'Ada Lovelace, room 12' } }], {
        summary: 'Look Ada up',
      }),
    ],
    synthesizer: ['Ada Lovelace is in room 12.', 'ops found Ada: room 12.'],
  });
}

/** What the audit server gets in the hand-off: the child's lookup, then the parent's, given the child's report. */
export const HAND_OFF_CALLS = ['Ada Lovelace, room 12', 'Report of the Assistant "ops":\nAda Lovelace is in room 12.'];

/**
 * The stop story: the parent has ops sleep a minute ("Have ops wait"), then would look something up; ops's plan is
 * the sleep ("Sleep a minute"). Each run's report, written as it stops, is answered by its own request.
 */
export function waitOnOpsScript(): FakeLlmScript {
  return byRole({
    planner: [
      planReply(
        [
          delegate('wait', 'Sleep for a minute.'),
          { id: 'after', tool: 'audit.lookup', args: { answer: 'never' }, dependsOn: ['wait'] },
        ],
        { summary: 'Have ops wait' },
      ),
      planReply([{ id: 'nap', tool: 'audit.sleep', args: { ms: 60_000 } }], { summary: 'Sleep a minute' }),
    ],
    synthesizer: (req) =>
      req.lastUserText.includes('Sleep for a minute.')
        ? 'Stopped before the minute was up.'
        : 'Stopped: ops did not finish.',
  });
}

/** Every run, oldest first. */
export async function allRuns(h: RunsOf): Promise<StoredRun[]> {
  const rows = await h.db.db.selectFrom('runs').select('id').orderBy('created_at').orderBy('id').execute();
  return Promise.all(rows.map(async (r) => (await h.store.getRun(r.id))!));
}

/** Waits until there are `n` runs and returns them, oldest first. */
export function untilRuns(h: RunsOf, n: number): Promise<StoredRun[]> {
  return waitUntil(`${n} runs`, async () => {
    const all = await allRuns(h);
    return all.length >= n ? all : undefined;
  });
}

/** The parent run and its child, once both exist. */
export function parentAndChild(h: RunsOf): Promise<[StoredRun, StoredRun]> {
  return waitUntil('the parent and its child run', async () => {
    const all = await allRuns(h);
    const parent = all.find((r) => r.parentRunId === undefined);
    const child = all.find((r) => r.parentRunId !== undefined);
    return parent && child ? ([parent, child] as [StoredRun, StoredRun]) : undefined;
  });
}

/** Waits until a run is in one of `statuses`, and returns it. */
export function untilStatus(h: RunsOf, runId: string, ...statuses: StoredRun['status'][]): Promise<StoredRun> {
  return waitUntil(`run ${runId} to be ${statuses.join(' or ')}`, async () => {
    const run = await h.store.getRun(runId);
    return run && statuses.includes(run.status) ? run : undefined;
  });
}
