/**
 * Discord's rate limits as the fake counts them (https://discord.com/developers/docs/topics/rate-limits):
 *
 * - Per route: each route has a bucket, and each bucket is counted apart for each value of the route's major parameter
 *   (`channel_id`, `guild_id`, or `webhook_id` + `webhook_token` for an interaction's webhook). Every answer carries
 *   that bucket's state: `X-RateLimit-Limit`, `-Remaining`, `-Reset` (epoch seconds), `-Reset-After` (seconds) and
 *   `-Bucket` (an opaque id, shared by every major parameter of the route, as Discord's is). Past the limit the answer
 *   is 429 with `retry_after` (seconds, a float) in the body, `Retry-After` (whole seconds) and
 *   `X-RateLimit-Scope: user` in the headers. Refused calls count too ("invalid requests" in the same page).
 * - Global: 50 requests a second per bot token, whatever the route ("Global Rate Limit"); past it the 429 says
 *   `"global": true` and carries `X-RateLimit-Global: true` and `X-RateLimit-Scope: global`. Interaction endpoints
 *   (the callback and the interaction's webhook) are not bound to it (same section).
 *
 * Discord publishes no per-route numbers: "Because we may change rate limits at any time and rate limits can be
 * different per application, rate limits should not be hard coded". The numbers below are the ones Discord's own docs
 * listed before they were made dynamic (api docs, 2016-2017: "Send Message 5/5s per channel", "Reactions 1/0.25s per
 * channel", "All requests 50/1s per account") and the ones bot authors commonly report in headers (message edits
 * 5/5s per channel; interaction webhooks 5/2s per webhook); the rest are a plain 5 per 5 s, labelled as guesses.
 * Steward adds no reactions, so the fake has no reaction route and no rule for it. The windows count real time
 * (`Date.now`), since discord.js waits out `Reset-After` in real time, whatever clock a test gives the fake.
 */

/** A bucket's size and window, and where the numbers come from. */
export interface BucketRule {
  limit: number;
  windowMs: number;
  source: string;
}

const OLD_DOCS = 'Discord API docs before dynamic limits (2016-2017 rate-limits table)';
const REPORTED = 'commonly reported x-ratelimit headers (not published by Discord)';
const GUESS = 'unpublished; a plain 5 per 5 s (a guess, not an observation)';

/** Per route (`METHOD /route/template`): how many calls per window for one major parameter. */
export const ROUTE_LIMITS: Record<string, BucketRule> = {
  'POST /channels/:channel/messages': { limit: 5, windowMs: 5_000, source: OLD_DOCS },
  'PATCH /channels/:channel/messages/:message': { limit: 5, windowMs: 5_000, source: REPORTED },
  'POST /webhooks/:app/:token': { limit: 5, windowMs: 2_000, source: REPORTED },
  'PATCH /webhooks/:app/:token/messages/:message': { limit: 5, windowMs: 2_000, source: REPORTED },
};
export const DEFAULT_ROUTE_LIMIT: BucketRule = { limit: 5, windowMs: 5_000, source: GUESS };
/** 50 requests a second per bot token (docs, "Global Rate Limit"). */
export const GLOBAL_LIMIT: BucketRule = { limit: 50, windowMs: 1_000, source: 'rate-limits#global-rate-limit' };

/** Routes outside the global limit: "Interaction endpoints are not bound to the bot's Global Rate Limit." */
const INTERACTION_ROUTE = /^\/(interactions|webhooks)\//;

/** The major parameter of a call: the channel, the guild, or the webhook and its token; '' for none. */
export function majorParameter(route: string, params: Record<string, string>): string {
  if (route.startsWith('/channels/')) return params.channel ?? '';
  if (route.startsWith('/webhooks/')) return `${params.app ?? ''}/${params.token ?? ''}`;
  if (route.startsWith('/interactions/')) return params.interaction ?? '';
  return params.guild ?? '';
}

interface Window {
  count: number;
  resetAt: number;
}

/** What a call's bucket says: its headers, and a 429 body when it is over. */
export interface BucketAnswer {
  headers: Record<string, string>;
  limited?: { body: { message: string; retry_after: number; global: boolean } };
}

/** Counts calls per bucket and major parameter, and globally, in fixed windows that open with their first call. */
export class RateLimits {
  private readonly windows = new Map<string, Window>();
  private global: Window = { count: 0, resetAt: 0 };

  constructor(
    private readonly rules: Record<string, BucketRule> = ROUTE_LIMITS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Takes one call from its bucket (and the global one), or says it is over, with Discord's headers either way. */
  take(method: string, route: string, params: Record<string, string>): BucketAnswer {
    const now = this.clock();
    const key = `${method} ${route}`;
    const rule = this.rules[key] ?? DEFAULT_ROUTE_LIMIT;
    if (!INTERACTION_ROUTE.test(route)) {
      if (now >= this.global.resetAt) this.global = { count: 0, resetAt: now + GLOBAL_LIMIT.windowMs };
      if (this.global.count >= GLOBAL_LIMIT.limit) {
        const after = (this.global.resetAt - now) / 1000;
        return {
          headers: {
            'retry-after': String(Math.ceil(after)),
            'x-ratelimit-global': 'true',
            'x-ratelimit-scope': 'global',
          },
          limited: { body: { message: 'You are being rate limited.', retry_after: after, global: true } },
        };
      }
      this.global.count += 1;
    }
    const id = `${key}|${majorParameter(route, params)}`;
    let w = this.windows.get(id);
    if (!w || now >= w.resetAt) {
      w = { count: 0, resetAt: now + rule.windowMs };
      this.windows.set(id, w);
    }
    const over = w.count >= rule.limit;
    if (!over) w.count += 1;
    const after = (w.resetAt - now) / 1000;
    const headers = {
      'x-ratelimit-limit': String(rule.limit),
      'x-ratelimit-remaining': String(rule.limit - w.count),
      'x-ratelimit-reset': (w.resetAt / 1000).toFixed(3),
      'x-ratelimit-reset-after': after.toFixed(3),
      'x-ratelimit-bucket': bucketOf(key),
    };
    if (!over) return { headers };
    return {
      headers: { ...headers, 'retry-after': String(Math.ceil(after)), 'x-ratelimit-scope': 'user' },
      limited: { body: { message: 'You are being rate limited.', retry_after: after, global: false } },
    };
  }
}

/** A stable bucket id per route, as Discord's opaque `x-ratelimit-bucket`. */
export const bucketOf = (key: string) => Buffer.from(key).toString('base64url').slice(-16);
