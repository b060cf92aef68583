/**
 * The fake Discord's REST API (`/api/v10/...`): the routes Steward's adapter uses, with Discord's status codes and
 * error bodies (`{ code, message }`), Discord's rate limits per route and bucket (fake-discord-ratelimits.ts) and
 * opt-in 429s on top (`throttle`), the limits of
 * test/fakes/discord-limits.ts on every message body (400, code 50035), and Create Message's `nonce` and
 * `enforce_nonce` (fake-discord-nonces.ts). Channels, messages, threads, DMs, users, the application and its commands
 * live here; the interaction endpoints in fake-discord-interactions.ts share the state and helpers. Every call is recorded with its route template, body, status and problems.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { buffer as readBody } from 'node:stream/consumers';
import { ChannelType, MessageFlags, type APIChannel, type APIMessage, type APIUser } from 'discord.js';
import { commandProblems, messageProblems } from './discord-limits.ts';
import { earlierWithNonce, nonceProblems } from './fake-discord-nonces.ts';
import { createDmChannel, createMessage, createThread } from './fake-discord-payloads.ts';
import { bucketOf, type RateLimits } from './fake-discord-ratelimits.ts';
import { P, refuseWithout } from './fake-discord-permissions.ts';

/** A file part of a multipart request, as received. */
export interface UploadedFile {
  field: string;
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** One REST call as the fake answered it. */
export interface DiscordCall {
  method: string;
  /** The route template, e.g. `/channels/:channel/messages/:message`. */
  route: string;
  path: string;
  query: string;
  body: unknown;
  status: number;
  /** Discord's JSON error code when refused (50035, 10062, 40060…). */
  code?: number;
  /** What the limits checker found wrong with the body ([] when it passed or was not a message). */
  problems: string[];
  /** The files of a multipart body (`files[n]` parts), in order. */
  files?: UploadedFile[];
  /**
   * `allowed_mentions` as sent, for a message body (create, edit, callback data, webhook); null when a body with text
   * had none (then Discord pings whatever the text mentions).
   */
  allowedMentions?: unknown;
  /** The interaction a callback or webhook call belongs to. */
  interactionId?: string;
  /** Which of several processes on the bot token sent it, when it came through `apiUrlAs` (test bookkeeping). */
  caller?: string;
  at: number;
  /** performance.now() when answered (to compare with other fakes in this process). */
  tick: number;
}

/** A message as it stands now, and how many times it was edited. */
export interface StoredMessage {
  message: APIMessage;
  edits: number;
  /** The files attached when it was created, bytes and all. */
  files?: UploadedFile[];
  ephemeral: boolean;
  interactionId?: string;
}

/** An interaction the gateway dispatched, and what the app has done with it. */
export interface StoredInteraction {
  id: string;
  token: string;
  type: number;
  channelId: string;
  guildId?: string;
  dispatchedAt: number;
  /** Who pressed, typed or submitted it. */
  userId?: string;
  /** The message a component was on (buttons, selects). */
  componentMessageId?: string;
  callbackType?: number;
  /** The message `@original` names once acknowledged. */
  originalId?: string;
  modal?: unknown;
  /** An autocomplete interaction's answer, once given. */
  choices?: { name: string; value: string }[];
}

/** Which calls `throttle` refuses: a method and a route template or a path pattern. */
export interface CallMatcher {
  method?: string;
  route?: string | RegExp;
}

interface Throttle {
  matcher: CallMatcher;
  times: number;
  retryAfterSeconds: number;
}

/** A refusal `refuse` puts on matching calls: Discord's status and JSON error code (e.g. 403 / 50013). */
export interface Refusal {
  matcher: CallMatcher;
  times: number;
  status: number;
  code: number;
  message: string;
}

/** The fake's state the routes read and change. */
export interface RestState {
  token: string;
  botUser: APIUser;
  applicationId: string;
  application: () => Record<string, unknown>;
  gatewayUrl: () => string;
  now: () => number;
  newId: () => string;
  channels: Map<string, APIChannel>;
  messages: Map<string, StoredMessage>;
  users: Map<string, APIUser>;
  interactions: Map<string, StoredInteraction>;
  commands: Map<string, unknown[]>;
  calls: DiscordCall[];
  throttles: Throttle[];
  refusals: Refusal[];
  /** Discord's per-route and global rate limits; undefined when a test turned them off (no headers then). */
  rateLimits?: RateLimits;
  /** The bot's permissions in a guild channel (fake-discord-permissions.ts); undefined for a DM, where none apply. */
  permissionsIn: (channel: APIChannel) => bigint | undefined;
  dispatch: (t: string, d: unknown) => void;
}

export type Body = Record<string, unknown>;
export interface Ctx {
  params: Record<string, string>;
  body: Body;
  query: URLSearchParams;
  call: DiscordCall;
}
export interface Answer {
  status: number;
  body?: unknown;
}
export type Handler = (s: RestState, c: Ctx) => Answer;
export interface Route {
  method: string;
  route: string;
  auth: boolean;
  run: Handler;
}

/** Discord's error body; `status` with it. */
export const fail = (status: number, code: number, message: string, errors?: unknown): Answer => ({
  status,
  body: { message, code, ...(errors ? { errors } : {}) },
});
export const ok = (body?: unknown): Answer => (body === undefined ? { status: 204 } : { status: 200, body });
export const iso = (s: RestState) => new Date(s.now()).toISOString();

/** Refuses a body that breaks Discord's limits, as 50035 Invalid Form Body naming each problem. */
export function refuseInvalid(c: Ctx, problems: string[]): Answer | undefined {
  c.call.problems = problems;
  if (problems.length === 0) return undefined;
  const errors: Record<string, unknown> = {};
  for (const p of problems) errors[p.split(':')[0] ?? p] = { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: p }] };
  return fail(400, 50035, 'Invalid Form Body', errors);
}

/** Refuses a message body over Discord's limits (and `more` problems a route adds); notes its `allowed_mentions`. */
export function checkMessage(c: Ctx, body: Body, more: string[] = []): Answer | undefined {
  // Text sent without allowed_mentions pings what it names (Discord's default): recorded as null, for tests to see.
  if ('allowed_mentions' in body) c.call.allowedMentions = body.allowed_mentions;
  else if (typeof body.content === 'string' && body.content !== '') c.call.allowedMentions = null;
  return refuseInvalid(c, [...messageProblems(body), ...more]);
}

/**
 * Discord's upload limits for a bot in a server without boosts (https://discord.com/developers/docs/reference#uploading-files):
 * 10 MiB of files in one request, answered 413 with code 40005 "Request entity too large"; at most 10 attachments to
 * a message (Invalid Form Body, `files: Must be 10 or fewer in length.`).
 */
export const DISCORD_UPLOAD_LIMITS = { maxBytes: 10 * 1024 * 1024, maxFiles: 10 } as const;

function fileProblems(files: readonly UploadedFile[] | undefined): string[] {
  return (files?.length ?? 0) > DISCORD_UPLOAD_LIMITS.maxFiles
    ? [`files: Must be ${DISCORD_UPLOAD_LIMITS.maxFiles} or fewer in length.`]
    : [];
}

function tooLarge(files: readonly UploadedFile[] | undefined): boolean {
  return (files ?? []).reduce((n, f) => n + f.bytes.length, 0) > DISCORD_UPLOAD_LIMITS.maxBytes;
}

export const isEmpty = (b: Body) =>
  !b.content && !(Array.isArray(b.embeds) && b.embeds.length) && !(Array.isArray(b.components) && b.components.length);

/** Creates a message in a channel; non-ephemeral messages also reach the gateway, as Discord echoes them. */
export function postMessage(
  s: RestState,
  channel: APIChannel,
  body: Body,
  extra: Partial<StoredMessage> = {},
  files: readonly UploadedFile[] = [],
): APIMessage {
  const guildId = 'guild_id' in channel ? (channel.guild_id ?? undefined) : undefined;
  const ref = body.message_reference as { message_id?: string } | undefined;
  const message = createMessage({
    id: s.newId(),
    channelId: channel.id,
    guildId,
    author: s.botUser,
    content: typeof body.content === 'string' ? body.content : '',
    at: iso(s),
    embeds: body.embeds as unknown[] | undefined,
    components: body.components as unknown[] | undefined,
    flags: Number(body.flags ?? 0),
    ...((typeof body.nonce === 'string' || typeof body.nonce === 'number') && { nonce: body.nonce }),
    ...(extra.interactionId ? { webhookId: s.applicationId } : {}),
    ...(ref?.message_id
      ? { reference: { message_id: ref.message_id, channel_id: channel.id, guild_id: guildId } }
      : {}),
  });
  message.attachments = files.map((f) => {
    const id = s.newId();
    return {
      id,
      filename: f.name,
      size: f.bytes.length,
      content_type: f.contentType,
      url: `https://cdn.discordapp.com/attachments/${channel.id}/${id}/${f.name}`,
      proxy_url: `https://media.discordapp.net/attachments/${channel.id}/${id}/${f.name}`,
    };
  });
  const ephemeral = (message.flags ?? 0) & MessageFlags.Ephemeral ? true : false;
  s.messages.set(message.id, {
    message,
    edits: 0,
    ephemeral,
    ...extra,
    ...(files.length > 0 && { files: [...files] }),
  });
  if (!ephemeral) s.dispatch('MESSAGE_CREATE', message);
  return message;
}

/** Applies an edit (the fields present replace the old ones), counting it and echoing MESSAGE_UPDATE. */
export function editMessage(s: RestState, stored: StoredMessage, body: Body): APIMessage {
  const m = stored.message as unknown as Body;
  for (const key of ['content', 'embeds', 'components', 'allowed_mentions'] as const)
    if (key in body) m[key] = body[key];
  // An edit ends the "thinking…" state of a deferred reply, as on Discord.
  m.flags = Number(m.flags ?? 0) & ~MessageFlags.Loading;
  m.edited_timestamp = iso(s);
  stored.edits += 1;
  if (!stored.ephemeral) s.dispatch('MESSAGE_UPDATE', stored.message);
  return stored.message;
}

export const channelOf = (s: RestState, id: string | undefined) => (id ? s.channels.get(id) : undefined);

/**
 * Refuses a call the bot may not make in `channel` (403, 50001 or 50013: fake-discord-permissions.ts); VIEW_CHANNEL
 * is always needed, `needed` besides. The missing permissions are noted on the call for tests to read.
 */
export function forbidden(s: RestState, c: Ctx, channel: APIChannel, needed: bigint[] = []): Answer | undefined {
  const has = s.permissionsIn(channel);
  const refused = has === undefined ? undefined : refuseWithout(has, needed);
  if (!refused) return undefined;
  c.call.problems = refused.missing.map((p) => `missing permission: ${p}`);
  return { status: refused.status, body: refused.body };
}

const isThread = (channel: APIChannel) =>
  channel.type === ChannelType.PublicThread || channel.type === ChannelType.PrivateThread;
export const unknownChannel = () => fail(404, 10003, 'Unknown Channel');
export const unknownMessage = () => fail(404, 10008, 'Unknown Message');

/**
 * Threads archive themselves after `auto_archive_duration` minutes without activity, one of 60, 1440, 4320 or 10080
 * (Discord API reference, Channel resource: "Start Thread from Message", auto_archive_duration; the longer durations
 * are no longer boost-locked, discord-api-docs#4825). In an archived thread Discord refuses to edit a message with
 * JSON error code 50083, "Operation cannot be performed on an archived thread" (Opcodes and Status Codes, JSON Error
 * Codes), while a message sent to an archived thread that is not locked unarchives it (Threads topic, "Archiving").
 */
export const ARCHIVE_DURATIONS = [60, 1440, 4320, 10080];
const threadMeta = (channel: APIChannel | undefined) =>
  channel && 'thread_metadata' in channel
    ? (channel.thread_metadata as {
        archived: boolean;
        locked?: boolean;
        archive_timestamp: string;
        auto_archive_duration: number;
      })
    : undefined;
export const archivedThread = () => fail(400, 50083, 'Operation cannot be performed on an archived thread');

/** Archives or unarchives a thread (as Discord does after its inactivity time, or PATCH /channels/:id), with THREAD_UPDATE. */
export function setArchived(s: RestState, thread: APIChannel, archived: boolean): void {
  const meta = threadMeta(thread);
  if (!meta || meta.archived === archived) return;
  meta.archived = archived;
  meta.archive_timestamp = iso(s);
  s.dispatch('THREAD_UPDATE', thread);
}

const channelRoutes: Route[] = [
  {
    method: 'GET',
    route: '/channels/:channel',
    auth: true,
    run: (s, c) => {
      const channel = channelOf(s, c.params.channel);
      return channel ? (forbidden(s, c, channel) ?? ok(channel)) : unknownChannel();
    },
  },
  {
    // Modify Channel, for a thread: archived, locked and auto_archive_duration (nothing else is faked).
    method: 'PATCH',
    route: '/channels/:channel',
    auth: true,
    run: (s, c) => {
      const channel = channelOf(s, c.params.channel);
      const meta = threadMeta(channel);
      if (!channel) return unknownChannel();
      if (!meta) return fail(400, 50024, 'Cannot execute action on this channel type');
      const denied = forbidden(s, c, channel);
      if (denied) return denied;
      const duration = c.body.auto_archive_duration;
      if (duration !== undefined && !ARCHIVE_DURATIONS.includes(Number(duration)))
        return (
          refuseInvalid(c, [
            `auto_archive_duration: ${JSON.stringify(duration)} is not one of ${ARCHIVE_DURATIONS.join(', ')}`,
          ]) ?? fail(400, 50035, 'Invalid')
        );
      if (typeof duration === 'number') meta.auto_archive_duration = duration;
      if (typeof c.body.locked === 'boolean') meta.locked = c.body.locked;
      if (typeof c.body.archived === 'boolean') setArchived(s, channel, c.body.archived);
      return ok(channel);
    },
  },
  {
    method: 'POST',
    route: '/channels/:channel/messages',
    auth: true,
    run: (s, c) => {
      const channel = channelOf(s, c.params.channel);
      if (!channel) return unknownChannel();
      // Create Message: SEND_MESSAGES, or SEND_MESSAGES_IN_THREADS in a thread, and READ_MESSAGE_HISTORY for a reply
      // (API reference, Message resource, "Create Message"). Embeds without EMBED_LINKS and files without ATTACH_FILES
      // are refused with 50013 as bot authors commonly report (the reference does not spell those two out).
      const denied = forbidden(s, c, channel, [
        isThread(channel) ? P.SendMessagesInThreads : P.SendMessages,
        ...(Array.isArray(c.body.embeds) && c.body.embeds.length > 0 ? [P.EmbedLinks] : []),
        ...(c.call.files?.length ? [P.AttachFiles] : []),
        ...(c.body.message_reference ? [P.ReadMessageHistory] : []),
      ]);
      if (denied) return denied;
      const refused = checkMessage(c, c.body, [...nonceProblems(c.body), ...fileProblems(c.call.files)]);
      if (refused) return refused;
      if (tooLarge(c.call.files)) return fail(413, 40005, 'Request entity too large');
      if (isEmpty(c.body) && !c.call.files?.length) return fail(400, 50006, 'Cannot send an empty message');
      const meta = threadMeta(channel);
      if (meta?.archived && meta.locked) return archivedThread();
      if (meta?.archived) setArchived(s, channel, false);
      // A repeat of an enforced nonce gets the message it made, and nothing is created or dispatched.
      return ok(earlierWithNonce(s, s.botUser.id, c.body) ?? postMessage(s, channel, c.body, {}, c.call.files));
    },
  },
  {
    method: 'GET',
    route: '/channels/:channel/messages/:message',
    auth: true,
    run: (s, c) => {
      const stored = s.messages.get(c.params.message ?? '');
      const channel = channelOf(s, c.params.channel);
      // Get Channel Message: READ_MESSAGE_HISTORY besides VIEW_CHANNEL (API reference, "Get Channel Message").
      const denied = channel && forbidden(s, c, channel, [P.ReadMessageHistory]);
      if (denied) return denied;
      return stored && stored.message.channel_id === c.params.channel ? ok(stored.message) : unknownMessage();
    },
  },
  {
    method: 'PATCH',
    route: '/channels/:channel/messages/:message',
    auth: true,
    run: (s, c) => {
      const stored = s.messages.get(c.params.message ?? '');
      if (!stored || stored.message.channel_id !== c.params.channel) return unknownMessage();
      const channel = channelOf(s, c.params.channel);
      const denied = channel && forbidden(s, c, channel);
      if (denied) return denied;
      if (stored.message.author.id !== s.botUser.id)
        return fail(403, 50005, 'Cannot edit a message authored by another user');
      if (threadMeta(channelOf(s, c.params.channel))?.archived) return archivedThread();
      return checkMessage(c, c.body) ?? ok(editMessage(s, stored, c.body));
    },
  },
  {
    method: 'POST',
    route: '/channels/:channel/messages/:message/threads',
    auth: true,
    run: (s, c) => {
      const parent = channelOf(s, c.params.channel);
      if (!parent) return unknownChannel();
      const stored = s.messages.get(c.params.message ?? '');
      if (!stored || stored.message.channel_id !== parent.id) return unknownMessage();
      if (stored.message.thread) return fail(400, 160004, 'A thread has already been created for this message');
      const thread = startThread(s, c, parent, stored.message.id);
      if ('status' in thread) return thread;
      (stored.message as unknown as Body).thread = thread;
      return ok(thread);
    },
  },
  {
    method: 'POST',
    route: '/channels/:channel/threads',
    auth: true,
    run: (s, c) => {
      const parent = channelOf(s, c.params.channel);
      if (!parent) return unknownChannel();
      const thread = startThread(s, c, parent);
      return 'status' in thread ? thread : ok(thread);
    },
  },
  {
    method: 'POST',
    route: '/channels/:channel/typing',
    auth: true,
    run: (s, c) => {
      const channel = channelOf(s, c.params.channel);
      return channel ? (forbidden(s, c, channel) ?? ok()) : unknownChannel();
    },
  },
  {
    method: 'PUT',
    route: '/channels/:channel/thread-members/@me',
    auth: true,
    run: (s, c) => (channelOf(s, c.params.channel)?.type === ChannelType.PublicThread ? ok() : unknownChannel()),
  },
];

/** A public thread under a guild text channel (name 1-100 characters); THREAD_CREATE goes to the gateway. */
/** A thread in `parent`; one started from a message has that message's id, as in Discord. */
function startThread(s: RestState, c: Ctx, parent: APIChannel, id = s.newId()): APIChannel | Answer {
  if (!('guild_id' in parent) || !parent.guild_id || parent.type !== ChannelType.GuildText)
    return fail(400, 50024, 'Cannot execute action on this channel type');
  // A public thread needs CREATE_PUBLIC_THREADS in its parent (Permissions topic, the permissions table; Threads topic,
  // "Permissions").
  const denied = forbidden(s, c, parent, [P.CreatePublicThreads]);
  if (denied) return denied;
  const name = typeof c.body.name === 'string' ? c.body.name : '';
  if (name.length < 1 || name.length > 100)
    return refuseInvalid(c, [`name: ${name.length} characters, must be 1 to 100`]) ?? fail(400, 50035, 'Invalid');
  const duration = c.body.auto_archive_duration;
  if (duration !== undefined && !ARCHIVE_DURATIONS.includes(Number(duration)))
    return (
      refuseInvalid(c, [
        `auto_archive_duration: ${JSON.stringify(duration)} is not one of ${ARCHIVE_DURATIONS.join(', ')}`,
      ]) ?? fail(400, 50035, 'Invalid')
    );
  const thread = createThread({
    id,
    guildId: parent.guild_id,
    parentId: parent.id,
    ownerId: s.botUser.id,
    name,
    at: iso(s),
    autoArchiveMinutes: typeof c.body.auto_archive_duration === 'number' ? c.body.auto_archive_duration : undefined,
  });
  s.channels.set(thread.id, thread);
  s.dispatch('THREAD_CREATE', { ...thread, newly_created: true });
  return thread;
}

const appRoutes: Route[] = [
  {
    method: 'GET',
    route: '/gateway/bot',
    auth: true,
    run: (s) =>
      ok({
        url: s.gatewayUrl(),
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: 1 },
      }),
  },
  { method: 'GET', route: '/users/@me', auth: true, run: (s) => ok(s.botUser) },
  { method: 'GET', route: '/applications/@me', auth: true, run: (s) => ok(s.application()) },
  {
    method: 'GET',
    route: '/users/:user',
    auth: true,
    run: (s, c) => {
      const user = s.users.get(c.params.user ?? '');
      return user ? ok(user) : fail(404, 10013, 'Unknown User');
    },
  },
  {
    method: 'POST',
    route: '/users/@me/channels',
    auth: true,
    run: (s, c) => {
      const recipient = s.users.get(String(c.body.recipient_id));
      if (!recipient) return fail(400, 50033, 'Invalid Recipient(s)');
      const existing = [...s.channels.values()].find(
        (ch) => ch.type === ChannelType.DM && ch.recipients?.[0]?.id === recipient.id,
      );
      if (existing) return ok(existing);
      const dm = createDmChannel({ id: s.newId(), recipient });
      s.channels.set(dm.id, dm);
      return ok(dm);
    },
  },
  { method: 'PUT', route: '/applications/:app/commands', auth: true, run: (s, c) => putCommands(s, c, '') },
  {
    method: 'PUT',
    route: '/applications/:app/guilds/:guild/commands',
    auth: true,
    run: (s, c) => putCommands(s, c, c.params.guild ?? ''),
  },
];

/** Replaces the app's commands (global, or one guild's) and answers them with ids, as Discord does. */
function putCommands(s: RestState, c: Ctx, guildId: string): Answer {
  if (c.params.app !== s.applicationId) return fail(403, 50001, 'Missing Access');
  const list = Array.isArray(c.body) ? (c.body as Body[]) : [];
  const refused = refuseInvalid(
    c,
    list.flatMap((command) => commandProblems(command)),
  );
  if (refused) return refused;
  const stored = list.map((command) => ({
    id: s.newId(),
    application_id: s.applicationId,
    version: s.newId(),
    type: 1,
    default_member_permissions: null,
    nsfw: false,
    ...(guildId ? { guild_id: guildId } : {}),
    ...command,
  }));
  s.commands.set(guildId, stored);
  return ok(stored);
}

/** The channel, user, application and gateway routes (interactions live in fake-discord-interactions.ts). */
export const restRoutes: Route[] = [...channelRoutes, ...appRoutes];

function match(
  routes: Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | undefined {
  // discord.js escapes `@me` and `@original` as `%40me`, `%40original`.
  const parts = path.split('/').map((p) => decodeURIComponent(p));
  for (const route of routes) {
    if (route.method !== method) continue;
    const tpl = route.route.split('/');
    if (tpl.length !== parts.length) continue;
    const params: Record<string, string> = {};
    if (tpl.every((t, k) => (t.startsWith(':') ? ((params[t.slice(1)] = parts[k] ?? ''), true) : t === parts[k])))
      return { route, params };
  }
  return undefined;
}

const matches = (m: CallMatcher, call: DiscordCall) =>
  (!m.method || m.method.toUpperCase() === call.method) &&
  (!m.route || (typeof m.route === 'string' ? m.route === call.route : m.route.test(call.path)));

/** The headers of an opt-in 429 (`throttle`): the bucket emptied for `resetAfter` seconds. */
function throttledHeaders(s: RestState, call: DiscordCall, resetAfter: number): Record<string, string> {
  return {
    'x-ratelimit-limit': '5',
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': ((s.now() + resetAfter * 1000) / 1000).toFixed(3),
    'x-ratelimit-reset-after': resetAfter.toFixed(3),
    'x-ratelimit-bucket': bucketOf(`${call.method} ${call.route}`),
  };
}

const UNLIMITED: Record<string, string> = {};

/** The HTTP handler for `/api/v10/...` over `routes`; anything else is 404. */
export function createRestHandler(
  s: RestState,
  routes: Route[],
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const bytes = await readBody(req);
    const parts = await multipart(req.headers['content-type'] ?? '', bytes);
    const raw = parts ? parts.payload : bytes.toString('utf8');
    // `/as/<caller>/api/...` is the same API, each call marked with the process that sent it (`apiUrlAs`).
    const as = /^\/as\/([\w-]+)(?=\/api\/)/.exec(url.pathname);
    const pathname = as ? url.pathname.slice(as[0].length) : url.pathname;
    const path = pathname.replace(/^\/api\/v10/, '');
    const found = pathname.startsWith('/api/v10/') ? match(routes, method, path) : undefined;
    let body: unknown;
    try {
      body = raw ? (JSON.parse(raw) as unknown) : {};
    } catch {
      body = raw;
    }
    const call: DiscordCall = {
      method,
      route: found?.route.route ?? path,
      path,
      query: url.search.slice(1),
      body,
      status: 0,
      problems: [],
      ...(as && { caller: as[1] }),
      ...(parts && { files: parts.files }),
      at: s.now(),
      tick: 0,
    };
    s.calls.push(call);
    const answer = answerCall(s, req, call, found);
    call.status = answer.status;
    call.code = (answer.body as { code?: number } | undefined)?.code;
    call.tick = performance.now();
    const headers: Record<string, string> = { ...answer.headers };
    if (answer.body !== undefined) headers['content-type'] = 'application/json';
    res.writeHead(answer.status, headers);
    res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
  };
}

function answerCall(
  s: RestState,
  req: IncomingMessage,
  call: DiscordCall,
  found: ReturnType<typeof match>,
): Answer & { headers?: Record<string, string> } {
  if (!found) return fail(404, 0, '404: Not Found');
  if (found.route.auth && req.headers.authorization !== `Bot ${s.token}`) return fail(401, 0, '401: Unauthorized');
  // Named before any refusal, so a throttled interaction call is listed with the interaction's responses.
  const { interaction, token } = found.params;
  call.interactionId = interaction ?? [...s.interactions.values()].find((i) => token && i.token === token)?.id;
  const refusal = s.refusals.find((r) => r.times > 0 && matches(r.matcher, call));
  if (refusal) {
    refusal.times -= 1;
    return fail(refusal.status, refusal.code, refusal.message);
  }
  const throttle = s.throttles.find((t) => t.times > 0 && matches(t.matcher, call));
  if (throttle) {
    throttle.times -= 1;
    const retryAfter = throttle.retryAfterSeconds;
    return {
      status: 429,
      body: { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
      headers: {
        ...throttledHeaders(s, call, retryAfter),
        'retry-after': String(retryAfter),
        'x-ratelimit-scope': 'user',
      },
    };
  }
  // Discord's own limits (fake-discord-ratelimits.ts): this route's bucket for this major parameter, and the global one.
  const bucket = s.rateLimits?.take(call.method, call.route, found.params) ?? { headers: UNLIMITED };
  if (bucket.limited) return { status: 429, body: bucket.limited.body, headers: bucket.headers };
  const body = (call.body ?? {}) as Body;
  const answer = found.route.run(s, { params: found.params, body, query: new URLSearchParams(call.query), call });
  return { ...answer, headers: bucket.headers };
}

/**
 * A multipart body as discord.js sends files (https://discord.com/developers/docs/reference#uploading-files): JSON in
 * `payload_json` and each file in a `files[n]` part; undefined for any other body.
 */
async function multipart(
  contentType: string,
  raw: Buffer,
): Promise<{ payload: string; files: UploadedFile[] } | undefined> {
  if (!contentType.startsWith('multipart/form-data')) return undefined;
  const form = await new Request('http://fake/', {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: new Uint8Array(raw),
  }).formData();
  const files: UploadedFile[] = [];
  let payload = '';
  for (const [field, value] of form) {
    if (typeof value === 'string') {
      if (field === 'payload_json') payload = value;
      continue;
    }
    files.push({ field, name: value.name, contentType: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
  }
  return { payload, files };
}
