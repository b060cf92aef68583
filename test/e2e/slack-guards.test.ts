import { afterEach, describe, expect, it } from 'vitest';
import { allTexts } from '../bot/slack/fixtures.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createMention, createMessage, eventEnvelope } from './slack-requests.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const reviewed = () => everythingStdioConfig({ overrides: { risk: 'medium' } });
const echoPlan = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

describe('slack guards, end to end on postgres', () => {
  it("a stranger's Approve or Amend is refused privately and changes nothing; an approver may decide", async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [echoPlan], synthesizer: ['Said hi.'] }),
    });
    const thread = await h.mention('say hi');
    const card = h.card(thread);
    const runId = await onlyRunId(h);
    const before = h.slack.calls.length;

    expect(await h.press(card, 'approve', { user: 'U0BOB' })).toBe(200);
    expect(await h.press(card, 'amend', { user: 'U0BOB' })).toBe(200);
    const after = h.slack.calls.slice(before);
    expect(after.map((c) => c.method)).toEqual(['chat.postEphemeral', 'chat.postEphemeral']);
    for (const c of after) {
      expect(c.args).toMatchObject({ user: 'U0BOB', channel: 'C0GENERAL', thread_ts: thread });
      expect(allTexts(c.args.blocks).join(' ')).toMatch(/Only <@U0ADA> or an approver can (approve|amend) this run/);
    }
    expect(h.slack.callsOf('views.open')).toEqual([]);
    expect((await h.store.getRun(runId))!.status).toBe('awaiting_review');
    expect((await h.store.listDecisions(runId)).map((d) => [d.actor.id, d.action, d.accepted])).toEqual([
      ['U0BOB', 'approve', false],
      ['U0BOB', 'amend', false],
    ]);

    await h.press(card, 'approve', { user: 'U0BOSS' });
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said hi.')));
    await h.steward.idle();
    expect((await h.store.getRun(runId))!.status).toBe('completed');
  });

  it('a double click, or two people pressing at once, changes state once', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [echoPlan], synthesizer: ['Said hi.'] }),
    });
    const thread = await h.mention('say hi');
    const card = h.card(thread);
    const runId = await onlyRunId(h);
    const value = h.buttonValue(card, 'approve');
    const statuses = await Promise.all([
      h.press(card, 'approve', { value }),
      h.press(card, 'approve', { value }),
      h.press(card, 'approve', { value, user: 'U0BOSS' }),
    ]);
    expect(statuses).toEqual([200, 200, 200]);
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said hi.')));
    await h.steward.idle();
    const decisions = await h.store.listDecisions(runId);
    expect(decisions.filter((d) => d.accepted)).toHaveLength(1);
    expect(decisions.filter((d) => !d.accepted)).toHaveLength(2);
    expect((await h.store.listStepAttempts(runId)).map((a) => a.stepId)).toEqual(['say']);
  });

  it('a press naming a run that does not exist is answered privately where it was pressed', async () => {
    h = await startSlackHarness({ db: 'postgres', servers: [reviewed()], script: byRole({ planner: [echoPlan] }) });
    const thread = await h.mention('say hi');
    const card = h.card(thread);
    expect(
      await h.press(card, 'approve', {
        user: 'U0BOB',
        value: '{"runId":"00000000-0000-4000-8000-000000000000","revision":0}',
      }),
    ).toBe(200);
    const notice = h.slack.callsOf('chat.postEphemeral').at(-1)!;
    expect(notice.args).toMatchObject({ user: 'U0BOB', channel: 'C0GENERAL', thread_ts: thread });
    expect(allTexts(notice.args.blocks).join(' ')).toContain('That run does not exist.');
  });

  it('requests with a bad or stale signature are refused with 401 and reach nothing', async () => {
    h = await startSlackHarness({ db: 'postgres', servers: [reviewed()], script: byRole({}) });
    const body = eventEnvelope(createMention({ text: 'say hi' }, h.slack.botUserId), h.slack.botUserId);
    expect((await h.post(body, 'application/json', { secret: 'not-the-secret' })).status).toBe(401);
    expect((await h.post(body, 'application/json', { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 })).status).toBe(
      401,
    );
    expect((await h.post(body.replace('say hi', 'say bye'), 'application/json')).status).toBe(200);
    await h.channel.settled();
    // Only the correctly signed request reached the engine (its planner call fails: nothing is scripted).
    expect(h.llm.requests).toHaveLength(1);
    expect(h.llm.requests[0]!.lastUserText).toContain('say bye');
    expect(await h.db.db.selectFrom('runs').select('request').execute()).toEqual([{ request: 'say bye' }]);
  });

  it('a mention Slack delivers twice (same event_id, a retry) starts one run', async () => {
    h = await startSlackHarness({ db: 'postgres', servers: [reviewed()], script: byRole({ planner: [echoPlan] }) });
    const body = eventEnvelope(createMention({ text: 'say hi' }, h.slack.botUserId), h.slack.botUserId);
    expect((await h.post(body, 'application/json')).status).toBe(200);
    expect((await h.post(body, 'application/json')).status).toBe(200);
    await h.channel.settled();
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toHaveLength(1);
  });

  it('plain channel chatter, edits and bot messages never reach the engine', async () => {
    h = await startSlackHarness({ db: 'postgres', servers: [reviewed()], script: byRole({}) });
    for (const event of [
      createMessage({ text: 'lunch?' }),
      createMessage({ text: 'x', threadTs: '1700000000.000001' }),
      createMessage({ text: 'edited', subtype: 'message_changed' }),
      createMessage({ text: 'beep', botId: 'B0OTHER', threadTs: '1700000000.000001' }),
    ]) {
      expect((await h.post(eventEnvelope(event, h.slack.botUserId), 'application/json')).status).toBe(200);
    }
    await h.channel.settled();
    expect(h.llm.requests).toEqual([]);
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toEqual([]);
  });

  it('a 60-step plan gets a card Slack accepts, showing every step, through approval to the end', async () => {
    const steps = Array.from({ length: 60 }, (_, i) => ({
      id: `echo_step_number_${i + 1}`,
      tool: 'everything.echo',
      args: { message: `message ${i + 1} ${'x'.repeat(200)}` },
      description: `echo number ${i + 1}, with a long description ${'y'.repeat(200)}`,
    }));
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      settings: { maxParallel: 8 },
      script: byRole({ planner: [planReply(steps)], synthesizer: ['All sixty echoed.'] }),
    });
    const thread = await h.mention('echo sixty times');
    const card = h.card(thread);
    expect(messageText(card)).toContain('*60.*');
    await h.press(card, 'approve');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('All sixty echoed.')));
    await h.steward.idle();
    await h.waitFor('the final card', () => messageText(h!.card(thread)).includes('Step 60/60'));
    expect(h.slack.calls.filter((c) => c.response.ok !== true)).toEqual([]);
  });
});
