/**
 * A local fake Discord for end-to-end tests that drive the real discord.js `Client` with no internet: one port
 * serving the REST API (`/api/v10/...`, fake-discord-rest.ts) and the gateway WebSocket (fake-discord-gateway.ts).
 *
 *   const fake = await startFakeDiscord();
 *   const client = new Client({ intents, rest: { api: fake.apiUrl } });
 *   await client.login(fake.token);
 *   fake.dispatch('MESSAGE_CREATE', fake.messageCreate({ content: 'hello', mentionsBot: true }));
 *
 * It holds one guild with one text channel, the bot and a default user. Dispatches follow Discord's rules: a
 * message reaches a session only with the intent for it (GuildMessages, DirectMessages), and without the Message
 * Content intent its content is blank unless it mentions the bot or is a DM. Messages the app creates are echoed
 * as MESSAGE_CREATE / MESSAGE_UPDATE, as Discord does, so the app must ignore its own.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApplicationCommandType,
  ChannelType,
  GatewayIntentBits,
  SnowflakeUtil,
  type APIChannel,
  type APIGuildMember,
  type APIMessage,
  type APIUser,
} from 'discord.js';
import { FakeDiscordGateway, type GatewayDispatch } from './fake-discord-gateway.ts';
import { interactionRoutes } from './fake-discord-interactions.ts';
import {
  createButtonPress,
  createDmChannel,
  createGuild,
  createMember,
  createMessage,
  createModalSubmit,
  createMessageCommand,
  createSlashCommand,
  createStringSelect,
  createTextChannel,
  createUser,
  type GatewayMessage,
  type InteractionBase,
} from './fake-discord-payloads.ts';
import { RateLimits, type BucketRule } from './fake-discord-ratelimits.ts';
import { EVERYONE_DEFAULT, STEWARD_INVITE, botPermissions, type PermissionModel } from './fake-discord-permissions.ts';
import {
  createRestHandler,
  restRoutes,
  setArchived,
  type CallMatcher,
  type DiscordCall,
  type RestState,
  type StoredInteraction,
  type StoredMessage,
} from './fake-discord-rest.ts';

export type { CallMatcher, DiscordCall, StoredInteraction, StoredMessage } from './fake-discord-rest.ts';
export type { GatewayDispatch } from './fake-discord-gateway.ts';

/** How to start the fake. */
export interface FakeDiscordOptions {
  token?: string;
  /** Whether the app may use the privileged Message Content intent (false: IDENTIFY with it closes with 4014). */
  allowMessageContent?: boolean;
  /** On RESUME, also replay the last event the client already had (to prove a redelivery is harmless). */
  replayLastOnResume?: boolean;
  /** The fake's clock for interaction windows and token ages (default Date.now). */
  now?: () => number;
  heartbeatIntervalMs?: number;
  /** Roles the guild has besides @everyone (no permissions of their own). */
  roles?: { id: string; name: string }[];
  /**
   * Discord's rate limits (fake-discord-ratelimits.ts): on by default; false turns them off (no headers, no 429s but
   * those of `throttle`); a table replaces the per-route numbers.
   */
  rateLimits?: false | Record<string, BucketRule>;
  /** The permissions of the bot's own role (default: what Steward's invite asks for, STEWARD_INVITE). */
  botPermissions?: bigint;
  /** The permissions of @everyone (default: everything but Administrator, EVERYONE_DEFAULT). */
  everyonePermissions?: bigint;
}

/** Who acts in an interaction and where: defaults to the default user in the guild's text channel. */
export interface InteractionWhere {
  user?: APIUser;
  roles?: string[];
  channelId?: string;
}

/** A running fake Discord. */
export interface FakeDiscord {
  /** For `new Client({ rest: { api } })`: `http://127.0.0.1:PORT/api`. */
  apiUrl: string;
  /**
   * The same API for one of several processes on this bot token, its calls recorded with `caller`: Discord cannot
   * tell two processes on one token apart (they hold the same token), tests can.
   */
  apiUrlAs(caller: string): string;
  gatewayUrl: string;
  token: string;
  botUser: APIUser;
  /** The bot's own managed role in the guild (what typing @Steward may pick instead of the bot). */
  botRoleId: string;
  applicationId: string;
  guildId: string;
  /** The guild's text channel. */
  channelId: string;
  /** A user who is a member of the guild, the default author and actor. */
  defaultUser: APIUser;
  /**
   * Sends a gateway dispatch to every session on the token (kept for a resume); returns the newest session's payload,
   * undefined when there is none or the intents filter it out.
   */
  dispatch(type: string, data: unknown): GatewayDispatch | undefined;
  /** Closes the gateway socket: resumable (4000, client sends RESUME) or not (1000, client identifies again). */
  dropConnection(options?: { resumable?: boolean }): void;
  readonly identifies: number;
  readonly resumes: number;
  readonly sessions: number;
  /** The intents the current session identified with. */
  readonly intents: number;
  /** The query string of each gateway connection. */
  readonly gatewayQueries: readonly string[];
  /** Answers the next `times` calls matching with 429 and Retry-After / retry_after `retryAfterSeconds`. */
  throttle(matcher: CallMatcher, o: { times: number; retryAfterSeconds: number }): void;
  /** Answers the next `times` calls matching with Discord's error (e.g. 403, 50013 Missing Permissions). */
  refuse(matcher: CallMatcher, o: { times: number; status: number; code: number; message: string }): void;
  /** A new user (known to the fake, so a DM can be opened to them). */
  user(o: { username: string; bot?: boolean }): APIUser;
  member(user: APIUser, o?: { roles?: string[] }): APIGuildMember;
  /** A MESSAGE_CREATE payload; `dm` puts it in the author's DM with the bot, `threadId` in a thread. */
  messageCreate(o: {
    content: string;
    author?: APIUser;
    channelId?: string;
    threadId?: string;
    dm?: boolean;
    mentionsBot?: boolean;
    roles?: string[];
    /** Role ids the message mentions. */
    mentionRoles?: string[];
  }): GatewayMessage;
  /** A button press on a message the fake holds (its current state is sent), with a fresh id and token. */
  buttonPress(o: InteractionWhere & { messageId: string; customId: string }): Record<string, unknown>;
  stringSelect(
    o: InteractionWhere & { messageId: string; customId: string; values: string[] },
  ): Record<string, unknown>;
  modalSubmit(
    o: InteractionWhere & { customId: string; fields: Record<string, string>; messageId?: string },
  ): Record<string, unknown>;
  /** `/steward <subcommand>` sent; with `focused`, the autocomplete interaction while that option is typed. */
  slashCommand(
    o: InteractionWhere & { subcommand: string; options: Record<string, string>; focused?: string },
  ): Record<string, unknown>;
  /**
   * A message command picked on a message the fake holds (Apps → its name); Discord offers only what is registered,
   * so an unregistered name throws.
   */
  messageCommand(o: InteractionWhere & { messageId: string; name: string }): Record<string, unknown>;
  /** Every message by id, as it stands now (with its edit count). */
  messages: Map<string, StoredMessage>;
  /** The direct-message channel with a user, once one was opened. */
  dmChannelOf(userId: string): string | undefined;
  messagesIn(channelId: string): StoredMessage[];
  readonly threads: APIChannel[];
  /**
   * Sets one permission overwrite on a channel (replacing the one for the same id), as a server's moderator does in
   * the channel's settings, and sends CHANNEL_UPDATE. `id` is a role's (the guild's id for @everyone, `botRoleId`) or
   * a member's (type 1, e.g. `botUser.id`).
   */
  setOverwrite(channelId: string, o: { id: string; type: 0 | 1; allow?: bigint; deny?: bigint }): void;
  /** The bot's permissions in a channel as the fake computes them (undefined in a DM). */
  botPermissionsIn(channelId: string): bigint | undefined;
  /** Archives a thread, as Discord does once it saw no activity for its auto_archive_duration (THREAD_UPDATE sent). */
  archiveThread(threadId: string): void;
  calls: DiscordCall[];
  callsTo(method: string, route: string): DiscordCall[];
  /** The callback and webhook calls made for one interaction. */
  interactionResponses(interactionId: string): DiscordCall[];
  interaction(interactionId: string): StoredInteraction | undefined;
  /** The commands last PUT globally, or for one guild. */
  registeredCommands(guildId?: string): unknown[];
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const now = options.now ?? Date.now;
  const newId = () => String(SnowflakeUtil.generate({ timestamp: now() }));
  const at = () => new Date(now()).toISOString();
  const botUser = { ...createUser({ id: newId(), username: 'Steward', bot: true }), verified: true, flags: 0 };
  const guildId = newId();
  const channel = createTextChannel({ id: newId(), guildId, name: 'general' });
  const defaultUser = createUser({ id: newId(), username: 'alice' });
  // Discord gives a bot its own managed role, named after it, when it joins a server.
  const botRoleId = newId();
  const permissionModel: PermissionModel = {
    guildId,
    roles: new Map([
      [guildId, options.everyonePermissions ?? EVERYONE_DEFAULT],
      [botRoleId, options.botPermissions ?? STEWARD_INVITE],
    ]),
    botId: botUser.id,
    botRoles: [botRoleId],
  };
  const permissionsIn = (ch: APIChannel) =>
    'guild_id' in ch && ch.guild_id ? botPermissions(permissionModel, ch, (id) => state.channels.get(id)) : undefined;
  const state: RestState = {
    token: options.token ?? 'fake-bot-token',
    botUser,
    applicationId: botUser.id,
    application: () => ({
      id: botUser.id,
      name: 'Steward',
      icon: null,
      description: '',
      bot_public: false,
      bot_require_code_grant: false,
      flags: 1 << 19, // GatewayMessageContentLimited: the intent is not granted by default
      bot: botUser,
      verify_key: 'fake',
      team: null,
    }),
    gatewayUrl: () => fake.gatewayUrl,
    now,
    newId,
    channels: new Map([[channel.id, channel]]),
    messages: new Map(),
    users: new Map<string, APIUser>([
      [botUser.id, botUser],
      [defaultUser.id, defaultUser],
    ]),
    interactions: new Map(),
    commands: new Map(),
    calls: [],
    throttles: [],
    refusals: [],
    ...(options.rateLimits !== false && { rateLimits: new RateLimits(options.rateLimits) }),
    permissionsIn,
    dispatch: (t, d) => void dispatch(t, d),
  };

  const handle = createRestHandler(state, [...restRoutes, ...interactionRoutes]);
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: String(error), code: 0 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const gateway = new FakeDiscordGateway(server, {
    token: state.token,
    allowMessageContent: options.allowMessageContent ?? false,
    replayLastOnResume: options.replayLastOnResume ?? false,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
    resumeUrl: () => fake.gatewayUrl,
    readyPayload: () => ({
      v: 10,
      user: botUser,
      guilds: [{ id: guildId, unavailable: true }],
      private_channels: [],
      shard: [0, 1],
      application: { id: botUser.id, flags: (state.application().flags as number) ?? 0 },
    }),
    guildCreates: () => [
      createGuild({
        id: guildId,
        name: 'Test Guild',
        ownerId: defaultUser.id,
        channels: [...state.channels.values()].filter((c) => c.type === ChannelType.GuildText),
        members: [createMember(botUser, { roles: [botRoleId] }), createMember(defaultUser)],
        at: at(),
        roles: [
          {
            id: botRoleId,
            name: botUser.username,
            managed: true,
            permissions: String(permissionModel.roles.get(botRoleId)),
          },
          ...(options.roles ?? []),
        ],
        everyonePermissions: String(permissionModel.roles.get(guildId)),
      }),
    ],
  });

  /** Discord's delivery rules for one session, then the gateway's sequence and log. */
  function dispatch(type: string, data: unknown): GatewayDispatch | undefined {
    const d = data as Record<string, unknown>;
    if (type === 'INTERACTION_CREATE') registerInteraction(d);
    if (type !== 'MESSAGE_CREATE' && type !== 'MESSAGE_UPDATE') return gateway.dispatch(type, data);
    const message = data as GatewayMessage;
    if (type === 'MESSAGE_CREATE' && !state.messages.has(message.id))
      state.messages.set(message.id, { message, edits: 0, ephemeral: false });
    const dm = !message.guild_id;
    const needed = dm ? GatewayIntentBits.DirectMessages : GatewayIntentBits.GuildMessages;
    if (!(gateway.intents & needed)) return undefined;
    const mentioned = message.mentions.some((u) => u.id === botUser.id);
    const visible =
      gateway.intents & GatewayIntentBits.MessageContent || dm || mentioned || message.author.id === botUser.id;
    // The gateway's message carries `channel_type`: discord.js 14.28 needs it to build an uncached DM channel.
    const channelType = state.channels.get(message.channel_id)?.type;
    const shown = visible ? message : { ...message, content: '', embeds: [], attachments: [], components: [] };
    return gateway.dispatch(type, { ...shown, ...(channelType === undefined ? {} : { channel_type: channelType }) });
  }

  function registerInteraction(d: Record<string, unknown>): void {
    const channelId = String(d.channel_id);
    state.interactions.set(String(d.id), {
      id: String(d.id),
      token: String(d.token),
      type: Number(d.type),
      channelId,
      guildId: typeof d.guild_id === 'string' ? d.guild_id : undefined,
      dispatchedAt: now(),
      userId: (d.member as { user?: APIUser } | undefined)?.user?.id ?? (d.user as APIUser | undefined)?.id,
      componentMessageId: (d.message as APIMessage | undefined)?.id,
    });
  }

  const guildOf = (c: APIChannel | undefined) => (c && 'guild_id' in c ? (c.guild_id ?? undefined) : undefined);

  function dmWith(user: APIUser): APIChannel {
    const found = [...state.channels.values()].find(
      (c) => c.type === ChannelType.DM && c.recipients?.[0]?.id === user.id,
    );
    if (found) return found;
    const dm = createDmChannel({ id: newId(), recipient: user });
    state.channels.set(dm.id, dm);
    return dm;
  }

  function base(o: InteractionWhere): InteractionBase {
    const user = o.user ?? defaultUser;
    const ch = state.channels.get(o.channelId ?? channel.id);
    if (!ch) throw new Error(`fake Discord: no channel ${o.channelId}`);
    const gid = guildOf(ch);
    const app = permissionsIn(ch);
    return {
      ...(app !== undefined && { appPermissions: String(app) }),
      id: newId(),
      token: `interaction-token-${newId()}`,
      applicationId: botUser.id,
      channel: ch,
      ...(gid ? { guildId: gid, member: createMember(user, { roles: o.roles }) } : { user }),
    };
  }

  const storedMessage = (id: string) => {
    const found = state.messages.get(id);
    if (!found) throw new Error(`fake Discord: no message ${id}`);
    return found.message;
  };

  const fake: FakeDiscord = {
    apiUrl: `http://127.0.0.1:${port}/api`,
    apiUrlAs: (caller) => `http://127.0.0.1:${port}/as/${encodeURIComponent(caller)}/api`,
    gatewayUrl: `ws://127.0.0.1:${port}`,
    token: state.token,
    botUser,
    botRoleId,
    applicationId: botUser.id,
    guildId,
    channelId: channel.id,
    defaultUser,
    dispatch,
    dropConnection: (o) => gateway.dropConnection(o),
    get identifies() {
      return gateway.identifies;
    },
    get resumes() {
      return gateway.resumes;
    },
    get sessions() {
      return gateway.sessions.size;
    },
    get intents() {
      return gateway.intents;
    },
    gatewayQueries: gateway.connectQueries,
    throttle: (matcher, o) => void state.throttles.push({ matcher, ...o }),
    refuse: (matcher, o) => void state.refusals.push({ matcher, ...o }),
    user: (o) => {
      const user = createUser({ id: newId(), ...o });
      state.users.set(user.id, user);
      return user;
    },
    member: (user, o) => createMember(user, o),
    messageCreate: (o) => {
      const author = o.author ?? defaultUser;
      const ch = o.dm ? dmWith(author) : state.channels.get(o.threadId ?? o.channelId ?? channel.id);
      if (!ch) throw new Error(`fake Discord: no channel ${o.threadId ?? o.channelId}`);
      const mention = `<@${botUser.id}>`;
      return createMessage({
        id: newId(),
        channelId: ch.id,
        guildId: guildOf(ch),
        author,
        member: createMember(author, { roles: o.roles }),
        content: o.mentionsBot && !o.content.includes(mention) ? `${mention} ${o.content}` : o.content,
        mentions: o.mentionsBot ? [botUser] : [],
        mentionRoles: o.mentionRoles,
        at: at(),
      });
    },
    buttonPress: (o) => createButtonPress(base(o), { customId: o.customId, message: storedMessage(o.messageId) }),
    stringSelect: (o) =>
      createStringSelect(base(o), { customId: o.customId, values: o.values, message: storedMessage(o.messageId) }),
    modalSubmit: (o) =>
      createModalSubmit(base(o), {
        customId: o.customId,
        fields: o.fields,
        ...(o.messageId ? { message: storedMessage(o.messageId) } : {}),
      }),
    slashCommand: (o) => {
      const b = base(o);
      const registered = [...(state.commands.get(b.guildId ?? '') ?? []), ...(state.commands.get('') ?? [])];
      const command = registered.find((c) => (c as { name?: string }).name === 'steward') as
        { id?: string } | undefined;
      const { subcommand, options, focused } = o;
      return createSlashCommand(b, { commandId: command?.id ?? newId(), subcommand, options, focused });
    },
    messageCommand: (o) => {
      const b = base(o);
      const registered = [...(state.commands.get(b.guildId ?? '') ?? []), ...(state.commands.get('') ?? [])];
      const command = registered.find((c) => {
        const { name, type } = c as { name?: string; type?: number };
        return name === o.name && type === ApplicationCommandType.Message;
      }) as { id: string } | undefined;
      if (!command) throw new Error(`fake Discord: no message command "${o.name}" is registered`);
      return createMessageCommand(b, { commandId: command.id, name: o.name, message: storedMessage(o.messageId) });
    },
    messages: state.messages,
    dmChannelOf: (userId) =>
      [...state.channels.values()].find((c) => c.type === ChannelType.DM && c.recipients?.[0]?.id === userId)?.id,
    messagesIn: (channelId) => [...state.messages.values()].filter((m) => m.message.channel_id === channelId),
    get threads() {
      return [...state.channels.values()].filter((c) => c.type === ChannelType.PublicThread);
    },
    setOverwrite: (channelId, o) => {
      const ch = state.channels.get(channelId);
      if (!ch || !('permission_overwrites' in ch)) throw new Error(`fake Discord: no guild channel ${channelId}`);
      const kept = (ch.permission_overwrites ?? []).filter((x) => x.id !== o.id);
      const added = { id: o.id, type: o.type, allow: String(o.allow ?? 0n), deny: String(o.deny ?? 0n) };
      (ch as { permission_overwrites: unknown[] }).permission_overwrites = [...kept, added];
      dispatch('CHANNEL_UPDATE', ch);
    },
    botPermissionsIn: (channelId) => {
      const ch = state.channels.get(channelId);
      return ch ? permissionsIn(ch) : undefined;
    },
    archiveThread: (threadId) => {
      const thread = state.channels.get(threadId);
      if (!thread || thread.type !== ChannelType.PublicThread) throw new Error(`no thread ${threadId}`);
      setArchived(state, thread, true);
    },
    calls: state.calls,
    callsTo: (method, route) => state.calls.filter((c) => c.method === method.toUpperCase() && c.route === route),
    interactionResponses: (id) => state.calls.filter((c) => c.interactionId === id),
    interaction: (id) => state.interactions.get(id),
    registeredCommands: (g) => state.commands.get(g ?? '') ?? [],
    close: async () => {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
