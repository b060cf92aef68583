/**
 * A local fake of the Slack Web API for tests that drive the real Bolt app (`clientOptions.slackApiUrl`).
 * It records every call, keeps posted messages so chat.update can find them, issues single-use trigger ids
 * that live 3 s (like Slack's), and checks Block Kit limits loosely, answering with Slack's error shapes
 * (`invalid_blocks`, `msg_blocks_too_long`, `msg_too_long`) so a card Slack would refuse fails the test.
 * Rate limits are on by default (`SLACK_RATE_LIMITS`, Slack's tiers for every method Steward calls; `rateLimits`
 * replaces them): a token bucket per method, per channel or per workspace, answering HTTP 429 with `Retry-After`
 * (whole seconds) like Slack. `throttle` answers
 * chosen calls with 429 (a storm on one method or channel). Text streaming (chat.startStream, chat.appendStream,
 * chat.stopStream) builds a message whose `streamed` markdown grows with each call; outside a DM a stream needs its
 * recipient (user and team), and a message still streaming cannot be updated. views.publish keeps each person's App
 * Home view (`homeViews`), refusing one Slack would refuse (not a `home` view, over 100 blocks, bad blocks). Every view
 * (views.open, views.update, views.publish) over 250 kB of JSON is refused with `view_too_large` (the methods' reference:
 * "Error returned if the provided view is greater than 250kb"; counted here as 250,000 bytes, the stricter reading);
 * views.update needs the id of a view the fake opened and, when given, its current `hash` (else `hash_conflict`).
 *
 * Membership (`members`): with `members` given, chat.postMessage, chat.postEphemeral and chat.startStream into a
 * channel the bot is not in are refused as Slack refuses them: `not_in_channel` for a public channel (a bot without
 * chat:write.public) and `channel_not_found` for a private one (https://api.slack.com/methods/chat.postMessage and
 * https://api.slack.com/methods/chat.postEphemeral, "Errors"; a private channel the bot is not in does not exist for
 * it). A DM (`D…`) or a user id (`U…`, `W…`: Slack posts that into the app's DM with the person) always takes the
 * post. The rule tests rely on: the bot is in the channels a test mentions it in, since Slack delivers a mention or a
 * channel message only from a conversation the app is in; the Slack harness (test/e2e/slack-harness.ts) calls `join`
 * for each channel it delivers such an event from, and a test removes the bot with `leave`. Without `members`, the
 * bot is in every channel (tests that drive the adapter with no events at all).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer as readBody } from 'node:stream/consumers';
import { createSlackFiles, type FakeSlackFile } from './fake-slack-files.ts';
import { blockProblems, homeViewProblems, payloadText, viewProblems } from '../bot/slack/block-kit-limits.ts';

/** One Web API call as the fake received it (JSON-valued form fields already parsed). */
export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  token: string;
  at: number;
  /** What the fake answered. */
  response: Record<string, unknown>;
  /** performance.now() when the call was answered (for latencies measured against other fakes in this process). */
  tick?: number;
  /** HTTP status: 200, or 429 when a rate limit refused the call (then nothing changed). */
  status?: number;
  /** With a 429: the Retry-After sent, in seconds. */
  retryAfter?: number;
}

/** A token bucket for one method: `perMinute` tokens a minute, at most `burst` saved up; per channel or workspace. */
export interface SlackRateLimit {
  perMinute: number;
  burst: number;
  per: 'channel' | 'workspace';
}

/**
 * Slack's rate limits, per method, for every method Steward calls; on by default (a test that wants none passes
 * `rateLimits: {}`). The tiers are the methods' reference pages (docs.slack.dev/reference/methods/<method>, "Rate
 * Limits") and the tier table of docs.slack.dev/apis/web-api/rate-limits: Tier 1 1+ a minute, Tier 2 20+, Tier 3 50+,
 * Tier 4 100+, counted per method, per workspace and app; chat.postMessage is "special": about one a second per
 * channel, with short bursts allowed. Slack publishes no burst sizes: the ones here are guesses, kept small so a burst
 * Steward does not pace shows. Where a page says only "special rate limits apply" (assistant.threads.*), Tier 4 is
 * used and named as a guess.
 */
const TIER = {
  1: { perMinute: 1, burst: 2 },
  2: { perMinute: 20, burst: 3 },
  3: { perMinute: 50, burst: 10 },
  4: { perMinute: 100, burst: 20 },
} as const;
const workspace = (tier: keyof typeof TIER): SlackRateLimit => ({ ...TIER[tier], per: 'workspace' });

export const SLACK_RATE_LIMITS: Readonly<Record<string, SlackRateLimit>> = {
  'chat.postMessage': { perMinute: 60, burst: 3, per: 'channel' },
  'chat.update': workspace(3),
  'chat.postEphemeral': workspace(4),
  // chat.startStream and chat.stopStream: Tier 2 on their reference pages; chat.appendStream: Tier 4.
  'chat.startStream': workspace(2),
  'chat.appendStream': workspace(4),
  'chat.stopStream': workspace(2),
  'views.open': workspace(4),
  'views.update': workspace(4),
  'views.publish': workspace(4),
  'reactions.add': workspace(3),
  'reactions.remove': workspace(2),
  // Tier 3 for internal apps; the 2025 limit of 1 a minute applies to commercially distributed non-Marketplace apps.
  'conversations.replies': workspace(3),
  // "Special rate limits apply": a guess.
  'assistant.threads.setStatus': workspace(4),
  'assistant.threads.setSuggestedPrompts': workspace(4),
  'files.getUploadURLExternal': workspace(4),
  'files.completeUploadExternal': workspace(4),
  // auth.test is "special" too (Bolt calls it once at start); apps.connections.open Tier 1 (once per connection).
  'auth.test': workspace(4),
  'apps.connections.open': workspace(1),
};

/**
 * How long Slack keeps a message streaming: it ends the stream by itself after about five minutes, then refuses
 * appends with `message_not_in_streaming_state` and lets chat.update change the message (vercel/chat#607 reports the
 * error after a five-minute gap; @slack/web-api 7.17.0 exposes the stream's ts "for fallback to chat.update when a
 * stream expires server-side"). Counted here from the start, the stricter reading.
 */
export const STREAM_LIFETIME_MS = 5 * 60_000;

/** A message as it stands now in the fake's channels. */
export interface FakeMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  text: string;
  blocks: Array<Record<string, unknown>>;
  /**
   * For a streamed message: the markdown streamed so far, whether it was stopped, and when it started (the fake's
   * clock); it streams while not stopped and younger than STREAM_LIFETIME_MS.
   */
  stream?: { markdown: string; open: boolean; startedAt: number };
  /** The app's metadata on the message (https://docs.slack.dev/messaging/message-metadata). */
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  /** Files shared with the message (files.completeUploadExternal). */
  files?: FakeSlackFile[];
}

/** A running fake. */
export interface FakeSlack {
  /** For `SLACK_API_URL`: ends with `/api/`. */
  apiUrl: string;
  botToken: string;
  appToken: string;
  botUserId: string;
  /** The WebSocket URL apps.connections.open hands out (Socket Mode); unset answers `socket_mode_not_enabled`. */
  socketUrl: string | undefined;
  calls: SlackCall[];
  messages: Map<string, FakeMessage>;
  /** A fresh trigger id, as Slack puts in an interaction payload (valid 3 s, once). */
  newTriggerId(): string;
  /**
   * Another valid bot token for the same bot user, as Slack's token rotation leaves two valid at once (the new one and
   * the old until it expires): a second process given it is the same bot, and `SlackCall.token` tells its calls apart.
   */
  issueBotToken(): string;
  /** Calls of one method, in order. */
  callsOf(method: string): SlackCall[];
  /** Calls answered 429 so far, by method (empty without rate limits). */
  rateLimited: Record<string, number>;
  /** Refills every bucket (a fresh minute), keeping the counts. */
  resetRateLimits(): void;
  /** The loading status each thread shows now (`assistant.threads.setStatus`), by `<channel>:<thread ts>`. */
  statuses: Map<string, string>;
  /** The suggested prompts each assistant thread shows now (`assistant.threads.setSuggestedPrompts`), by `<channel>:<thread ts>`. */
  suggestedPrompts: Map<string, { title?: string; prompts: { title: string; message: string }[] }>;
  /** Reactions by the bot on each message, by `<channel>:<ts>`. */
  reactions: Map<string, Set<string>>;
  /** The App Home view each person sees now (views.publish), by user id. */
  homeViews: Map<string, Record<string, unknown>>;
  /** Files the app uploaded (fake-slack-files.ts), by id. */
  files: Map<string, FakeSlackFile>;
  /** The scopes of the bot token; files methods need files:write, suggested prompts assistant:write (default: both). */
  scopes: string[];
  /** When set, a call it names an error for is refused with that error (Slack's `{ ok: false, error }`). */
  refuse: ((method: string, args: Record<string, unknown>) => string | undefined) | undefined;
  /**
   * The channels the bot is a member of; null: every channel (no membership rule). Private ones (`join(c, true)`,
   * or an id starting with `G`) answer `channel_not_found` once the bot is not in them.
   */
  members: Set<string> | null;
  /** The bot joins a channel (as /invite @Steward does); `isPrivate`: a private channel. */
  join(channel: string, isPrivate?: boolean): void;
  /** The bot is removed from a channel (as /remove @Steward does). */
  leave(channel: string): void;
  /** A fresh `response_url` for a slash command; what is posted to it is recorded as method `response_url`. */
  responseUrl(): string;
  /** Answers the next `times` calls of `method` (in `channel`, if given) with 429 and this Retry-After (seconds). */
  throttle(o: { method: string; channel?: string; times: number; retryAfterS: number }): void;
  close(): Promise<void>;
}

const BOT = { user_id: 'UBOT0001', bot_id: 'BBOT0001', team_id: 'T0000001', user: 'steward', team: 'Test Team' };

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startFakeSlack(
  options: {
    botToken?: string;
    appToken?: string;
    /** Per-method limits (default `SLACK_RATE_LIMITS`, Slack's tiers); `{}`: none. */
    rateLimits?: Readonly<Record<string, SlackRateLimit>>;
    now?: () => number;
    /** false: a workspace without plan blocks, answering invalid_blocks to any message holding one. */
    planBlocks?: boolean;
    /** The channels the bot is in at the start (the membership rule is on); unset: every channel, no rule. */
    members?: readonly string[];
  } = {},
): Promise<FakeSlack> {
  const botToken = options.botToken ?? 'xoxb-test-bot-token';
  const botTokens = new Set([botToken]);
  const appToken = options.appToken ?? 'xapp-1-test-app-token';
  const calls: SlackCall[] = [];
  const messages = new Map<string, FakeMessage>();
  const triggers = new Map<string, number>();
  /** The modals open now, by view id, with their current hash. */
  const openViews = new Map<string, { hash: string; view: unknown }>();
  const tooLarge = (view: unknown) => Buffer.byteLength(JSON.stringify(view ?? null), 'utf8') > 250_000;
  const shown = (view: unknown, id = `V${randomBytes(4).toString('hex').toUpperCase()}`) => {
    const hash = `${Date.now()}.${randomBytes(4).toString('hex')}`;
    openViews.set(id, { hash, view });
    return { id, hash, ...(view as object) };
  };
  const now = options.now ?? Date.now;
  const limiter = createLimiter(options.rateLimits ?? SLACK_RATE_LIMITS, now);
  const streaming = (m: FakeMessage | undefined) =>
    m?.stream?.open === true && now() - m.stream.startedAt < STREAM_LIFETIME_MS;
  const planBlocks = options.planBlocks ?? true;
  const refusals: { method: string; channel?: string; times: number; retryAfterS: number }[] = [];
  const refusal = (method: string, channel: string): number | null => {
    const r = refusals.find((x) => x.times > 0 && x.method === method && (x.channel ?? channel) === channel);
    if (!r) return null;
    r.times -= 1;
    limiter.refused[method] = (limiter.refused[method] ?? 0) + 1;
    return r.retryAfterS;
  };
  const privateChannels = new Set<string>();
  /** Slack's answer to a post into a channel the bot is not in (null: it may post there). */
  const notMember = (channel: unknown): Record<string, unknown> | null => {
    if (typeof channel !== 'string' || !fake.members || /^[DUW]/.test(channel) || fake.members.has(channel))
      return null;
    const hidden = privateChannels.has(channel) || channel.startsWith('G');
    return { ok: false, error: hidden ? 'channel_not_found' : 'not_in_channel' };
  };
  let clock = 1_700_000_000_000;
  const nextTs = () => `${Math.floor((clock += 1000) / 1000)}.${String(calls.length).padStart(6, '0')}`;

  const methods: Record<string, (args: Record<string, unknown>) => Record<string, unknown>> = {
    'auth.test': () => ({ ok: true, url: 'https://test.slack.com/', ...BOT }),
    'apps.connections.open': () =>
      fake.socketUrl ? { ok: true, url: fake.socketUrl } : { ok: false, error: 'socket_mode_not_enabled' },
    'chat.postMessage': (args) => {
      const problem = messageProblem(args, 50, planBlocks) ?? notMember(args.channel);
      if (problem) return problem;
      const metadata = metadataOf(args);
      if (metadata === 'invalid') return { ok: false, error: 'invalid_metadata_format' };
      const ts = nextTs();
      const message: FakeMessage = {
        channel: String(args.channel),
        ts,
        threadTs: args.thread_ts as string | undefined,
        text: payloadText(args.text),
        blocks: (args.blocks as FakeMessage['blocks']) ?? [],
        ...(metadata && { metadata }),
      };
      messages.set(`${message.channel}:${ts}`, message);
      // Like Slack, the app's message in a thread ends the loading status shown there.
      if (message.threadTs) fake.statuses.delete(`${message.channel}:${message.threadTs}`);
      return {
        ok: true,
        channel: message.channel,
        ts,
        message: { type: 'message', ts, text: message.text, bot_id: BOT.bot_id },
      };
    },
    'chat.update': (args) => {
      const found = messages.get(`${String(args.channel)}:${String(args.ts)}`);
      if (!found) return { ok: false, error: 'message_not_found' };
      if (streaming(found)) return { ok: false, error: 'cant_update_message' };
      const problem = messageProblem(args, 50, planBlocks);
      if (problem) return problem;
      const metadata = metadataOf(args);
      if (metadata === 'invalid') return { ok: false, error: 'invalid_metadata_format' };
      found.text = payloadText(args.text);
      found.blocks = (args.blocks as FakeMessage['blocks']) ?? [];
      // chat.update: without `metadata` the message keeps the metadata it had.
      if (metadata) found.metadata = metadata;
      return { ok: true, channel: found.channel, ts: found.ts, text: found.text };
    },
    'chat.startStream': (args) => {
      const channel = typeof args.channel === 'string' ? args.channel : '';
      if (!channel) return { ok: false, error: 'channel_not_found' };
      const outside = notMember(channel);
      if (outside) return outside;
      if (!channel.startsWith('D') && (!args.recipient_user_id || !args.recipient_team_id))
        return { ok: false, error: 'invalid_arguments' };
      const markdown = streamedText(args);
      if (markdown === null) return { ok: false, error: 'no_text' };
      const ts = nextTs();
      const threadTs = args.thread_ts as string | undefined;
      const message: FakeMessage = {
        channel,
        ts,
        threadTs,
        text: markdown,
        blocks: [],
        stream: { markdown, open: true, startedAt: now() },
      };
      messages.set(`${channel}:${ts}`, message);
      if (threadTs) fake.statuses.delete(`${channel}:${threadTs}`);
      return { ok: true, channel, ts };
    },
    'chat.appendStream': (args) => {
      const found = messages.get(`${String(args.channel)}:${String(args.ts)}`);
      if (!found?.stream || !streaming(found))
        return { ok: false, error: found ? 'message_not_in_streaming_state' : 'message_not_found' };
      const markdown = streamedText(args);
      if (markdown === null) return { ok: false, error: 'no_text' };
      found.stream.markdown += markdown;
      found.text = found.stream.markdown;
      return { ok: true, channel: found.channel, ts: found.ts };
    },
    'chat.stopStream': (args) => {
      const found = messages.get(`${String(args.channel)}:${String(args.ts)}`);
      if (!found?.stream || !streaming(found))
        return { ok: false, error: found ? 'message_not_in_streaming_state' : 'message_not_found' };
      found.stream.markdown += streamedText(args) ?? '';
      found.stream.open = false;
      found.text = found.stream.markdown;
      return { ok: true, channel: found.channel, ts: found.ts };
    },
    // conversations.replies: a thread's messages oldest first, `limit` at a time (Slack's default and maximum is
    // 1,000), the next page by `cursor`; metadata only with include_all_metadata. The fake knows the app's messages.
    'conversations.replies': (args) => {
      if (typeof args.channel !== 'string' || !args.channel) return { ok: false, error: 'channel_not_found' };
      if (typeof args.ts !== 'string' || !/^\d+\.\d+$/.test(args.ts)) return { ok: false, error: 'thread_not_found' };
      const withMetadata = args.include_all_metadata === true || args.include_all_metadata === 'true';
      const thread = [...messages.values()]
        .filter((m) => m.channel === args.channel && (m.ts === args.ts || m.threadTs === args.ts))
        .sort((a, b) => Number(a.ts) - Number(b.ts));
      const limit = Math.min(1000, Math.max(1, Number(args.limit ?? 1000) || 1000));
      const from = typeof args.cursor === 'string' && args.cursor ? Number(args.cursor) : 0;
      const page = thread.slice(from, from + limit).map((m) => ({
        type: 'message',
        ts: m.ts,
        ...(m.threadTs && { thread_ts: m.threadTs }),
        text: m.text,
        bot_id: BOT.bot_id,
        ...(withMetadata && m.metadata && { metadata: m.metadata }),
      }));
      const more = from + limit < thread.length;
      return {
        ok: true,
        messages: page,
        has_more: more,
        response_metadata: { next_cursor: more ? String(from + limit) : '' },
      };
    },
    'chat.postEphemeral': (args) => {
      if (typeof args.user !== 'string' || !args.user) return { ok: false, error: 'user_not_found' };
      return messageProblem(args, 50, planBlocks) ?? notMember(args.channel) ?? { ok: true, message_ts: nextTs() };
    },
    'assistant.threads.setStatus': (args) => {
      if (typeof args.channel_id !== 'string' || typeof args.thread_ts !== 'string')
        return { ok: false, error: 'invalid_arguments' };
      if (typeof args.status !== 'string') return { ok: false, error: 'invalid_arguments' };
      const key = `${args.channel_id}:${args.thread_ts}`;
      if (args.status) fake.statuses.set(key, args.status);
      else fake.statuses.delete(key);
      return { ok: true };
    },
    // https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts: scope assistant:write, "up to
    // four suggested prompts", each with a `title` and a `message`; errors channel_not_found and invalid_thread_ts.
    // Slack publishes no length limit for either, so the fake checks none.
    'assistant.threads.setSuggestedPrompts': (args) => {
      if (!fake.scopes.includes('assistant:write'))
        return { ok: false, error: 'missing_scope', needed: 'assistant:write', provided: fake.scopes.join(',') };
      if (typeof args.channel_id !== 'string' || !args.channel_id) return { ok: false, error: 'channel_not_found' };
      if (typeof args.thread_ts !== 'string' || !/^\d+\.\d+$/.test(args.thread_ts))
        return { ok: false, error: 'invalid_thread_ts' };
      const prompts = args.prompts;
      const valid = (p: unknown) => {
        const { title, message } = (p ?? {}) as Record<string, unknown>;
        return typeof title === 'string' && title !== '' && typeof message === 'string' && message !== '';
      };
      if (!Array.isArray(prompts) || prompts.length === 0 || prompts.length > 4 || !prompts.every(valid))
        return { ok: false, error: 'invalid_arguments' };
      if (args.title !== undefined && typeof args.title !== 'string') return { ok: false, error: 'invalid_arguments' };
      fake.suggestedPrompts.set(`${args.channel_id}:${args.thread_ts}`, {
        ...(typeof args.title === 'string' && { title: args.title }),
        prompts: prompts as { title: string; message: string }[],
      });
      return { ok: true };
    },
    'reactions.add': (args) => {
      const key = `${String(args.channel)}:${String(args.timestamp)}`;
      const names = fake.reactions.get(key) ?? new Set<string>();
      if (names.has(String(args.name))) return { ok: false, error: 'already_reacted' };
      fake.reactions.set(key, names.add(String(args.name)));
      return { ok: true };
    },
    'reactions.remove': (args) => {
      const names = fake.reactions.get(`${String(args.channel)}:${String(args.timestamp)}`);
      return names?.delete(String(args.name)) ? { ok: true } : { ok: false, error: 'no_reaction' };
    },
    'chat.getPermalink': (args) => {
      const ts = typeof args.message_ts === 'string' ? args.message_ts : '';
      if (typeof args.channel !== 'string' || !/^\d+\.\d+$/.test(ts)) return { ok: false, error: 'message_not_found' };
      return { ok: true, channel: args.channel, permalink: permalink(args.channel, ts) };
    },
    'views.publish': (args) => {
      if (typeof args.user_id !== 'string' || !/^[UW][A-Z0-9]+$/.test(args.user_id))
        return { ok: false, error: 'user_not_found' };
      if (tooLarge(args.view)) return { ok: false, error: 'view_too_large' };
      const problems = homeViewProblems(args.view);
      if (problems.length > 0) return invalid(problems);
      const view = { id: `V${randomBytes(4).toString('hex').toUpperCase()}`, ...(args.view as object) };
      fake.homeViews.set(args.user_id, view);
      return { ok: true, view };
    },
    'views.open': (args) => {
      const issued = triggers.get(String(args.trigger_id));
      if (issued === undefined) return { ok: false, error: 'invalid_trigger_id' };
      triggers.delete(String(args.trigger_id));
      if (Date.now() - issued > 3_000) return { ok: false, error: 'expired_trigger_id' };
      if (tooLarge(args.view)) return { ok: false, error: 'view_too_large' };
      const problems = viewProblems(args.view);
      if (problems.length > 0) return invalid(problems);
      return { ok: true, view: shown(args.view) };
    },
    'views.update': (args) => {
      const current = openViews.get(String(args.view_id));
      if (!current) return { ok: false, error: 'not_found' };
      if (args.hash !== undefined && args.hash !== current.hash) return { ok: false, error: 'hash_conflict' };
      if (tooLarge(args.view)) return { ok: false, error: 'view_too_large' };
      const problems = viewProblems(args.view);
      if (problems.length > 0) return invalid(problems);
      return { ok: true, view: shown(args.view, String(args.view_id)) };
    },
  };

  const uploads = createSlackFiles({
    uploadUrl: () => `http://127.0.0.1:${port}/upload/`,
    scopesOf: () => fake.scopes,
    share: (channel, threadTs, text, files) => {
      const ts = nextTs();
      messages.set(`${channel}:${ts}`, { channel, ts, threadTs, text, blocks: [], files });
      return ts;
    },
  });

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) =>
      send(res, 500, { ok: false, error: 'fake_crashed', detail: String(err) }),
    );
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = /^\/api\/([\w.]+)$/.exec((req.url ?? '').split('?')[0] ?? '')?.[1];
    const raw = await readBody(req);
    // The upload URL files.getUploadURLExternal gave: it takes the bytes and no token (the URL is the secret).
    const upload = /^\/upload\/(F[A-Z0-9]+)$/.exec(req.url ?? '')?.[1];
    if (req.method === 'POST' && upload) {
      const status = await uploads.upload(upload, raw, req.headers['content-type'] ?? '');
      calls.push({
        method: 'upload',
        args: { file_id: upload, bytes: raw.length },
        token: '',
        at: Date.now(),
        response: {},
        status,
      });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 200 ? `OK - ${raw.length}` : 'failed');
      return;
    }
    const args = parseBody(raw.toString('utf8'), req.headers['content-type'] ?? '');
    // A slash command's response_url takes no token: the URL itself is the secret.
    if (req.method === 'POST' && (req.url ?? '').startsWith('/commands/')) {
      calls.push({ method: 'response_url', args, token: '', at: Date.now(), response: { ok: true }, status: 200 });
      send(res, 200, { ok: true });
      return;
    }
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '') || payloadText(args.token);
    let response: Record<string, unknown>;
    if (req.method !== 'POST' || !method) response = { ok: false, error: 'unknown_method' };
    else if (!token) response = { ok: false, error: 'not_authed' };
    // Socket Mode's handshake takes the app-level token; every other method the bot token.
    else if (method === 'apps.connections.open' ? token !== appToken : !botTokens.has(token))
      response = { ok: false, error: 'invalid_auth' };
    else {
      const retryAfterS = refusal(method, payloadText(args.channel)) ?? limiter.take(method, payloadText(args.channel));
      if (retryAfterS !== null) {
        response = { ok: false, error: 'ratelimited' };
        calls.push({ method, args, token, at: Date.now(), response, status: 429, retryAfter: retryAfterS });
        send(res, 429, response, { 'retry-after': String(retryAfterS) });
        return;
      }
      const refused = fake.refuse?.(method, args);
      response = refused
        ? { ok: false, error: refused }
        : (methods[method]?.(args) ?? uploads.methods[method]?.(args, token) ?? { ok: false, error: 'unknown_method' });
    }
    calls.push({
      method: method ?? req.url ?? '?',
      args,
      token,
      at: Date.now(),
      tick: performance.now(),
      response,
      status: 200,
    });
    send(res, 200, response);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeSlack = {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    botToken,
    appToken,
    botUserId: BOT.user_id,
    socketUrl: undefined,
    calls,
    messages,
    newTriggerId: () => {
      const id = `${Date.now()}.${randomBytes(6).toString('hex')}`;
      triggers.set(id, Date.now());
      return id;
    },
    issueBotToken: () => {
      const issued = `xoxb-test-bot-token-${botTokens.size + 1}`;
      botTokens.add(issued);
      return issued;
    },
    callsOf: (method) => calls.filter((c) => c.method === method),
    rateLimited: limiter.refused,
    resetRateLimits: () => limiter.reset(),
    statuses: new Map(),
    suggestedPrompts: new Map(),
    reactions: new Map(),
    homeViews: new Map(),
    files: uploads.files,
    scopes: ['chat:write', 'files:write', 'assistant:write'],
    refuse: undefined,
    members: options.members ? new Set(options.members) : null,
    join: (channel, isPrivate = false) => {
      fake.members?.add(channel);
      if (isPrivate) privateChannels.add(channel);
    },
    leave: (channel) => {
      if (!fake.members) throw new Error('the membership rule is off: start the fake with `members`');
      fake.members.delete(channel);
    },
    responseUrl: () => `http://127.0.0.1:${port}/commands/T0000001/${randomBytes(6).toString('hex')}`,
    throttle: (o) => void refusals.push({ ...o }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}

/** Token buckets by method and scope; `take` answers null (allowed) or the Retry-After in whole seconds. */
function createLimiter(limits: Readonly<Record<string, SlackRateLimit>>, now: () => number) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const refused: Record<string, number> = {};
  return {
    refused,
    reset: () => buckets.clear(),
    take(method: string, channel: string): number | null {
      const limit = limits[method];
      if (!limit) return null;
      const key = limit.per === 'channel' ? `${method}:${channel}` : method;
      const t = now();
      const perMs = limit.perMinute / 60_000;
      const b = buckets.get(key) ?? { tokens: limit.burst, at: t };
      b.tokens = Math.min(limit.burst, b.tokens + (t - b.at) * perMs);
      b.at = t;
      buckets.set(key, b);
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return null;
      }
      refused[method] = (refused[method] ?? 0) + 1;
      // Slack sends whole seconds; never 0, which clients would read as "retry at once".
      return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
    },
  };
}

/** A message link in Slack's form: the ts without its dot, after `p`. */
function permalink(channel: string, ts: string): string {
  return `https://test.slack.com/archives/${channel}/p${ts.replace('.', '')}`;
}

function messageProblem(
  args: Record<string, unknown>,
  maxBlocks: number,
  planBlocks: boolean,
): Record<string, unknown> | null {
  if (typeof args.channel !== 'string' || !args.channel) return { ok: false, error: 'channel_not_found' };
  const text = typeof args.text === 'string' ? args.text : '';
  if (!text && !args.blocks) return { ok: false, error: 'no_text' };
  if (text.length > 40_000) return { ok: false, error: 'msg_too_long' };
  if (args.blocks === undefined) return null;
  if (!Array.isArray(args.blocks)) return invalid(['blocks must be an array']);
  const plan = (args.blocks as { type?: unknown }[]).findIndex((b) => b.type === 'plan' || b.type === 'task_card');
  if (!planBlocks && plan >= 0) return invalid([`/blocks/${plan}: unsupported block type`]);
  const { problems, textLength } = blockProblems(args.blocks, maxBlocks);
  if (problems.length > 0) return invalid(problems);
  if (textLength > 12_000) return { ok: false, error: 'msg_blocks_too_long' };
  return null;
}

/** The markdown a streaming call carries (`markdown_text`, or `markdown_text` chunks); null when it carries none. */
function streamedText(args: Record<string, unknown>): string | null {
  if (typeof args.markdown_text === 'string' && args.markdown_text) return args.markdown_text;
  if (!Array.isArray(args.chunks)) return null;
  const texts = (args.chunks as { type?: unknown; text?: unknown }[])
    .filter((c) => c.type === 'markdown_text' && typeof c.text === 'string')
    .map((c) => c.text as string);
  return texts.length > 0 ? texts.join('') : null;
}

function invalid(problems: string[]): Record<string, unknown> {
  return {
    ok: false,
    error: 'invalid_blocks',
    errors: problems,
    response_metadata: { messages: problems.map((p) => `[ERROR] ${p}`) },
  };
}

// Web API clients send form fields; Block Kit arrays and objects arrive JSON-encoded inside them.
/**
 * A message's `metadata` argument: absent, as Slack stores it, or invalid (an `event_type` string and an
 * `event_payload` object are required: https://docs.slack.dev/messaging/message-metadata).
 */
function metadataOf(args: Record<string, unknown>): FakeMessage['metadata'] | 'invalid' | undefined {
  const raw = args.metadata;
  if (raw === undefined) return undefined;
  const m = typeof raw === 'string' ? tryJson(raw) : raw;
  if (typeof m !== 'object' || m === null) return 'invalid';
  const { event_type: type, event_payload: payload } = m as Record<string, unknown>;
  if (typeof type !== 'string' || !/^\w+$/.test(type)) return 'invalid';
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return 'invalid';
  return { event_type: type, event_payload: payload as Record<string, unknown> };
}

function parseBody(raw: string, contentType: string): Record<string, unknown> {
  if (contentType.includes('application/json')) return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    out[key] = value.startsWith('[') || value.startsWith('{') ? tryJson(value) : value;
  }
  return out;
}

function tryJson(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}
