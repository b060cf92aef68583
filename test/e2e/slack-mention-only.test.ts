/**
 * Mention-only mode (slack/manifest-mention-only.yml): Slack delivers no plain channel messages, only app_mention
 * events, so a reply in a run's thread reaches Steward when it mentions it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { messageText, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createMention, eventEnvelope } from './slack-requests.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('slack in mention-only mode, end to end on postgres', () => {
  it('a reply that mentions Steward in the thread amends the plan, with the planning sign meanwhile', async () => {
    const first = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });
    const second = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi and bye' } }], {
      summary: 'Say hi and bye',
    });
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [first, second], classifier: ['amend'] }),
    });
    const thread = await h.mention('say hi');
    const card = h.card(thread);

    const reply = createMention({ text: 'also say bye', threadTs: thread }, h.slack.botUserId);
    expect((await h.post(eventEnvelope(reply, h.slack.botUserId), 'application/json')).status).toBe(200);
    await h.channel.settled();
    await h.waitFor('revision 1 on the card', () => messageText(h!.card(thread)).includes('revision 1'));
    expect(h.card(thread).ts).toBe(card.ts);
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'classifier', 'planner']);
    expect(h.llm.requests[2]!.lastUserText).toContain('also say bye');
    // Both requests showed the sign in the run's thread, and neither left it up.
    const statuses = h.slack.callsOf('assistant.threads.setStatus').map((c) => [c.args.thread_ts, c.args.status]);
    expect(statuses).toEqual([
      [thread, 'is looking into it…'],
      [thread, 'is planning…'],
      [thread, ''],
      // A reply is read before anything is planned: it is only looked into.
      [thread, 'is looking into it…'],
      [thread, ''],
    ]);
  });
});
