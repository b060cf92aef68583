/**
 * A report in Slack while the model writes it, through Slack's text streaming (chat.startStream, appendStream,
 * stopStream). The first words start the stream at once; later words are gathered and appended at most every
 * `intervalMs`, one call at a time, each through the outbox's lanes (a 429 waits out its Retry-After and the call,
 * sent again, carries everything gathered meanwhile, so no text is lost). When the report is done the stream is
 * stopped and the message replaced by the report exactly as a plain reply renders it. Where Slack refuses to stream
 * (no such method, not an assistant thread, any error), the report is posted whole as before: it is never lost.
 * Slack ends a stream by itself after about five minutes (appends are then refused with
 * `message_not_in_streaming_state`); the message is then an ordinary one, so a report written slower than that is
 * finished by replacing that message in place (chat.update, the fallback the Slack SDK names for an expired stream),
 * never by posting it a second time. A stream that cannot start within a few seconds (the workspace's Tier 2 starts
 * are used up) is not waited for: the report is posted whole when it is done.
 */
import type { Report, ReportStream } from '../../engine/messages.ts';
import { classifyFailure } from './slack-pacing.ts';
import type { SlackOutbox } from './slack-outbox.ts';
import { REPLY_BUDGET } from './slack-thread-render.ts';
import { inertMarkdown } from './slack-text.ts';

/** The streaming methods of the Web API, as Steward calls them. */
export interface StreamMethods {
  startStream(args: {
    channel: string;
    thread_ts: string;
    markdown_text: string;
    recipient_user_id?: string;
    recipient_team_id?: string;
  }): Promise<{ ts?: string }>;
  appendStream(args: { channel: string; ts: string; markdown_text: string }): Promise<unknown>;
  stopStream(args: { channel: string; ts: string; markdown_text?: string }): Promise<unknown>;
}

/** Where the stream goes and what it falls back on. */
export interface SlackReportTarget {
  channel: string;
  threadTs: string;
  /** The person the stream is for (Slack asks for them, and their team, outside a direct message). */
  recipient: () => Promise<{ user?: string; team?: string }>;
  /** Replaces the stopped message with the report as a plain reply renders it. */
  replace(ts: string, report: Report): Promise<void>;
  /** Today's path: posts the report whole in the thread. */
  post(report: Report): Promise<void>;
  /** Told once when Slack refuses a stream with an error that says it always will (then nobody tries again). */
  refused(reason: string): void;
  log(message: string): void;
}

/** What the stream shows above the words until the report replaces it (and what a stream cut off by a crash keeps). */
export const WRITING_HEADING = '**✍️ Writing the report…**\n\n';
const CUT_NOTE = '\n\n_The report was interrupted here; the complete report is posted separately._';
/** The longest a streaming call waits in its lane (rate limited) before the stream gives up. */
const STREAM_MAX_WAIT_MS = 60_000;
/** The longest a stream's start waits in its lane: a preview that starts later is worth less than the whole report. */
const START_MAX_WAIT_MS = 3_000;
/** Slack's answer to a call on a stream that has ended (by itself, after its time, or stopped). */
const NOT_STREAMING = 'message_not_in_streaming_state';
/** Refusals that mean this workspace or token will never stream (not a problem with one thread). */
const ALWAYS_REFUSED = new Set(['unknown_method', 'missing_scope', 'not_allowed_token_type', 'method_deprecated']);

/** A report streamed into a Slack thread; see the file's comment. */
export class SlackReportStream implements ReportStream {
  /** Escaped text gathered and not yet accepted by Slack. */
  private pending = '';
  /** The part of `pending` the call in flight carries. */
  private inFlight = '';
  private sentLength = 0;
  private ts: string | null = null;
  private state: 'idle' | 'open' | 'broken' | 'done' = 'idle';
  /** Slack ended the stream by itself: nothing more can be appended, and there is nothing to stop. */
  private expired = false;
  private work: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private lastSentAt = 0;

  constructor(
    private readonly methods: StreamMethods,
    private readonly outbox: SlackOutbox,
    private readonly target: SlackReportTarget,
    private readonly options: { intervalMs: number; now: () => number },
  ) {}

  append(delta: string): void {
    if (!delta || this.state === 'broken' || this.state === 'done') return;
    // Inert like every model text Steward shows: a `<!channel>` pings nobody and a Markdown link shows its address.
    this.pending += inertMarkdown(delta);
    if (this.state === 'idle') {
      this.state = 'open';
      this.work = this.start();
    } else this.schedule();
  }

  async finish(report: Report): Promise<void> {
    const ts = await this.settle();
    if (ts === null) return this.target.post(report);
    if (!this.expired)
      await this.call('chat.stopStream', () =>
        this.methods.stopStream(this.withRest({ channel: this.target.channel, ts })),
      ).catch((err: unknown) => {
        // Ended already (expired meanwhile) or not stoppable now: replacing the message below still finishes it.
        this.target.log(`slack: stopping the streamed report failed (${(err as Error).message}); replacing it`);
      });
    try {
      await this.target.replace(ts, report);
    } catch (err) {
      this.target.log(
        `slack: the streamed report could not be completed (${(err as Error).message}); posting it whole`,
      );
      await this.target.post(report);
    }
  }

  async fail(): Promise<void> {
    // After finish (which delivers the report, or posts it whole) there is nothing left to close.
    if (this.state === 'done') return;
    const ts = await this.settle();
    if (ts !== null) {
      const channel = this.target.channel;
      await this.call('chat.stopStream', () => this.methods.stopStream({ channel, ts, markdown_text: CUT_NOTE }));
    }
  }

  /** Ends gathering: waits for the call in flight, and answers the streamed message's ts (null: nothing streamed). */
  private async settle(): Promise<string | null> {
    this.state = 'done';
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.work;
    return this.ts;
  }

  private async start(): Promise<void> {
    const { channel, threadTs } = this.target;
    try {
      const who = await this.target.recipient();
      const res = await this.call(
        'chat.startStream',
        () =>
          this.methods.startStream({
            channel,
            thread_ts: threadTs,
            markdown_text: WRITING_HEADING + this.take(),
            ...(who.user && { recipient_user_id: who.user }),
            ...(who.team && { recipient_team_id: who.team }),
          }),
        START_MAX_WAIT_MS,
      );
      if (!res.ts) throw new Error('chat.startStream answered without a ts');
      this.ts = res.ts;
      this.schedule();
    } catch (err) {
      const reason = classifyFailure(err);
      if (reason.kind === 'permanent' && ALWAYS_REFUSED.has(reason.reason)) this.target.refused(reason.reason);
      this.target.log(`slack: not streaming the report in ${channel} (${(err as Error).message}); it is posted whole`);
      // Nothing streamed (no ts): finish posts the report whole, as before.
      if (this.state !== 'done') this.state = 'broken';
    }
  }

  private schedule(): void {
    if (this.state !== 'open' || this.timer || !this.pending || this.ts === null || this.room() === 0) return;
    const wait = Math.max(0, this.lastSentAt + this.options.intervalMs - this.options.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.work = this.work.then(() => this.flush());
    }, wait);
  }

  private async flush(): Promise<void> {
    const ts = this.ts;
    if (this.state !== 'open' || ts === null || !this.pending || this.room() === 0) return;
    try {
      await this.call('chat.appendStream', () =>
        this.methods.appendStream({ channel: this.target.channel, ts, markdown_text: this.take() }),
      );
    } catch (err) {
      // The words not shown reach the person in the final report; the stream just stops growing.
      const failure = classifyFailure(err);
      this.expired = failure.kind === 'permanent' && failure.reason === NOT_STREAMING;
      const why = this.expired ? 'Slack ended the stream (it lasts about five minutes)' : (err as Error).message;
      this.target.log(`slack: appending to the streamed report failed (${why}); the report replaces it when done`);
      this.state = 'broken';
      return;
    }
    this.schedule();
  }

  /**
   * The gathered text, taken for one call: each try of the call (again after a 429) takes what has gathered by then,
   * and only a call Slack accepted counts as sent. Past the reply budget nothing more is streamed.
   */
  private take(): string {
    const text = this.pending.slice(0, this.room());
    this.inFlight = text;
    return text;
  }

  /** How much more the preview may show: a reply's budget (the final report is cut to it with a note anyway). */
  private room(): number {
    return Math.max(0, REPLY_BUDGET - this.sentLength);
  }

  private async call<T>(method: string, send: () => Promise<T>, maxWaitMs = STREAM_MAX_WAIT_MS): Promise<T> {
    this.inFlight = '';
    // Bounded: a lane Slack keeps refusing must not hold the report; past this the report is posted whole.
    const res = await this.outbox.call({ method, channel: this.target.channel, send, maxWaitMs });
    // Accepted: what that try carried is sent; what gathered since waits for the next call.
    this.pending = this.pending.slice(this.inFlight.length);
    this.sentLength += this.inFlight.length;
    this.inFlight = '';
    this.lastSentAt = this.options.now();
    return res;
  }

  private withRest(args: { channel: string; ts: string }): { channel: string; ts: string; markdown_text?: string } {
    const rest = this.take();
    return rest ? { ...args, markdown_text: rest } : args;
  }
}
