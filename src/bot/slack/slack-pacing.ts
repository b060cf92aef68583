/**
 * Slack's pacing as pure rules (time arrives as a value): a lane per method and channel (or per method, for limits
 * Slack counts across the workspace), a token bucket that spaces calls as Slack publishes, a block until the time a
 * 429's Retry-After names, and what an error from the Web API means for a retry.
 */

/** How fast one method may go: `perMinute` calls, `burst` saved up, counted per channel or per workspace. */
export interface Pace {
  perMinute: number;
  burst: number;
  per: 'channel' | 'workspace';
  /** Calls of the lane in flight at once (1 keeps a channel's posts in order). */
  inFlight: number;
}

/**
 * Slack's published limits: chat.postMessage about 1 a second per channel with short bursts, chat.update Tier 3
 * (50+ a minute), chat.postEphemeral and views.open Tier 4 (100+ a minute), per workspace. Burst sizes are not
 * published: these are guesses, and a 429 corrects them (the lane waits for its Retry-After).
 */
export const SLACK_PACING: Readonly<Record<string, Pace>> = {
  'chat.postMessage': { perMinute: 60, burst: 3, per: 'channel', inFlight: 1 },
  'chat.update': { perMinute: 50, burst: 10, per: 'workspace', inFlight: 4 },
  'chat.postEphemeral': { perMinute: 100, burst: 10, per: 'workspace', inFlight: 4 },
  'views.open': { perMinute: 100, burst: 10, per: 'workspace', inFlight: 4 },
  // Streaming: the method reference gives chat.startStream and chat.stopStream Tier 2 (20+ a minute, per workspace),
  // so a busy workspace runs out of streams long before it runs out of posts: a report whose stream cannot start
  // soon is posted whole (slack-report-stream.ts). appendStream's tier is a Tier 4-like guess a 429 corrects.
  'chat.startStream': { perMinute: 20, burst: 3, per: 'workspace', inFlight: 2 },
  'chat.appendStream': { perMinute: 100, burst: 10, per: 'workspace', inFlight: 4 },
  'chat.stopStream': { perMinute: 20, burst: 3, per: 'workspace', inFlight: 2 },
};

/**
 * Lanes refill at this share of the published rate: a request's latency varies, so calls spaced exactly at the
 * rate can reach Slack closer together than that, and one 429 costs a whole second of Retry-After.
 */
const MARGIN = 0.95;

/** Methods not listed are not paced, but a 429 still holds their own lane. */
const UNPACED: Pace = { perMinute: Number.POSITIVE_INFINITY, burst: 1, per: 'workspace', inFlight: 8 };

/** The pace of a method. */
export function paceOf(method: string): Pace {
  return SLACK_PACING[method] ?? UNPACED;
}

/** The lane a call goes in: its method, and its channel when Slack counts that method per channel. */
export function laneKey(method: string, channel: string): string {
  return paceOf(method).per === 'channel' ? `${method} ${channel}` : method;
}

/** One lane's bucket: its tokens at `at`, and the end of a Retry-After it must wait out. */
export class LaneClock {
  private tokens: number;
  private at: number;
  private blockedUntil = 0;

  constructor(
    readonly pace: Pace,
    now: number,
  ) {
    this.tokens = pace.burst;
    this.at = now;
  }

  /** Milliseconds until the next call may go (0: now). */
  waitMs(now: number): number {
    if (now < this.blockedUntil) return this.blockedUntil - now;
    if (!Number.isFinite(this.pace.perMinute)) return 0;
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil((1 - this.tokens) / this.perMs);
  }

  /** Spends a token on a call that goes now. */
  take(now: number): void {
    if (!Number.isFinite(this.pace.perMinute)) return;
    this.refill(now);
    this.tokens -= 1;
  }

  /** Slack refused a call with Retry-After: nothing more goes in this lane before then, and then one at a time. */
  refused(now: number, retryAfterMs: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, now + retryAfterMs);
    // The guess of Slack's bucket was too generous: after the wait, one call, then the published pace.
    this.at = this.blockedUntil;
    this.tokens = 1;
  }

  /** Milliseconds until the bucket is full and no Retry-After holds it (0: a fresh lane would be the same). */
  fullInMs(now: number): number {
    if (now < this.blockedUntil) return this.blockedUntil - now + this.fullInMs(this.blockedUntil);
    if (!Number.isFinite(this.pace.perMinute)) return 0;
    this.refill(now);
    return Math.ceil((this.pace.burst - this.tokens) / this.perMs);
  }

  private get perMs(): number {
    return (this.pace.perMinute * MARGIN) / 60_000;
  }

  private refill(now: number): void {
    if (now <= this.at) return;
    this.tokens = Math.min(this.pace.burst, this.tokens + (now - this.at) * this.perMs);
    this.at = now;
  }
}

/** What a failed call means: wait for Retry-After, try again later, or give up (Slack will refuse it again). */
export type CallFailure =
  | { kind: 'rateLimited'; retryAfterMs: number }
  | { kind: 'transient'; reason: string }
  | { kind: 'permanent'; reason: string };

/** Slack errors that say "try later" rather than "this call is wrong". */
const TRANSIENT_ERRORS = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

/**
 * Reads an error thrown by @slack/web-api (duck-typed, so this file needs no SDK): a rate-limited error carries
 * `retryAfter` in seconds; a platform error `data.error`; request errors and HTTP 5xx are transient.
 */
export function classifyFailure(err: unknown): CallFailure {
  const e = (err ?? {}) as { code?: unknown; retryAfter?: unknown; data?: { error?: unknown }; statusCode?: unknown };
  const message = err instanceof Error ? err.message : String(err);
  if (e.code === 'slack_webapi_rate_limited_error') {
    const seconds = typeof e.retryAfter === 'number' && e.retryAfter > 0 ? e.retryAfter : 1;
    return { kind: 'rateLimited', retryAfterMs: seconds * 1000 };
  }
  if (e.code === 'slack_webapi_platform_error') {
    const error = typeof e.data?.error === 'string' ? e.data.error : 'unknown_error';
    if (error === 'ratelimited') return { kind: 'rateLimited', retryAfterMs: 1000 };
    return TRANSIENT_ERRORS.has(error) ? { kind: 'transient', reason: error } : { kind: 'permanent', reason: error };
  }
  if (e.code === 'slack_webapi_request_error') return { kind: 'transient', reason: message };
  if (e.code === 'slack_webapi_http_error')
    return typeof e.statusCode === 'number' && e.statusCode >= 500
      ? { kind: 'transient', reason: message }
      : { kind: 'permanent', reason: message };
  return { kind: 'permanent', reason: message };
}
