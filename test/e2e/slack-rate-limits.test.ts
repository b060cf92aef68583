/**
 * Slack output under rate limits, through the real SlackChannel (Bolt's WebClient) and the fake Slack over HTTP:
 * a 429 holds only its own lane until Retry-After, a card always ends in its final state, reports and posts in
 * other channels never wait behind a throttled card, and a busy channel's plan cards are all posted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SlackChannel } from '../../src/bot/slack/slack-channel.ts';
import type { InboundHandler } from '../../src/engine/channel.ts';
import type { OutboundMessage } from '../../src/engine/messages.ts';
import { allTexts, createPlanCard, createProgress } from '../bot/slack/fixtures.ts';
import { SLACK_RATE_LIMITS, startFakeSlack, type FakeSlack, type SlackCall } from '../fakes/fake-slack-server.ts';
import { waitUntil } from '../helpers/wait.ts';

// No Slack payload reaches these tests: the engine's side is never called.
const noInbound = new Proxy({} as InboundHandler, {
  get: () => () => Promise.reject(new Error('no inbound expected')),
});

let slack: FakeSlack | undefined;
let channel: SlackChannel | undefined;
const logs: string[] = [];

afterEach(async () => {
  await channel?.stop();
  await slack?.close();
  channel = slack = undefined;
  logs.length = 0;
});

async function start(o: Parameters<typeof startFakeSlack>[0] = {}, flushGraceMs?: number) {
  slack = await startFakeSlack(o);
  channel = new SlackChannel({
    botToken: slack.botToken,
    signingSecret: 'test-signing-secret-0123456789',
    port: 0,
    apiUrl: slack.apiUrl,
    log: (level, message) => logs.push(`${level} ${message}`),
    ...(flushGraceMs === undefined ? {} : { flushGraceMs }),
  });
  await channel.start(noInbound);
  return { slack, channel };
}

const conversation = (ch: string, thread: string) => ({ channel: 'slack', key: `${ch}:${thread}` });
const runIdOf = (i: number) => `6f1c1a52-93a4-4e5e-9b53-${String(i).padStart(12, '0')}`;
const running = (i: number) => createPlanCard({ runId: runIdOf(i), needsReview: false, actions: ['pause', 'stop'] });
const report = (i: number, text = `Report ${i}`): OutboundMessage => ({
  kind: 'report',
  runId: runIdOf(i),
  status: 'completed',
  text,
});
const textOf = (c: SlackCall) => allTexts(c.args.blocks).join('\n');
const cardIn = (s: FakeSlack, ch: string) =>
  [...s.messages.values()].filter((m) => m.channel === ch && m.blocks[0]?.type === 'header');
const cardText = (s: FakeSlack, ch: string, i = 0) => allTexts(cardIn(s, ch)[i]?.blocks).join('\n');
const refusal = (s: FakeSlack, method: string) =>
  waitUntil(`a 429 on ${method}`, () => s.callsOf(method).find((x) => x.status === 429));

describe('slack output under rate limits', () => {
  it('a 429 storm on chat.update still ends every card in its final state, each retry after its Retry-After', async () => {
    const { slack, channel } = await start({
      rateLimits: { 'chat.update': { perMinute: 240, burst: 2, per: 'workspace' } },
    });
    const n = 6;
    for (let i = 0; i < n; i++) await channel.send(conversation(`C${i}`, '1.0'), running(i));
    slack.throttle({ method: 'chat.update', times: 4, retryAfterS: 1 });
    for (let i = 0; i < n; i++) {
      const c = conversation(`C${i}`, '1.0');
      await channel.send(c, { ...createProgress({ status: 'succeeded', finished: 1 }), runId: runIdOf(i) });
      await channel.send(c, report(i));
    }
    await waitUntil('every card to show its final state', () =>
      Array.from({ length: n }, (_, i) => cardText(slack, `C${i}`)).every((t) => t.includes('✅ Completed')),
    );
    const updates = slack.callsOf('chat.update');
    const refused = updates.filter((c) => c.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(4);
    // The lane waited out each Retry-After: no update reached Slack before the last refusal's time was up.
    for (const r of refused) {
      const next = updates.find((c) => c.at > r.at && c.status === 200);
      if (next) expect(next.at - r.at).toBeGreaterThanOrEqual(r.retryAfter! * 1000 - 50);
    }
    expect(logs.filter((l) => l.includes('card update failed'))).toEqual([]);
  });

  it('a report is posted while its card is throttled; the card then gets its final state in one update', async () => {
    const { slack, channel } = await start();
    const c = conversation('C1', '1.0');
    await channel.send(c, running(1));
    slack.throttle({ method: 'chat.update', times: 1, retryAfterS: 3 });
    await channel.send(c, { ...createProgress({ status: 'running' }), runId: runIdOf(1) });
    const refusedAt = (await refusal(slack, 'chat.update')).at;
    await channel.send(c, report(1, 'All done.'));
    const posted = slack.callsOf('chat.postMessage').find((x) => textOf(x).includes('All done.'));
    expect(posted!.at - refusedAt).toBeLessThan(1_000);
    expect(cardText(slack, 'C1')).not.toContain('✅ Completed');
    await waitUntil('the final card', () => cardText(slack, 'C1').includes('✅ Completed'));
    const updates = slack.callsOf('chat.update');
    // Coalesced: the refused progress is not sent on its own; the retry carries the latest (final) state.
    expect(updates.map((u) => u.status)).toEqual([429, 200]);
    expect(updates[1]!.at - refusedAt).toBeGreaterThanOrEqual(3_000 - 50);
    expect(textOf(updates[1]!)).toContain('✅ Completed');
  });

  it("a 429 on one channel's posts delays neither a post in another channel nor that channel's other calls", async () => {
    const { slack, channel } = await start();
    const busy = conversation('CBUSY', '1.0');
    await channel.send(busy, running(1));
    slack.throttle({ method: 'chat.postMessage', channel: 'CBUSY', times: 1, retryAfterS: 5 });
    const held = channel.send(busy, { kind: 'answer', text: 'busy answer' });
    const refusedAt = (await refusal(slack, 'chat.postMessage')).at;
    await channel.send(conversation('CQUIET', '2.0'), { kind: 'answer', text: 'quiet answer' });
    await channel.send(busy, {
      kind: 'notice',
      level: 'info',
      text: 'just for Ada',
      to: { id: 'U0ADA', channel: 'slack' },
    });
    await channel.send(busy, { kind: 'runStatus', runId: runIdOf(1), status: 'paused', actions: ['resume', 'stop'] });
    await waitUntil('the paused card', () => cardText(slack, 'CBUSY').includes('⏸️ Paused'));
    const quiet = slack.callsOf('chat.postMessage').find((x) => textOf(x).includes('quiet answer'))!;
    const ephemeral = slack.callsOf('chat.postEphemeral')[0]!;
    const update = slack.callsOf('chat.update').find((x) => x.status === 200)!;
    for (const call of [quiet, ephemeral]) expect(call.at - refusedAt).toBeLessThan(1_000);
    // The card keeps only its own pace (one update a second), not the posts' Retry-After.
    expect(update.at - refusedAt).toBeLessThan(2_000);
    await held;
    const late = slack.callsOf('chat.postMessage').find((x) => x.status === 200 && textOf(x).includes('busy answer'));
    expect(late!.at - refusedAt).toBeGreaterThanOrEqual(5_000 - 50);
  });

  it('many plan cards in one busy channel are all posted, paced, and a report goes before the cards still waiting', async () => {
    const { slack, channel } = await start({ rateLimits: SLACK_RATE_LIMITS });
    const n = 8;
    const cards = Array.from({ length: n }, (_, i) => channel.send(conversation('CBUSY', `${i + 1}.0`), running(i)));
    await cards[0];
    await channel.send(conversation('CBUSY', '1.0'), report(0, 'First run done.'));
    await Promise.all(cards);
    expect(cardIn(slack, 'CBUSY')).toHaveLength(n);
    const posts = slack.callsOf('chat.postMessage').filter((x) => x.status === 200);
    const reportAt = posts.findIndex((x) => textOf(x).includes('First run done.'));
    expect(reportAt).toBeLessThan(posts.length - 1);
    // Paced at Slack's 1 a second per channel (after a burst of 3): Slack refuses one at most (the two clocks
    // differ by a request's latency), and that one went again after its Retry-After.
    expect(slack.rateLimited['chat.postMessage'] ?? 0).toBeLessThanOrEqual(1);
    expect(posts.at(-1)!.at - posts[0]!.at).toBeGreaterThanOrEqual((n + 1 - 3) * 1000 - 200);
  });

  it('stop sends a pending final state, and gives up within its grace when Slack keeps refusing', async () => {
    const first = await start({}, 5_000);
    await first.channel.send(conversation('C1', '1.0'), running(1));
    first.slack.throttle({ method: 'chat.update', times: 1, retryAfterS: 1 });
    await first.channel.send(conversation('C1', '1.0'), report(1));
    await first.channel.stop();
    expect(cardText(first.slack, 'C1')).toContain('✅ Completed');
    await first.slack.close();

    const second = await start({}, 1_000);
    await second.channel.send(conversation('C2', '1.0'), running(2));
    second.slack.throttle({ method: 'chat.update', times: 100, retryAfterS: 30 });
    await second.channel.send(conversation('C2', '1.0'), report(2));
    await refusal(second.slack, 'chat.update');
    const started = Date.now();
    await second.channel.stop();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(logs.some((l) => l.includes('dropped'))).toBe(true);
    expect(logs.some((l) => l.includes('card update failed (its final state is not shown)'))).toBe(true);
  });
});
