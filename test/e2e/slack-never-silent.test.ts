/**
 * Never silent: a sign within a second of a mention, and a word to the requester however a request ends early. A
 * planner that fails is test/chat/thread-spec.ts, on both platforms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { createAuditServer, planReply } from './harness.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createMention, eventEnvelope, newTs } from './slack-requests.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echo = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

/** A planner answer held back until `release` is called, so a test can look at Slack while planning is under way. */
function gatedPlanner(plan: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { release, reply: () => gate.then(() => plan) };
}

/** Posts a mention without waiting for the engine; resolves with the thread and when it was sent. */
async function mentionNow(harness: SlackHarness, text: string) {
  const ts = newTs();
  const body = eventEnvelope(createMention({ text, ts }, harness.slack.botUserId), harness.slack.botUserId);
  const sent = Date.now();
  const res = await harness.post(body, 'application/json');
  expect(res.status).toBe(200);
  return { thread: ts, sent };
}

describe('slack never silent, end to end on postgres', () => {
  it('a mention shows "is looking into it…" within a second, "is planning…" while the planner works; it is cleared once the card lands', async () => {
    const planner = gatedPlanner(echo);
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: planner.reply }),
    });
    const { thread, sent } = await mentionNow(h, 'say hi');
    const key = `C0GENERAL:${thread}`;
    await h.waitFor('the loading status', () => h!.slack.statuses.get(key) === 'is planning…', 1_000);
    const set = h.slack.callsOf('assistant.threads.setStatus')[0]!;
    expect(set.at - sent).toBeLessThan(1_000);
    await h.waitFor('the planner call', () => h!.llm.requests.length === 1);
    expect(h.slack.statuses.get(key)).toBe('is planning…');
    expect(h.replies(thread)).toEqual([]);

    planner.release();
    await h.waitFor('the plan card', () => h!.card(thread));
    await h.channel.settled();
    expect(h.slack.statuses.has(key)).toBe(false);
    const statusCalls = h.slack.callsOf('assistant.threads.setStatus').map((c) => c.args.status);
    expect(statusCalls).toEqual(['is looking into it…', 'is planning…', '']);
    // The clear went out after the card was posted, not before.
    const cardPost = h.slack.calls.findIndex((c) => c.method === 'chat.postMessage' && c.args.thread_ts === thread);
    const clear = h.slack.calls.findIndex((c) => c.method === 'assistant.threads.setStatus' && c.args.status === '');
    expect(clear).toBeGreaterThan(cardPost);
  });

  it('a request the quick path answers is only "looked into", never said to be planned', async () => {
    const audit = createAuditServer();
    try {
      h = await startSlackHarness({
        db: 'postgres',
        servers: [audit.config()],
        // The planner, asked beside the front desk, never answers: the front desk's answer drops it.
        script: byRole({ butler: ['Steward is awake.'], planner: { hang: true } }),
        settings: { quickAnswers: { maxTurns: 4, maxTokens: 12_000 } },
      });
      const thread = await h.mention('are you there?');
      await h.waitFor('the answer', () => h!.replies(thread).some((m) => messageText(m).includes('Steward is awake.')));
      await h.channel.settled();
      expect(h.llm.requests.map((r) => r.role).filter((r) => r !== 'planner')).toEqual(['butler']);
      const statusCalls = h.slack.callsOf('assistant.threads.setStatus').map((c) => c.args.status);
      expect(statusCalls).toEqual(['is looking into it…', '']);
    } finally {
      audit.remove();
    }
  });

  it('where Slack refuses the loading status, an 👀 reaction on the mention shows instead and is removed after', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [echo, echo] }),
    });
    h.slack.refuse = (method) => (method === 'assistant.threads.setStatus' ? 'missing_scope' : undefined);
    const first = await h.mention('say hi');
    await h.waitFor('the plan card', () => h!.card(first));
    const added = h.slack.callsOf('reactions.add');
    expect(added.map((c) => [c.args.channel, c.args.timestamp, c.args.name])).toEqual([['C0GENERAL', first, 'eyes']]);
    expect(h.slack.callsOf('reactions.remove')).toHaveLength(1);
    expect(h.slack.reactions.get(`C0GENERAL:${first}`)?.size ?? 0).toBe(0);
    expect(h.logs.join('\n')).toContain('the loading status is refused here (missing_scope)');

    // Refused for good in this workspace: the next request goes straight to the reaction.
    const second = await h.mention('say hi again');
    await h.waitFor('the second card', () => h!.card(second));
    expect(h.slack.callsOf('assistant.threads.setStatus')).toHaveLength(1);
    expect(h.slack.callsOf('reactions.add')).toHaveLength(2);
  });

  it('when Slack refuses the plan card, the requester is told privately in the thread, and nothing runs', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [echo] }),
    });
    h.slack.refuse = (method, args) =>
      method === 'chat.postMessage' && JSON.stringify(args.blocks ?? '').includes('"header"')
        ? 'msg_blocks_too_long'
        : undefined;
    const thread = await h.mention('say hi');
    const runId = await onlyRunId(h);
    await h.waitFor('the failed run', async () => (await h!.store.getRun(runId))?.status === 'failed');
    const told = await h.waitFor('the private word', () =>
      h!.slack.callsOf('chat.postEphemeral').find((c) => c.args.user === 'U0ADA'),
    );
    expect(told.args).toMatchObject({ channel: 'C0GENERAL', thread_ts: thread });
    expect(JSON.stringify(told.args)).toContain('so nothing was run. Please ask again.');
    expect(JSON.stringify(told.args)).toContain('msg_blocks_too_long');
    await h.channel.settled();
    expect(h.slack.statuses.size).toBe(0);
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner']);
  });
});
