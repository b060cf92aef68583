/**
 * Guards only Slack has: a press naming no run, request signatures, event retries and message subtypes. Who may
 * decide and double presses are test/chat/guards-spec.ts, on both platforms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { allTexts } from '../bot/slack/fixtures.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { reviewed } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createMention, createMessage, eventEnvelope } from './slack-requests.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echoPlan = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

describe('slack guards, end to end on postgres', () => {
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
});
