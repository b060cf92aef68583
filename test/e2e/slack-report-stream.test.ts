import { afterEach, describe, expect, it } from 'vitest';
import { WRITING_HEADING } from '../../src/bot/slack/slack-report-stream.ts';
import { renderReport } from '../../src/bot/slack/slack-thread-render.ts';
import { byRole, type FakeReply } from '../fakes/fake-llm-server.ts';
import type { FakeMessage } from '../fakes/fake-slack-server.ts';
import { markdownLinks } from '../fakes/markdown-links.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from './harness.ts';
import { startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const PLAN = planReply([{ id: 'sum', tool: 'everything.get-sum', args: { a: 2, b: 3 } }]);
const CHUNKS = ['The sum ', 'of 2 and 3 ', 'is 5 <!channel>, ', 'as the tool ', 'reported.'];
const REPORT = CHUNKS.join('');

async function start(
  synthesizer: FakeReply,
  slackNow?: () => number,
): Promise<{ harness: SlackHarness; thread: string }> {
  const harness = await startSlackHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({ planner: [PLAN], synthesizer }),
    slackNow,
  });
  h = harness;
  return { harness, thread: await harness.mention('what is 2 + 3?') };
}

/** The report's message in the thread: the streamed one, or a reply posted whole. */
function reportMessage(harness: SlackHarness, thread: string): FakeMessage | undefined {
  return harness.replies(thread).find((m) => m.stream !== undefined || m.text.includes('Report'));
}

async function storedReport(harness: SlackHarness): Promise<string | null> {
  const run = await onlyRun(harness);
  const row = await harness.db.db.selectFrom('runs').select('report').where('id', '=', run.id).executeTakeFirst();
  return row?.report ?? null;
}

/** The report message once it shows the stored report exactly as a plain report reply renders it. */
async function finalReport(harness: SlackHarness, thread: string): Promise<FakeMessage> {
  await harness.steward.idle();
  const run = await onlyRun(harness);
  const text = (await storedReport(harness))!;
  const expected = renderReport({ kind: 'report', runId: run.id, status: run.status, text });
  return harness.waitFor('the report as rendered whole', () => {
    const m = reportMessage(harness, thread);
    return m && JSON.stringify(m.blocks) === JSON.stringify(expected.blocks) && m.text === expected.text && m;
  });
}

describe('slack: the report streams into the thread as the model writes it', () => {
  it('shows the first words before the model has finished, then becomes the whole report, once', async () => {
    const { harness, thread } = await start({ text: REPORT, chunks: CHUNKS, chunkDelayMs: 300 });

    const streaming = await harness.waitFor('the first words', () => {
      const m = reportMessage(harness, thread);
      return m?.stream?.open && m.stream.markdown.includes('The sum ') && m;
    });
    // People read the first words while the model is still writing the rest.
    expect(harness.llm.written.length).toBeLessThan(CHUNKS.length);
    expect(streaming.stream?.markdown.startsWith(WRITING_HEADING)).toBe(true);

    const final = await finalReport(harness, thread);
    expect(final.ts).toBe(streaming.ts);
    expect(final.stream).toMatchObject({
      markdown: `${WRITING_HEADING}${REPORT.replace('<', '&lt;').replace('>', '&gt;')}`,
      open: false,
    });
    expect(await storedReport(harness)).toBe(REPORT);
    // One report: streamed, not also posted; and no mention was ever sent live.
    expect(harness.replies(thread).filter((m) => m.text.includes('Report') || m.stream)).toHaveLength(1);
    for (const c of harness.slack.calls) expect(JSON.stringify(c.args)).not.toContain('<!channel>');
    const [started] = harness.slack.callsOf('chat.startStream');
    expect(started?.args).toMatchObject({
      thread_ts: thread,
      recipient_user_id: 'U0ADA',
      recipient_team_id: 'T0000001',
    });

    const delay = started!.tick! - harness.llm.written[0]!.at;
    // A figure, not a bound: timing targets live in the bench (a test under CI load cannot hold one).
    console.log(`slack: first token to chat.startStream answered: ${delay.toFixed(1)} ms`);
  });

  it('a model-written link stays text while it streams, showing its address, as the final report shows it', async () => {
    // Links cut across pieces as a model streams them: a hidden link, an image, and a reference link.
    const chunks = [
      'Log in at [bank',
      '.com](https://evil.example/login) ',
      '![logo](https://evil.example/p.png',
      ') or [here]',
      '\n\n[here]: https://evil.example/r\n',
    ];
    const { harness, thread } = await start({ text: chunks.join(''), chunks, chunkDelayMs: 200 });

    const final = await finalReport(harness, thread);
    // What the thread showed after each streaming call Slack accepted, up to the whole streamed text.
    const calls = harness.slack.calls.filter((c) => c.method.endsWith('Stream') && c.response.ok === true);
    expect(calls.length).toBeGreaterThan(2);
    let shown = '';
    for (const c of calls) {
      shown += typeof c.args.markdown_text === 'string' ? c.args.markdown_text : '';
      expect(markdownLinks(shown)).toEqual([]);
    }
    expect(shown).toBe(final.stream!.markdown);
    // Every address stays in sight as text.
    for (const address of ['https://evil.example/login', 'https://evil.example/p.png', 'https://evil.example/r'])
      expect(shown).toContain(address);
    expect(markdownLinks(`[bank.com](https://evil.example/login)`)).toHaveLength(1);

    expect(markdownLinks(final.stream!.markdown)).toEqual([]);
    expect(await storedReport(harness)).toBe(chunks.join('').trim());
  });

  it('a stream cut midway still ends with one complete report: the plain one, saying why', async () => {
    const { harness, thread } = await start({ text: REPORT, chunks: CHUNKS, cut: { after: 2, how: 'drop' } });
    const final = await finalReport(harness, thread);
    expect(final.text).toContain('The report writer failed');
    expect(await storedReport(harness)).toMatch(/stopped sending before its answer ended/);
    expect(harness.replies(thread).filter((m) => m.text.includes('Report') || m.stream)).toHaveLength(1);
  });

  it('a report written for longer than Slack lets a stream live is finished in place: one message, the whole report', async () => {
    // Slack ends a stream by itself after about five minutes; the model here takes "six" (Slack's clock is moved on
    // while it writes), so the later appends are refused and the streamed message must become the report in place.
    let slackLater = 0;
    let shown: FakeMessage | undefined;
    const { harness, thread } = await start(
      {
        text: REPORT,
        chunks: CHUNKS,
        chunkDelayMs: 300,
        beforeChunk: async (i) => {
          if (i !== 3) return;
          // Moved once the stream has started and taken an append, so the next append is the one refused.
          await h!.waitFor('an append taken', () => h!.slack.callsOf('chat.appendStream').some((c) => c.response.ok));
          shown = reportMessage(h!, thread);
          slackLater = 6 * 60_000;
        },
      },
      () => Date.now() + slackLater,
    );
    const final = await finalReport(harness, thread);
    expect(final.ts).toBe(shown!.ts);
    expect(harness.replies(thread).filter((m) => m.text.includes('Report') || m.stream)).toHaveLength(1);
    expect(harness.slack.callsOf('chat.appendStream').at(-1)?.response).toMatchObject({
      error: 'message_not_in_streaming_state',
    });
    // Nothing to stop once Slack ended the stream: no Tier 2 call spent on it.
    expect(harness.slack.callsOf('chat.stopStream')).toEqual([]);
  });

  it('a 429 on chat.appendStream loses no text: the held words go with the next call', async () => {
    const { harness, thread } = await start({ text: REPORT, chunks: CHUNKS, chunkDelayMs: 150 });
    harness.slack.throttle({ method: 'chat.appendStream', times: 1, retryAfterS: 1 });
    const final = await finalReport(harness, thread);
    expect(harness.slack.rateLimited['chat.appendStream']).toBe(1);
    expect(final.stream?.markdown).toBe(`${WRITING_HEADING}${REPORT.replace('<', '&lt;').replace('>', '&gt;')}`);
  });

  it('where Slack refuses to stream, the report is posted whole as before, and no later report tries again', async () => {
    const { harness, thread } = await start({ text: REPORT, chunks: CHUNKS });
    harness.slack.refuse = (method) => (method === 'chat.startStream' ? 'unknown_method' : undefined);
    const final = await finalReport(harness, thread);
    expect(final.stream).toBeUndefined();
    expect(harness.slack.callsOf('chat.startStream')).toHaveLength(1);
    expect(harness.logs.join('\n')).toContain('refused streaming (unknown_method)');
    expect(
      harness.channel.openReport(
        { channel: 'slack', key: `C0GENERAL:${thread}` },
        { runId: 'x', status: 'completed', requester: { id: 'U0ADA', channel: 'slack' } },
      ),
    ).toBeNull();
  });
});

describe('slack: a report is shown once across a kill between posting it and noting that it was sent', () => {
  it('the process that takes the run over finds the report in the thread by its metadata and changes it, instead of posting it again', async () => {
    const { harness, thread } = await start('The sum of 2 and 3 is 5.');
    const shown = await finalReport(harness, thread);
    // As a process killed right after posting the report leaves the run: ended, its report stored, still owed.
    const run = await onlyRun(harness);
    await harness.db.db.updateTable('runs').set({ report_due: true }).where('id', '=', run.id).execute();
    const posts = harness.slack.callsOf('chat.postMessage').length;

    await harness.steward.recover();
    await harness.waitFor('the run to owe nothing', async () => {
      const row = await harness.db.db.selectFrom('runs').select('report_due').where('id', '=', run.id).execute();
      return row[0]?.report_due === false;
    });
    expect(harness.slack.callsOf('chat.postMessage').slice(posts)).toEqual([]);
    expect(harness.replies(thread).filter((m) => m.text.includes('Report') || m.stream)).toEqual([
      expect.objectContaining({
        ts: shown.ts,
        metadata: { event_type: 'steward_report', event_payload: { run_id: run.id } },
      }),
    ]);
    const looked = harness.slack.callsOf('conversations.replies').at(-1)?.args;
    expect([looked?.ts, String(looked?.include_all_metadata)]).toEqual([thread, 'true']);
  });
});
