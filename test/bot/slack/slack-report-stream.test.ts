import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../../src/engine/messages.ts';
import { SlackOutbox } from '../../../src/bot/slack/slack-outbox.ts';
import { SlackReportStream, WRITING_HEADING, type StreamMethods } from '../../../src/bot/slack/slack-report-stream.ts';
import { waitUntil } from '../../helpers/wait.ts';

type Sent = { method: string; text: string; at: number };

/** The streaming methods of a workspace that accepts them (or throws what `fail` says), recording each call. */
function createWorkspace(fail: (method: string, n: number) => Error | undefined = () => undefined) {
  const sent: Sent[] = [];
  let n = 0;
  const call = (method: string, text = '') => {
    const err = fail(method, n++);
    if (err) return Promise.reject(err);
    sent.push({ method, text, at: Date.now() });
    return Promise.resolve({ ts: '1700000000.000200' });
  };
  const methods: StreamMethods = {
    startStream: (a) => call('start', a.markdown_text),
    appendStream: (a) => call('append', a.markdown_text),
    stopStream: (a) => call('stop', a.markdown_text),
  };
  return { sent, methods };
}

function createStream(methods: StreamMethods, intervalMs = 100, replace?: (ts: string) => Promise<void>) {
  const posted: Report[] = [];
  const replaced: string[] = [];
  const refused: string[] = [];
  const outbox = new SlackOutbox({ log: () => undefined });
  const stream = new SlackReportStream(
    methods,
    outbox,
    {
      channel: 'C1',
      threadTs: '1700000000.000100',
      recipient: () => Promise.resolve({ user: 'U0ADA', team: 'T1' }),
      replace: (ts) => replace?.(ts) ?? (replaced.push(ts), Promise.resolve()),
      post: (r) => (posted.push(r), Promise.resolve()),
      refused: (reason) => void refused.push(reason),
      log: () => undefined,
    },
    { intervalMs, now: Date.now },
  );
  return { stream, posted, replaced, refused };
}

const report: Report = { kind: 'report', runId: 'r1', status: 'completed', text: 'All done.' };
const streamed = (sent: Sent[]) => sent.map((s) => s.text).join('');

describe('a report streamed into Slack', () => {
  it('starts with the first words at once, gathers the rest into appends at most every interval, and ends as the report', async () => {
    const w = createWorkspace();
    const s = createStream(w.methods, 100);
    const opened = Date.now();
    s.stream.append('First ');
    await waitUntil('the stream to start', () => w.sent.length === 1);
    expect(w.sent[0]).toMatchObject({ method: 'start', text: `${WRITING_HEADING}First ` });
    expect(w.sent[0]!.at - opened).toBeLessThan(50);
    for (const word of ['words ', 'and ', 'then ', 'more ']) s.stream.append(word);
    await waitUntil('one append', () => w.sent.length === 2);
    expect(w.sent[1]).toMatchObject({ method: 'append', text: 'words and then more ' });
    expect(w.sent[1]!.at - w.sent[0]!.at).toBeGreaterThanOrEqual(95);
    s.stream.append('<!channel> & the end.');
    await s.stream.finish(report);
    expect(w.sent.map((x) => x.method)).toEqual(['start', 'append', 'stop']);
    expect(streamed(w.sent)).toBe(`${WRITING_HEADING}First words and then more &lt;!channel&gt; &amp; the end.`);
    expect(s.replaced).toEqual(['1700000000.000200']);
    expect(s.posted).toEqual([]);
  });

  it('after a 429 on an append, the retry carries the held words and what came meanwhile: nothing is lost', async () => {
    const w = createWorkspace((method, n) =>
      method === 'append' && n === 1 ? new webApi.WebAPIRateLimitedError(0.2) : undefined,
    );
    const s = createStream(w.methods, 20);
    s.stream.append('one ');
    await waitUntil('the start', () => w.sent.length === 1);
    s.stream.append('two ');
    await new Promise((resolve) => setTimeout(resolve, 60));
    s.stream.append('three ');
    await waitUntil('the append after the Retry-After', () => w.sent.length === 2, { timeoutMs: 3_000 });
    await s.stream.finish(report);
    expect(streamed(w.sent)).toBe(`${WRITING_HEADING}one two three `);
    expect(w.sent[1]?.text).toBe('two three ');
  });

  it("stops growing the preview at a reply's budget, and still ends as the whole report", async () => {
    const w = createWorkspace();
    const s = createStream(w.methods, 5);
    s.stream.append('x'.repeat(9_000));
    await waitUntil('the start', () => w.sent.length === 1);
    s.stream.append('y'.repeat(2_000));
    await waitUntil('one append', () => w.sent.length === 2);
    s.stream.append('z'.repeat(500));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await s.stream.finish(report);
    expect(w.sent.map((x) => [x.method, x.text.length])).toEqual([
      ['start', WRITING_HEADING.length + 9_000],
      ['append', 1_000],
      ['stop', 0],
    ]);
    expect(s.replaced).toHaveLength(1);
  });

  it('posts the report whole when Slack refuses to stream, and says when it always will', async () => {
    const w = createWorkspace((method) =>
      method === 'start' ? new webApi.WebAPIPlatformError({ ok: false, error: 'unknown_method' }) : undefined,
    );
    const s = createStream(w.methods);
    s.stream.append('First words');
    await s.stream.finish(report);
    expect(s.posted).toEqual([report]);
    expect(s.refused).toEqual(['unknown_method']);
    expect(s.replaced).toEqual([]);
  });

  it('posts the report whole, once, when no word came (the model failed before writing)', async () => {
    const w = createWorkspace();
    const s = createStream(w.methods);
    await s.stream.finish(report);
    expect(w.sent).toEqual([]);
    expect(s.posted).toEqual([report]);
  });

  it('a stream Slack ended by itself (about five minutes) is replaced in place by the report, never posted again', async () => {
    const expired = () => new webApi.WebAPIPlatformError({ ok: false, error: 'message_not_in_streaming_state' });
    // Ended before the stop: the stop is refused, and the message is replaced all the same.
    const w = createWorkspace((method) => (method === 'stop' ? expired() : undefined));
    const s = createStream(w.methods);
    s.stream.append('First words');
    await waitUntil('the start', () => w.sent.length === 1);
    await s.stream.finish(report);
    expect(s.replaced).toEqual(['1700000000.000200']);
    expect(s.posted).toEqual([]);

    // Ended while the model wrote: the refused append ends the preview, and no stop is spent on it.
    const tried: string[] = [];
    const w2 = createWorkspace((method) => {
      tried.push(method);
      return method === 'append' || method === 'stop' ? expired() : undefined;
    });
    const s2 = createStream(w2.methods, 10);
    s2.stream.append('First words');
    await waitUntil('the start', () => w2.sent.length === 1);
    s2.stream.append(' and more');
    await waitUntil('the append refused', () => tried.includes('append'));
    await s2.stream.finish(report);
    expect(tried).toEqual(['start', 'append']);
    expect(s2.replaced).toEqual(['1700000000.000200']);
    expect(s2.posted).toEqual([]);
  });

  it('posts the report whole only when the streamed message cannot be replaced either', async () => {
    const w = createWorkspace();
    const s = createStream(w.methods, 100, () => Promise.reject(new Error('message_not_found')));
    s.stream.append('First words');
    await waitUntil('the start', () => w.sent.length === 1);
    await s.stream.finish(report);
    expect(s.posted).toEqual([report]);
  });

  it('closes a preview it will not finish with a note saying the report is posted separately', async () => {
    const w = createWorkspace();
    const s = createStream(w.methods);
    s.stream.append('First words');
    await s.stream.fail();
    expect(w.sent.map((x) => x.method)).toEqual(['start', 'stop']);
    expect(w.sent[1]?.text).toMatch(/interrupted here; the complete report is posted separately/);
    expect(s.posted).toEqual([]);
  });
});
