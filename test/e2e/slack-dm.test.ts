/** Direct messages with Steward (`message.im`): requests without a mention, answered in the DM. */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { messageText, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createDirectMessage, eventEnvelope, newTs } from './slack-requests.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const say = (message: string, summary: string) =>
  planReply([{ id: 'say', tool: 'everything.echo', args: { message } }], { summary });

/** Sends a DM event to the app and waits until the engine is done with it. */
async function dm(harness: SlackHarness, o: Parameters<typeof createDirectMessage>[0] & { botId?: string }) {
  const event = { ...createDirectMessage(o), ...(o.botId ? { bot_id: o.botId } : {}) };
  const res = await harness.post(eventEnvelope(event, harness.slack.botUserId), 'application/json');
  expect(res.status).toBe(200);
  await harness.channel.settled();
}

describe('slack direct messages, end to end on postgres', () => {
  it('a DM without a mention gets its plan card in the DM thread; a reply there amends the plan', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [say('hi', 'Say hi'), say('hi and bye', 'Say hi and bye')], classifier: ['amend'] }),
    });
    const ts = newTs();
    await dm(h, { text: 'say hi', ts });
    const card = h.card(ts);
    expect(card.channel).toBe('D0ADA');
    expect(messageText(card)).toContain('Say hi');
    expect(h.slack.callsOf('assistant.threads.setStatus').map((c) => [c.args.channel_id, c.args.status])).toEqual([
      ['D0ADA', 'is looking into it…'],
      ['D0ADA', 'is planning…'],
      ['D0ADA', ''],
    ]);

    await dm(h, { text: 'also say bye', threadTs: ts });
    await h.waitFor('revision 1 on the card', () => messageText(h!.card(ts)).includes('revision 1'));
    expect(h.card(ts).ts).toBe(card.ts);
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'classifier', 'planner']);
    expect(await h.db.db.selectFrom('runs').select('conversation_key').execute()).toEqual([
      { conversation_key: `D0ADA:${ts}` },
    ]);
  });

  it('a question by DM is answered in its thread, and a second DM is a new request, not a reply', async () => {
    const answer = (text: string) =>
      JSON.stringify({ summary: text, rationale: 'r', needsTools: false, answer: text, risks: [], steps: [] });
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [answer('Four.'), answer('Six.')] }),
    });
    const first = newTs();
    await dm(h, { text: 'what is 2 + 2?', ts: first });
    const second = newTs();
    await dm(h, { text: 'and 3 + 3?', ts: second });
    expect(h.replies(first)).toHaveLength(1);
    expect(messageText(h.replies(first)[0]!)).toContain('Four.');
    expect(h.replies(second)).toHaveLength(1);
    expect(messageText(h.replies(second)[0]!)).toContain('Six.');
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toHaveLength(2);
  });

  it("Steward's own DMs, other bots, and edits are ignored", async () => {
    h = await startSlackHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    await dm(h, { text: 'I am Steward', user: h.slack.botUserId });
    await dm(h, { text: 'beep', user: 'U0OTHERBOT', botId: 'B0OTHER' });
    const edit = { ...createDirectMessage({ text: 'edited' }), subtype: 'message_changed' };
    expect((await h.post(eventEnvelope(edit, h.slack.botUserId), 'application/json')).status).toBe(200);
    await h.channel.settled();
    expect(h.llm.requests).toEqual([]);
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toEqual([]);
    expect(h.slack.callsOf('assistant.threads.setStatus')).toEqual([]);
  });
});
