/**
 * Which run a typed word applies to on the console (issue 25, docs/runs.md "Steering a run"): the run whose card the
 * person last saw that is still active; a quick answer never takes that place; `runs` and `use <id>` pick one.
 * The console, the real engine on PostgreSQL, the fake model and the audit server, with quick answers on.
 */
import { describe, expect, it } from 'vitest';
import type { StewardSettings } from '../../src/engine/flows/steward.ts';
import { byRole, type FakeReply, type RoleReplies } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply, type Harness, useAuditHarness } from './harness.ts';

const t = useAuditHarness();

const quickOn: Partial<StewardSettings> = { quickAnswers: { maxTurns: 4, maxTokens: 12_000 } };
const toPlanner: FakeReply = {
  text: '',
  toolCalls: [{ id: 'call_1', name: 'plan_request', args: { reason: 'long' } }],
};
const sleep = (id: string, ms: number) => ({ id, tool: 'audit.sleep', args: { ms } });
const sleeping = () => t.audit.entries().filter((e) => e.type === 'call' && e.name === 'sleep').length;
const cancelled = () => t.audit.entries().filter((e) => e.type === 'cancelled' && e.name === 'sleep').length;

async function start(
  replies: Partial<Record<'butler' | 'planner' | 'classifier' | 'synthesizer', RoleReplies>>,
): Promise<Harness> {
  return t.start({ db: 'postgres', servers: [t.audit.config()], script: byRole(replies), settings: quickOn });
}

/** The ids of the console's runs, oldest first. */
async function runIds(h: Harness): Promise<string[]> {
  const rows = await h.db.db.selectFrom('runs').select('id').orderBy('created_at').execute();
  return rows.map((r) => r.id);
}

/** Types a long request (a low-risk sleep, so it runs without review) and waits until the server is called. */
async function startLong(h: Harness, request: string, calls: number): Promise<void> {
  await h.type(request);
  await waitUntil('the sleep to reach the server', () => sleeping() === calls);
}

describe('which run a typed word applies to (console)', () => {
  it('a quick answer typed as "new <question>" while a long run works: "stop" still stops the long run (it used to answer "already ended")', async () => {
    const h = await start({
      butler: [toPlanner, 'It is noon.'],
      planner: [planReply([sleep('long', 20_000)])],
      synthesizer: ['Stopped.'],
    });
    await startLong(h, 'Wait twenty seconds', 1);

    await h.type('new What time is it?');
    await h.waitFor(/^It is noon\.$/m);
    await waitUntil(
      'the quick answer to end',
      async () => (await h.store.getRun((await runIds(h))[1]!))?.status === 'completed',
    );
    const mark = h.output().length;
    await h.type('stop');

    await h.waitFor(/=== Report \(stopped\) ===\nStopped\.\n/, 15_000, mark);
    await waitUntil('the server to record the cancellation', () => cancelled() === 1);
    expect(h.output().slice(mark)).not.toMatch(/already ended/);
    const [long, quick] = await runIds(h);
    expect((await h.store.getRun(long!))?.status).toBe('stopped');
    expect((await h.store.getRun(quick!))?.status).toBe('completed');
    const [attempt] = await h.store.listStepAttempts(long!);
    expect([attempt?.stepId, attempt?.status]).toEqual(['long', 'cancelled']);
  });

  it('"runs" lists the active runs with their ids, "use <id>" sends the words to one, "stop <id>" stops another', async () => {
    const h = await start({
      butler: [toPlanner, toPlanner],
      planner: [planReply([sleep('first', 20_000)]), planReply([sleep('second', 20_000)])],
      classifier: 'unrelated',
      synthesizer: 'Stopped.',
    });
    await startLong(h, 'Wait twenty seconds', 1);
    await startLong(h, 'new Wait twenty seconds again', 2);
    const [first, second] = await runIds(h);
    const short = (id: string | undefined) => id!.slice(0, 8);

    let mark = h.output().length;
    await h.type('runs');
    const listed = await h.waitFor(/Active runs[^\n]*\n.*\n.*\n/, 5_000, mark);
    expect(listed).toContain(`* ${short(second)}  running  Wait twenty seconds again\n`);
    expect(listed).toContain(`  ${short(first)}  running  Wait twenty seconds\n`);

    await h.type(`use ${short(first)}`);
    await h.waitFor(new RegExp(`Commands now go to run ${short(first)} \\("Wait twenty seconds"\\)\\.`), 5_000, mark);
    // A reply goes to the run picked too (the model takes it for chatter, so the console names the run it was about).
    await h.type('what about lunch?');
    await h.waitFor(
      new RegExp(`about run ${short(first)} \\("Wait twenty seconds"\\), so it was left alone`),
      5_000,
      mark,
    );
    mark = h.output().length;
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===\nStopped\.\n/, 15_000, mark);
    await waitUntil('the server to record the first cancellation', () => cancelled() === 1);
    expect((await h.store.getRun(first!))?.status).toBe('stopped');
    expect((await h.store.getRun(second!))?.status).toBe('running');

    mark = h.output().length;
    await h.type('runs');
    const left = await h.waitFor(/Active runs[^\n]*\n.*\n/, 5_000, mark);
    expect(left).toContain(`* ${short(second)}  running`);
    expect(left).not.toContain(short(first));

    await h.type(`pause ${short(second)}`);
    await waitUntil('the second run to pause', async () => (await h.store.getRun(second!))?.status === 'paused');
    mark = h.output().length;
    await h.type(`stop ${short(second)}`);
    await h.waitFor(/=== Report \(stopped\) ===\nStopped\.\n/, 15_000, mark);
    await waitUntil('the server to record the second cancellation', () => cancelled() === 2);
    await h.type('runs');
    await h.waitFor(/^i No run is active\.$/m, 5_000, mark);
    await h.type(`use ${short(first)}`);
    await h.waitFor(new RegExp(`No active run has the id ${short(first)}`), 5_000, mark);
  });

  it('Stop on a run that ended while another of the same person is active here: never a bare "already ended"', async () => {
    const h = await start({
      butler: [toPlanner, 'It is noon.'],
      planner: [planReply([sleep('long', 20_000)])],
      synthesizer: ['Stopped.'],
    });
    await startLong(h, 'Wait twenty seconds', 1);
    await h.type('new What time is it?');
    await h.waitFor(/^It is noon\.$/m);
    const [long, quick] = await runIds(h);
    await waitUntil('the quick answer to end', async () => (await h.store.getRun(quick!))?.status === 'completed');
    const ada = { id: 'ada', name: 'ada', channel: 'console' };

    // A press on the answer's card (Slack and Discord send one): the active run is named, with how to stop it.
    let mark = h.output().length;
    await h.steward.decision({ runId: quick!, revision: 0, action: 'stop', actor: ada });
    const named = await h.waitFor(/^! Run .*$/m, 5_000, mark);
    expect(named).toBe(
      `! Run ${quick!.slice(0, 8)} has already ended (completed); nothing changed. Your run ${long!.slice(0, 8)} ("Wait twenty seconds"): to stop it, press Stop on its card.`,
    );
    expect((await h.store.getRun(long!))?.status).toBe('running');

    // A typed word the channel sent to the ended run goes to the only active one, saying so.
    mark = h.output().length;
    await h.steward.decision({ runId: quick!, revision: 0, action: 'stop', actor: ada, byWord: true });
    await h.waitFor(
      new RegExp(
        `^i Run ${quick!.slice(0, 8)} has already ended \\(completed\\); "stop" went to your active run ${long!.slice(0, 8)} \\("Wait twenty seconds"\\)\\.$`,
        'm',
      ),
      5_000,
      mark,
    );
    await h.waitFor(/=== Report \(stopped\) ===\nStopped\.\n/, 15_000, mark);
    await waitUntil('the server to record the cancellation', () => cancelled() === 1);
    expect((await h.store.getRun(long!))?.status).toBe('stopped');
  });
});
