/**
 * The fake Slack limits every method Steward calls by Slack's published tier, by default (fake-slack-server.ts cites
 * the pages): a burst a tier does not allow is answered 429 with Retry-After, as Slack answers it, and nothing changes.
 */
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { SLACK_RATE_LIMITS, startFakeSlack, type FakeSlack } from './fake-slack-server.ts';

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** How many of `count` calls made at once the fake answered with 429. */
async function refusedOf(f: FakeSlack, count: number, call: (client: WebClient, i: number) => Promise<unknown>) {
  const client = new WebClient(f.botToken, { slackApiUrl: f.apiUrl, retryConfig: { retries: 0 } });
  await Promise.allSettled(Array.from({ length: count }, (_, i) => call(client, i)));
  return f.calls.filter((c) => c.status === 429).length;
}

describe('fake Slack: per-method tiers on by default', () => {
  it('every method Steward calls has a limit', () => {
    for (const method of [
      'chat.postMessage',
      'chat.update',
      'chat.postEphemeral',
      'chat.startStream',
      'chat.appendStream',
      'chat.stopStream',
      'views.open',
      'views.update',
      'views.publish',
      'reactions.add',
      'reactions.remove',
      'conversations.replies',
      'assistant.threads.setStatus',
      'assistant.threads.setSuggestedPrompts',
      'files.getUploadURLExternal',
      'files.completeUploadExternal',
    ])
      expect(SLACK_RATE_LIMITS[method], method).toBeDefined();
  });

  it('a burst past a Tier 2 method is refused with 429 and Retry-After; with no limits given, none is', async () => {
    fake = await startFakeSlack();
    const posted = await new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl }).chat.postMessage({
      channel: 'C0GENERAL',
      text: 'hi',
    });
    const remove = (client: WebClient) =>
      client.reactions.remove({ channel: 'C0GENERAL', timestamp: posted.ts!, name: 'hourglass' });
    const refused = await refusedOf(fake, 10, remove);
    // Tier 2 (20 a minute) with a burst of 3: the rest of an instant burst of 10 waits.
    expect(refused).toBe(7);
    expect(fake.calls.find((c) => c.status === 429)?.retryAfter).toBeGreaterThanOrEqual(1);
    await fake.close();

    fake = await startFakeSlack({ rateLimits: {} });
    const again = await new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl }).chat.postMessage({
      channel: 'C0GENERAL',
      text: 'hi',
    });
    expect(
      await refusedOf(fake, 10, (client) =>
        client.reactions.remove({ channel: 'C0GENERAL', timestamp: again.ts!, name: 'hourglass' }),
      ),
    ).toBe(0);
  });
});
