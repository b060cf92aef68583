/** The fake Slack's files upload API refuses what Slack documents it refuses (fake-slack-files.ts cites the pages). */
import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack } from './fake-slack-server.ts';

let fake: FakeSlack;
let client: WebClient;
beforeAll(async () => {
  fake = await startFakeSlack();
  client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
});
afterAll(() => fake.close());

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (err: { data?: { error?: string } }) => err.data?.error,
  );

describe('fake Slack: files upload API', () => {
  it('shares an upload of the declared length into a thread with its comment', async () => {
    const res = await client.filesUploadV2({
      channel_id: 'C0000001',
      thread_ts: '1700000000.000100',
      initial_comment: 'the chart',
      file_uploads: [{ file: Buffer.from('png bytes'), filename: 'chart.png' }],
    });
    expect(res.ok).toBe(true);
    const shared = [...fake.messages.values()].find((m) => m.files?.length);
    expect(shared).toMatchObject({ channel: 'C0000001', threadTs: '1700000000.000100', text: 'the chart' });
    expect(shared?.files?.[0]?.bytes?.toString()).toBe('png bytes');
  });

  it('refuses a missing filename, a zero length, thread_ts without one channel, unknown or unfinished files', async () => {
    expect(await refusal(client.files.getUploadURLExternal({ filename: '', length: 3 }))).toBe('invalid_arguments');
    expect(await refusal(client.files.getUploadURLExternal({ filename: 'a.png', length: 0 }))).toBe('missing_argument');
    const { file_id } = await client.files.getUploadURLExternal({ filename: 'a.png', length: 3 });
    const complete = (args: Record<string, unknown>) =>
      refusal(client.files.completeUploadExternal({ files: [{ id: file_id! }], ...args } as never));
    // Never uploaded: Slack's job would fail it.
    expect(await complete({ channel_id: 'C0000001' })).toBe('file_upload_incomplete');
    expect(await complete({ thread_ts: '1700000000.000100' })).toBe('invalid_arguments');
    expect(
      await refusal(client.files.completeUploadExternal({ files: [{ id: 'FNOSUCHFILE' }], channel_id: 'C0000001' })),
    ).toBe('file_not_found');
  });

  it('refuses a token without files:write, naming the scope it needs', async () => {
    fake.scopes = ['chat:write'];
    try {
      const err = await client.files.getUploadURLExternal({ filename: 'a.png', length: 3 }).catch((e: unknown) => e);
      expect((err as { data?: unknown }).data).toMatchObject({
        ok: false,
        error: 'missing_scope',
        needed: 'files:write',
      });
    } finally {
      fake.scopes = ['chat:write', 'files:write'];
    }
  });
});
