/**
 * The sign that Steward is working on a request: Slack's loading status under the thread ("is looking into it…", then
 * "is planning…" once the request is handed to the planner), set as soon as a request arrives and cleared when
 * Steward's first message lands in the thread or the request ends.
 * Where Slack refuses the status (a workspace or plan without it, a scope missing), an 👀 reaction on the message
 * that asked takes its place: it is as quick, leaves nothing behind once removed, and needs only `reactions:write`.
 */
import type { WebClient } from '@slack/web-api';

/** What the status line says from a request's arrival: the quick path may still answer it without a plan. */
export const THINKING_STATUS = 'is looking into it…';
/** What it says once the request is with the planner. */
export const PLANNING_STATUS = 'is planning…';
/** The reaction used where the status is refused. */
export const THINKING_REACTION = 'eyes';
/** Slack drops a status after two minutes without a message: a long planning call gets it set again before that. */
const REFRESH_MS = 90_000;
/** Errors that mean the status cannot work in this workspace at all: the reaction is used from then on. */
const UNSUPPORTED = new Set([
  'missing_scope',
  'not_allowed_token_type',
  'unknown_method',
  'method_deprecated',
  'feature_not_enabled',
  'access_denied',
  'team_access_not_granted',
]);

type Shown = 'status' | 'reaction' | null;

interface Sign {
  messageTs: string;
  /** The status line's words (the refresh sets them again). */
  label: string;
  shown: Promise<Shown>;
  refresh?: NodeJS.Timeout;
}

/** The working signs currently shown, one per thread. */
export class ThinkingSigns {
  private readonly signs = new Map<string, Sign>();
  private statusWorks = true;

  constructor(
    private readonly client: WebClient,
    private readonly log: (message: string) => void,
    private readonly refreshMs = REFRESH_MS,
  ) {}

  /** Shows the sign on a thread at once (a reaction goes on `messageTs`, the message that asked). Never throws. */
  show(channel: string, threadTs: string, messageTs: string): void {
    const key = `${channel}:${threadTs}`;
    if (this.signs.has(key)) return;
    const sign: Sign = { messageTs, label: THINKING_STATUS, shown: Promise.resolve(null) };
    this.signs.set(key, sign);
    sign.shown = this.put(channel, threadTs, messageTs).then((how) => {
      // Still wanted: keep the status from lapsing while the planner works.
      if (how === 'status' && this.signs.get(key) === sign) {
        sign.refresh = setInterval(() => void this.setStatus(channel, threadTs, sign.label), this.refreshMs);
        sign.refresh.unref();
      }
      return how;
    });
  }

  /** Changes the words of a thread's status line, if one is up (a reaction has none). Never throws. */
  async relabel(channel: string, threadTs: string, label: string): Promise<void> {
    const key = `${channel}:${threadTs}`;
    const sign = this.signs.get(key);
    if (!sign || sign.label === label) return;
    sign.label = label;
    // Chained on the first set, and a clear waits for this one: Slack never ends on older words, nor on these.
    sign.shown = sign.shown.then(async (how) => {
      if (how === 'status' && this.signs.get(key) === sign) await this.setStatus(channel, threadTs, label);
      return how;
    });
    await sign.shown;
  }

  /** Takes the sign off a thread, once it is shown; nothing when there is none. Never throws. */
  async clear(channel: string, threadTs: string): Promise<void> {
    const key = `${channel}:${threadTs}`;
    const sign = this.signs.get(key);
    if (!sign) return;
    this.signs.delete(key);
    const how = await sign.shown;
    clearInterval(sign.refresh);
    try {
      if (how === 'status')
        await this.client.assistant.threads.setStatus({ channel_id: channel, thread_ts: threadTs, status: '' });
      if (how === 'reaction')
        await this.client.reactions.remove({ channel, timestamp: sign.messageTs, name: THINKING_REACTION });
    } catch (err) {
      this.log(`slack: the working sign in ${key} could not be cleared: ${errorText(err)}`);
    }
  }

  private async put(channel: string, threadTs: string, messageTs: string): Promise<Shown> {
    if (this.statusWorks) {
      if (await this.setStatus(channel, threadTs, THINKING_STATUS)) return 'status';
    }
    try {
      await this.client.reactions.add({ channel, timestamp: messageTs, name: THINKING_REACTION });
      return 'reaction';
    } catch (err) {
      this.log(`slack: no working sign could be shown in ${channel}:${threadTs}: ${errorText(err)}`);
      return null;
    }
  }

  /** Sets the status line; false when Slack refused it (and, for good, when the workspace cannot have it). */
  private async setStatus(channel: string, threadTs: string, status: string): Promise<boolean> {
    try {
      await this.client.assistant.threads.setStatus({ channel_id: channel, thread_ts: threadTs, status });
      return true;
    } catch (err) {
      const code = (err as { data?: { error?: string } }).data?.error;
      if (code && UNSUPPORTED.has(code)) {
        this.statusWorks = false;
        this.log(`slack: the loading status is refused here (${code}); showing a reaction instead`);
      }
      return false;
    }
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
