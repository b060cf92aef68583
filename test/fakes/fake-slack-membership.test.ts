/** The fake Slack refuses posts where the bot is not a member, as Slack does (fake-slack-server.ts cites the pages). */
import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack } from './fake-slack-server.ts';

let fake: FakeSlack;
let client: WebClient;
beforeAll(async () => {
  fake = await startFakeSlack({ members: ['C0GENERAL'] });
  client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
});
afterAll(() => fake.close());

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (err: { data?: { error?: string } }) => err.data?.error,
  );
const post = (channel: string) => outcome(client.chat.postMessage({ channel, text: 'hi' }));
const ephemeral = (channel: string) => outcome(client.chat.postEphemeral({ channel, user: 'U0ADA', text: 'hi' }));

describe('fake Slack: channel membership', () => {
  it('posts only where the bot is a member: not_in_channel for a public channel, channel_not_found for a private one', async () => {
    expect(await post('C0GENERAL')).toBe('accepted');
    expect(await post('C0OPS')).toBe('not_in_channel');
    expect(await ephemeral('C0OPS')).toBe('not_in_channel');
    expect(await post('G0SECRET')).toBe('channel_not_found');
    // A DM, or a person's id (their DM with the app), always takes the post.
    expect(await post('D0ADA')).toBe('accepted');
    expect(await post('U0ADA')).toBe('accepted');

    fake.join('C0OPS');
    expect(await post('C0OPS')).toBe('accepted');
    fake.leave('C0GENERAL');
    expect(await post('C0GENERAL')).toBe('not_in_channel');
    expect(await ephemeral('C0GENERAL')).toBe('not_in_channel');
    fake.join('C0PRIVATE', true);
    expect(await post('C0PRIVATE')).toBe('accepted');
    fake.leave('C0PRIVATE');
    expect(await post('C0PRIVATE')).toBe('channel_not_found');
  });
});
