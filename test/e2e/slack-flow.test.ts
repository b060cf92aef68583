import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, storedStart, waitForStoredEnd } from './harness.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { allTexts } from '../bot/slack/fixtures.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

// Every tool of this server counts as medium risk, so its plans wait for review.
const reviewed = () => everythingStdioConfig({ overrides: { risk: 'medium' } });
const slow = (id: string, duration: number, extra: Record<string, unknown> = {}) => ({
  id,
  tool: 'everything.trigger-long-running-operation',
  args: { duration, steps: duration * 2 },
  description: 'a slow job',
  ...extra,
});

describe.each(['postgres', 'pglite'] as const)('slack, end to end on %s', (db) => {
  it('mention → plan card in the thread → Approve → the card updates in place, paced → report in the thread', async () => {
    const plan = planReply(
      [
        slow('slow', 2),
        { id: 'say', tool: 'everything.echo', args: { message: 'done <!channel>' }, dependsOn: ['slow'] },
      ],
      { summary: 'Run the slow job, then say done' },
    );
    h = await startSlackHarness({
      db,
      servers: [reviewed()],
      script: byRole({ planner: [plan], synthesizer: ['The slow job finished. <!channel> <@U0EVE> **all good**'] }),
    });

    const thread = await h.mention('run the slow job and tell me');
    const card = await h.waitFor('the plan card', () => h!.replies(thread).length === 0 && h!.card(thread));
    expect(card.threadTs).toBe(thread);
    expect(messageText(card)).toContain('📋 Plan waiting for review · revision 0');
    expect(messageText(card)).toContain('`everything.trigger-long-running-operation`');
    const runId = await onlyRunId(h);

    const started = Date.now();
    expect(await h.press(card, 'approve')).toBe(200);
    expect(Date.now() - started).toBeLessThan(3_000);
    const report = await h.waitFor('the report', () =>
      h!.replies(thread).find((m) => messageText(m).includes('Report')),
    );
    await h.steward.idle();
    // The report does not wait for the card (a throttled update would hold it), but the card's final state lands.
    await h.waitFor('the final card', () => messageText(h!.card(thread)).includes('✅ Completed'));

    // The report is a thread reply, with its mentions defused.
    const calls = h.slack.calls;
    const updates = calls.filter((c) => c.method === 'chat.update' && c.args.ts === card.ts);
    expect(messageText(report)).toContain('*all good*');
    expect(messageText(report)).toContain('&lt;!channel&gt; &lt;@U0EVE&gt;');
    for (const c of calls) expect(JSON.stringify(c.args)).not.toMatch(/<!channel>|<@U0EVE>/);

    // Live: running, then done, each step shown; progress never more than about one update a second (the final
    // state goes at once: nothing follows it); final state last.
    expect(updates.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < updates.length - 1; i++)
      expect(updates[i]!.at - updates[i - 1]!.at).toBeGreaterThanOrEqual(900);
    expect(updates.some((u) => allTexts(u.args.blocks).join('\n').includes('▶️ Running'))).toBe(true);
    const final = h.card(thread);
    expect(messageText(final)).toContain('✅ Completed');
    expect(messageText(final)).toContain('Step 2/2');
    // No decision is left to take; "Save as workflow" (the run completed) and the history / help menu stay.
    const rows = final.blocks.filter((b) => b.type === 'actions');
    expect(rows.flatMap((b) => (b.elements as Array<{ action_id: string }>).map((e) => e.action_id))).toEqual([
      'steward.save-workflow',
      'steward.more',
    ]);
    expect(calls.every((c) => c.response.ok === true)).toBe(true);

    expect((await h.store.getRun(runId))!.status).toBe('completed');
    expect((await h.store.listDecisions(runId)).map((d) => [d.action, d.accepted, d.actor.id])).toEqual([
      ['approve', true, 'U0ADA'],
    ]);
  });
});

describe('slack, end to end on postgres', () => {
  it('Amend opens a modal; its text re-plans and the same card shows the new revision, which then runs', async () => {
    const first = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hello' } }]);
    const second = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hello, world' } }], {
      summary: 'Say hello, world',
    });
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [first, second], synthesizer: ['Said it.'] }),
    });
    const thread = await h.mention('say hello');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const runId = await onlyRunId(h);

    expect(await h.press(card, 'amend')).toBe(200);
    const opened = h.slack.callsOf('views.open');
    expect(opened).toHaveLength(1);
    expect(opened[0]!.response.ok).toBe(true);
    expect(JSON.parse((opened[0]!.args.view as { private_metadata: string }).private_metadata)).toEqual({
      runId,
      revision: 0,
    });

    expect(await h.submitAmend('make it say hello, world')).toBe(200);
    await h.waitFor('revision 1 on the card', () => messageText(h!.card(thread)).includes('revision 1'));
    expect(h.llm.requests.filter((r) => r.role === 'planner')[1]!.lastUserText).toContain('make it say hello, world');
    expect(
      h.slack.callsOf('chat.postMessage').filter((c) => JSON.stringify(c.args).includes('Plan waiting')),
    ).toHaveLength(1);
    expect(messageText(h.card(thread))).toContain('Amend (2 left)');

    await h.press(h.card(thread), 'approve');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said it.')));
    await h.steward.idle();
    const decisions = await h.store.listDecisions(runId);
    expect(decisions.map((d) => [d.action, d.revision, d.accepted])).toEqual([
      ['amend', 0, true],
      ['approve', 1, true],
    ]);
  });

  it('Pause holds the run after the step in flight; Resume finishes it; "ask me first" stores the preference', async () => {
    const plan = planReply([slow('one', 2), slow('two', 1, { dependsOn: ['one'] })]);
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Both ran.'] }),
    });
    const thread = await h.mention('run two slow jobs');
    const card = await h.waitFor(
      'the auto-started card',
      () => messageText(h!.card(thread)).includes('▶️ Running') && h!.card(thread),
    );
    expect(messageText(card)).toContain('Low risk: started at once, without review');
    const runId = await onlyRunId(h);

    await h.press(card, 'pause');
    await h.waitFor('the paused card', () => messageText(h!.card(thread)).includes('⏸️ Paused'));
    expect(await waitForStoredEnd(h.store, runId, 'one')).toMatchObject({ status: 'succeeded' });
    expect((await h.store.listStepAttempts(runId)).map((a) => a.stepId)).toEqual(['one']);
    expect(h.buttonValue(h.card(thread), 'resume')).toBeTruthy();

    const resumedAt = new Date();
    await h.press(h.card(thread), 'resume');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Both ran.')));
    await h.steward.idle();
    expect((await h.store.getRun(runId))!.status).toBe('completed');
    // Nothing started while the run was paused: step two's stored start comes after the Resume press.
    expect((await storedStart(h.store, runId, 'two')).getTime()).toBeGreaterThanOrEqual(resumedAt.getTime());

    await h.press(h.card(thread), 'ask-first');
    expect(await h.store.getReviewPreference({ id: 'U0ADA', channel: 'slack' })).toBe('all');
    const confirm = h.slack.callsOf('chat.postEphemeral').at(-1)!;
    expect(confirm.args).toMatchObject({ user: 'U0ADA', channel: 'C0GENERAL', thread_ts: thread });
  });

  it('Stop cancels the step in flight and keeps the finished results', async () => {
    const plan = planReply([
      { id: 'quick', tool: 'everything.echo', args: { message: 'kept' } },
      slow('long', 20, { dependsOn: ['quick'] }),
    ]);
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Stopped after quick.'] }),
    });
    const thread = await h.mention('quick then long');
    await h.waitFor('the card', () => h!.card(thread));
    const runId = await onlyRunId(h);
    await h.waitFor('the long step to run', async () =>
      (await h!.store.listStepAttempts(runId)).some((a) => a.stepId === 'long' && a.status === 'running'),
    );

    await h.press(h.card(thread), 'stop');
    await h.waitFor('the report', () =>
      h!.replies(thread).find((m) => messageText(m).includes('Stopped after quick.')),
    );
    await h.steward.idle();
    expect((await h.store.getRun(runId))!.status).toBe('stopped');
    const attempts = await h.store.listStepAttempts(runId);
    expect(attempts.find((a) => a.stepId === 'quick')).toMatchObject({ status: 'succeeded' });
    expect(JSON.stringify(attempts.find((a) => a.stepId === 'quick')!.output)).toContain('kept');
    expect(attempts.find((a) => a.stepId === 'long')!.status).toBe('cancelled');
    await h.waitFor('the stopped card', () => messageText(h!.card(thread)).includes('⏹️ Stopped'));
  });
});
