import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { Priority, SlackOutbox } from '../../../src/bot/slack/slack-outbox.ts';
import { classifyFailure, LaneClock, laneKey, paceOf } from '../../../src/bot/slack/slack-pacing.ts';
import { waitUntil } from '../../helpers/wait.ts';

describe('slack pacing (pure)', () => {
  it('posts go a burst of 3, then one a second per channel; a 429 holds the lane until its Retry-After, then one goes', () => {
    const lane = new LaneClock(paceOf('chat.postMessage'), 0);
    for (let i = 0; i < 3; i++) {
      expect(lane.waitMs(0)).toBe(0);
      lane.take(0);
    }
    // One a second, with a 5 % margin for latency.
    expect(lane.waitMs(0)).toBe(1_053);
    expect(lane.waitMs(1_053)).toBe(0);
    lane.take(1_053);
    lane.refused(1_100, 5_000);
    expect(lane.waitMs(1_200)).toBe(4_900);
    expect(lane.waitMs(6_100)).toBe(0);
    lane.take(6_100);
    expect(lane.waitMs(6_100)).toBe(1_053);
    expect(laneKey('chat.postMessage', 'C1')).not.toBe(laneKey('chat.postMessage', 'C2'));
    expect(laneKey('chat.update', 'C1')).toBe(laneKey('chat.update', 'C2'));
  });

  it("reads the Web API's errors: Retry-After, a refusal for good, or worth another try", () => {
    expect(classifyFailure(new webApi.WebAPIRateLimitedError(7))).toEqual({ kind: 'rateLimited', retryAfterMs: 7_000 });
    const platform = (error: string) => new webApi.WebAPIPlatformError({ ok: false, error });
    for (const code of ['invalid_blocks', 'msg_too_long', 'channel_not_found', 'not_in_channel'])
      expect(classifyFailure(platform(code))).toEqual({ kind: 'permanent', reason: code });
    expect(classifyFailure(platform('internal_error')).kind).toBe('transient');
    expect(classifyFailure(new webApi.WebAPIRequestError(new Error('ECONNRESET'))).kind).toBe('transient');
    expect(classifyFailure(new webApi.WebAPIHTTPError(503, 'Service Unavailable', {}, '')).kind).toBe('transient');
    expect(classifyFailure(new webApi.WebAPIHTTPError(400, 'Bad Request', {}, '')).kind).toBe('permanent');
  });
});

describe('slack outbox', () => {
  it('after a 429, the lane sends final states, then status changes, then progress (the refused one first), and a waiting update can become final', async () => {
    const told: string[] = [];
    const outbox = new SlackOutbox({ log: () => undefined, onRateLimited: (method) => told.push(method) });
    const sent: string[] = [];
    let refuse = true;
    const call = (name: string, priority: () => number) =>
      outbox.call({
        // Not paced (only its 429 holds it), so the order is the lane's choice alone.
        method: 'views.publish',
        channel: 'C1',
        priority,
        send: async () => {
          if (refuse) {
            refuse = false;
            throw new webApi.WebAPIRateLimitedError(0.3);
          }
          sent.push(name);
        },
      });
    const first = call('first', () => Priority.progress);
    await waitUntil('the 429', () => !refuse);
    let bFinal = false;
    const rest = [
      call('a', () => Priority.progress),
      call('b', () => (bFinal ? Priority.finalState : Priority.progress)),
      call('c', () => Priority.finalState),
      call('d', () => Priority.statusChange),
    ];
    bFinal = true;
    await Promise.all([first, ...rest]);
    expect(sent).toEqual(['b', 'c', 'd', 'first', 'a']);
    expect(outbox.rateLimited).toEqual({ 'views.publish': 1 });
    // What `/metrics` counts as steward_outbox_rate_limited_total{platform="slack",method="views.publish"}.
    expect(told).toEqual(['views.publish']);
  });

  it('a refusal for good is not tried again and is logged; a post past its longest wait is given up, logged', async () => {
    const logs: string[] = [];
    const outbox = new SlackOutbox({ log: (level, m) => logs.push(`${level} ${m}`) });
    let tries = 0;
    const refused = outbox.call({
      method: 'chat.postMessage',
      channel: 'C1',
      transientRetries: 3,
      send: () => (
        (tries += 1),
        Promise.reject(new webApi.WebAPIPlatformError({ ok: false, error: 'invalid_blocks' }))
      ),
    });
    await expect(refused).rejects.toThrow('invalid_blocks');
    expect(tries).toBe(1);
    expect(logs).toEqual(['error slack: Slack refused chat.postMessage in C1: invalid_blocks (not retried)']);
    const held = outbox.call({
      method: 'chat.postMessage',
      channel: 'C2',
      maxWaitMs: 200,
      send: () => Promise.reject(new webApi.WebAPIRateLimitedError(60)),
    });
    await expect(held).rejects.toThrow('was given up');
    expect(logs.at(-1)).toMatch(/^error slack: chat\.postMessage in C2 waited 0 s in its lane \(rate limited\)/);
    outbox.close();
  });

  it('a network error is tried again after a backoff when the call allows it, and only then', async () => {
    const outbox = new SlackOutbox({ log: () => undefined });
    const at: number[] = [];
    const flaky = (retries: number) =>
      outbox.call({
        method: 'chat.update',
        channel: 'C1',
        transientRetries: retries,
        send: async () => {
          at.push(Date.now());
          if (at.length % 2 === 1) throw new webApi.WebAPIRequestError(new Error('ECONNRESET'));
          return 'ok';
        },
      });
    await expect(flaky(1)).resolves.toBe('ok');
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(1_000 - 20);
    await expect(flaky(0)).rejects.toThrow('ECONNRESET');
    expect(at).toHaveLength(3);
    outbox.close();
  });
});
