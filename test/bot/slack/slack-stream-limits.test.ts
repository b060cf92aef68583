/**
 * Streams within Slack's limits: chat.startStream and chat.stopStream are Tier 2 (about 20 a minute per workspace),
 * far fewer than the posts a busy workspace makes. Many reports finishing at once must not meet a single 429 on
 * them, and each report reaches its thread exactly once: streamed where a start was free, else posted whole.
 * Real @slack/web-api client and Steward's outbox against the fake Slack with its published limits.
 */
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import type { Report } from '../../../src/engine/messages.ts';
import { SlackOutbox } from '../../../src/bot/slack/slack-outbox.ts';
import { SlackReportStream, type StreamMethods } from '../../../src/bot/slack/slack-report-stream.ts';
import { SLACK_RATE_LIMITS, startFakeSlack, type FakeSlack } from '../../fakes/fake-slack-server.ts';

let slack: FakeSlack | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

describe('slack: report streams within the Tier 2 limits', () => {
  it('25 reports at once: stream calls are paced to Tier 2, and each report is in its thread once', async () => {
    const fake = await startFakeSlack({ rateLimits: SLACK_RATE_LIMITS });
    slack = fake;
    const client = new WebClient(fake.botToken, {
      slackApiUrl: fake.apiUrl,
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
    });
    const outbox = new SlackOutbox({ log: () => undefined });
    const methods: StreamMethods = {
      startStream: (a) => client.chat.startStream(a),
      appendStream: (a) => client.chat.appendStream(a),
      stopStream: (a) => client.chat.stopStream(a),
    };
    const reports = Array.from({ length: 25 }, (_, i) => {
      const channel = `C${String(i).padStart(4, '0')}`;
      const thread = `1700000000.${String(i).padStart(6, '0')}`;
      const report: Report = { kind: 'report', runId: `r${i}`, status: 'completed', text: `Report ${i} is done.` };
      const stream = new SlackReportStream(
        methods,
        outbox,
        {
          channel,
          threadTs: thread,
          recipient: () => Promise.resolve({ user: 'U0ADA', team: 'T0000001' }),
          replace: async (ts, r) =>
            void (await outbox.call({
              method: 'chat.update',
              channel,
              send: () => client.chat.update({ channel, ts, text: r.text }),
            })),
          post: async (r) =>
            void (await outbox.call({
              method: 'chat.postMessage',
              channel,
              send: () => client.chat.postMessage({ channel, thread_ts: thread, text: r.text }),
            })),
          refused: () => undefined,
          log: () => undefined,
        },
        { intervalMs: 250, now: Date.now },
      );
      return { channel, report, stream };
    });

    await Promise.all(
      reports.map(async ({ report, stream }) => {
        stream.append(report.text.slice(0, 6));
        stream.append(report.text.slice(6));
        await stream.finish(report);
      }),
    );

    // Paced, not sent at once: unpaced, 22 of the 25 starts would be refused. One may still meet a 429 on a loaded
    // machine (Steward's bucket starts when its lane opens, Slack's when the first call arrives, so a slow first call
    // can put a later one a fraction early); it is absorbed, as the reports below show.
    expect(
      (fake.rateLimited['chat.startStream'] ?? 0) + (fake.rateLimited['chat.stopStream'] ?? 0),
    ).toBeLessThanOrEqual(1);
    for (const { channel, report } of reports) {
      const shown = [...fake.messages.values()].filter((m) => m.channel === channel);
      expect(shown.map((m) => m.text)).toEqual([report.text]);
    }
    const streamed = fake.callsOf('chat.startStream').filter((c) => c.status === 200).length;
    console.log(`slack: 25 reports at once: ${streamed} streamed, ${25 - streamed} posted whole`);
    expect(streamed).toBeGreaterThan(0);
  }, 60_000);
});
