/**
 * Payloads shaped as Discord sends them (API v10, snake_case), for the fake Discord and the tests that drive it:
 * users, guild members, channels, threads, guilds (GUILD_CREATE), messages (MESSAGE_CREATE) and interactions
 * (button, string select, modal submit, the /steward slash command). Each builder takes overrides; ids come from
 * the caller so the fake can hand out real snowflakes (discord.js groups rate limits by 17-19 digit ids).
 */
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ChannelType,
  ComponentType,
  InteractionType,
  MessageType,
  type APIChannel,
  type APIGuildMember,
  type APIMessage,
  type APIUser,
} from 'discord.js';

/** Everything a guild member may do (people in interactions; the bot's own are computed: fake-discord-permissions.ts). */
export const ALL_PERMISSIONS = '2199023255551';

/** A Discord user; `bot` marks an app's user. */
export function createUser(o: { id: string; username: string; bot?: boolean; globalName?: string }): APIUser {
  return {
    id: o.id,
    username: o.username,
    discriminator: '0',
    global_name: o.globalName ?? (o.bot ? null : o.username),
    avatar: null,
    ...(o.bot ? { bot: true } : {}),
  };
}

/** A guild member as MESSAGE_CREATE and interactions carry it (with `user` and, in interactions, `permissions`). */
export function createMember(user: APIUser, o: { roles?: string[]; joinedAt?: string } = {}): APIGuildMember {
  return {
    user,
    roles: o.roles ?? [],
    joined_at: o.joinedAt ?? '2024-01-01T00:00:00.000Z',
    deaf: false,
    mute: false,
    flags: 0 as APIGuildMember['flags'],
    nick: null,
  };
}

/** A guild text channel. */
export function createTextChannel(o: { id: string; guildId: string; name?: string }): APIChannel {
  return {
    id: o.id,
    type: ChannelType.GuildText,
    guild_id: o.guildId,
    name: o.name ?? 'general',
    position: 0,
    permission_overwrites: [],
    parent_id: null,
    topic: null,
    nsfw: false,
    last_message_id: null,
    rate_limit_per_user: 0,
  };
}

/** A public thread (type 11) under a text channel, as POST .../threads answers and THREAD_CREATE carries it. */
export function createThread(o: {
  id: string;
  guildId: string;
  parentId: string;
  ownerId: string;
  name: string;
  at: string;
  autoArchiveMinutes?: number;
}): APIChannel {
  return {
    id: o.id,
    type: ChannelType.PublicThread,
    guild_id: o.guildId,
    parent_id: o.parentId,
    owner_id: o.ownerId,
    name: o.name,
    last_message_id: null,
    message_count: 0,
    member_count: 1,
    total_message_sent: 0,
    rate_limit_per_user: 0,
    flags: 0,
    thread_metadata: {
      archived: false,
      auto_archive_duration: o.autoArchiveMinutes ?? 1440,
      archive_timestamp: o.at,
      locked: false,
      create_timestamp: o.at,
    },
    member: { id: o.id, user_id: o.ownerId, join_timestamp: o.at, flags: 1 },
  } as unknown as APIChannel;
}

/** A DM channel (type 1) with one recipient. */
export function createDmChannel(o: { id: string; recipient: APIUser }): APIChannel {
  return {
    id: o.id,
    type: ChannelType.DM,
    recipients: [o.recipient],
    last_message_id: null,
    flags: 0,
  } as unknown as APIChannel;
}

/** The GUILD_CREATE payload for a guild: its channels, the @everyone role, the bot's member and the given members. */
export function createGuild(o: {
  id: string;
  name: string;
  ownerId: string;
  channels: APIChannel[];
  members: APIGuildMember[];
  at: string;
  /** Roles besides @everyone (members may hold them); `managed` for a bot's own role; permissions default to none. */
  roles?: { id: string; name: string; managed?: boolean; permissions?: string }[];
  /** @everyone's permissions (default: all). */
  everyonePermissions?: string;
}): Record<string, unknown> {
  // @everyone shares the guild's id (Discord's rule), and discord.js computes channel permissions from it.
  const everyone = {
    id: o.id,
    name: '@everyone',
    color: 0,
    hoist: false,
    position: 0,
    permissions: o.everyonePermissions ?? ALL_PERMISSIONS,
    managed: false,
    mentionable: false,
    flags: 0,
  };
  return {
    id: o.id,
    name: o.name,
    icon: null,
    owner_id: o.ownerId,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: [
      everyone,
      ...(o.roles ?? []).map((r, i) => ({ ...everyone, permissions: '0', ...r, position: i + 1, mentionable: true })),
    ],
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    preferred_locale: 'en-US',
    public_updates_channel_id: null,
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
    joined_at: o.at,
    large: false,
    unavailable: false,
    member_count: o.members.length,
    voice_states: [],
    members: o.members,
    channels: o.channels.map((c) => ({ ...c, guild_id: undefined })),
    threads: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
  };
}

/** What a message builder needs besides the content. */
export interface MessageParts {
  id: string;
  channelId: string;
  guildId?: string;
  author: APIUser;
  member?: APIGuildMember;
  content: string;
  at: string;
  mentions?: APIUser[];
  /** Role ids the message mentions. */
  mentionRoles?: string[];
  embeds?: unknown[];
  components?: unknown[];
  flags?: number;
  webhookId?: string;
  interactionMetadata?: Record<string, unknown>;
  reference?: { message_id: string; channel_id: string; guild_id?: string };
  /** The nonce the message was created with, echoed in MESSAGE_CREATE as Discord does. */
  nonce?: string | number;
}

/** A message as MESSAGE_CREATE carries it: the API's message plus, in a guild, `guild_id` and `member`. */
export type GatewayMessage = APIMessage & { guild_id?: string };

/** A message object as the API returns it and MESSAGE_CREATE carries it (guild messages also carry `member`). */
export function createMessage(p: MessageParts): GatewayMessage {
  const { user: _user, ...member } = p.member ?? createMember(p.author);
  return {
    id: p.id,
    type: p.reference ? MessageType.Reply : MessageType.Default,
    channel_id: p.channelId,
    ...(p.guildId ? { guild_id: p.guildId, member } : {}),
    author: p.author,
    content: p.content,
    timestamp: p.at,
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: p.mentions ?? [],
    mention_roles: p.mentionRoles ?? [],
    attachments: [],
    embeds: p.embeds ?? [],
    components: p.components ?? [],
    pinned: false,
    flags: p.flags ?? 0,
    ...(p.webhookId ? { webhook_id: p.webhookId } : {}),
    ...(p.interactionMetadata ? { interaction_metadata: p.interactionMetadata } : {}),
    ...(p.reference ? { message_reference: { type: 0, ...p.reference } } : {}),
    ...(p.nonce !== undefined ? { nonce: p.nonce } : {}),
  } as GatewayMessage;
}

/** The fields every interaction carries; `channel` is the partial channel discord.js reads `channelId` from. */
export interface InteractionBase {
  id: string;
  token: string;
  applicationId: string;
  channel: APIChannel;
  guildId?: string;
  member?: APIGuildMember;
  user?: APIUser;
  /** The bot's permissions where the interaction happened (`app_permissions`); default all. */
  appPermissions?: string;
}

function interactionEnvelope(b: InteractionBase, type: InteractionType, data: unknown): Record<string, unknown> {
  const who = b.guildId
    ? { guild_id: b.guildId, member: { ...(b.member ?? {}), permissions: ALL_PERMISSIONS }, guild_locale: 'en-US' }
    : { user: b.user ?? b.member?.user };
  return {
    id: b.id,
    application_id: b.applicationId,
    type,
    data,
    token: b.token,
    version: 1,
    channel: b.channel,
    channel_id: b.channel.id,
    ...who,
    app_permissions: b.appPermissions ?? ALL_PERMISSIONS,
    locale: 'en-US',
    entitlements: [],
    authorizing_integration_owners: { 0: b.guildId ?? '0' },
    context: b.guildId ? 0 : 1,
    attachment_size_limit: 10_485_760,
  };
}

/** A button press (type 3, component_type 2) on `message`. */
export function createButtonPress(b: InteractionBase, o: { customId: string; message: APIMessage }) {
  return {
    ...interactionEnvelope(b, InteractionType.MessageComponent, {
      custom_id: o.customId,
      component_type: ComponentType.Button,
    }),
    message: o.message,
  };
}

/** A string select choice (type 3, component_type 3) on `message`. */
export function createStringSelect(b: InteractionBase, o: { customId: string; values: string[]; message: APIMessage }) {
  return {
    ...interactionEnvelope(b, InteractionType.MessageComponent, {
      custom_id: o.customId,
      component_type: ComponentType.StringSelect,
      values: o.values,
    }),
    message: o.message,
  };
}

/** A modal submit (type 5): one action row per text input, as Discord sends them back. */
export function createModalSubmit(
  b: InteractionBase,
  o: { customId: string; fields: Record<string, string>; message?: APIMessage },
) {
  const components = Object.entries(o.fields).map(([customId, value]) => ({
    type: ComponentType.ActionRow,
    components: [{ type: ComponentType.TextInput, custom_id: customId, value }],
  }));
  return {
    ...interactionEnvelope(b, InteractionType.ModalSubmit, { custom_id: o.customId, components }),
    ...(o.message ? { message: o.message } : {}),
  };
}

/** A message command (type 2, command type 3) on `message`, e.g. Apps → "Ask Steward": the message rides along resolved. */
export function createMessageCommand(b: InteractionBase, o: { commandId: string; name: string; message: APIMessage }) {
  return interactionEnvelope(b, InteractionType.ApplicationCommand, {
    id: o.commandId,
    name: o.name,
    type: ApplicationCommandType.Message,
    target_id: o.message.id,
    resolved: { messages: { [o.message.id]: o.message } },
  });
}

/** `/steward <sub> <option>:<value>` (type 2), e.g. `/steward ask request:...`. */
export function createSlashCommand(
  b: InteractionBase,
  o: { commandId: string; subcommand: string; options: Record<string, string>; guildId?: string; focused?: string },
) {
  // With `focused`: the autocomplete interaction (type 4) Discord sends while that option is being typed.
  const type = o.focused ? InteractionType.ApplicationCommandAutocomplete : InteractionType.ApplicationCommand;
  return interactionEnvelope(b, type, {
    id: o.commandId,
    name: 'steward',
    type: ApplicationCommandType.ChatInput,
    ...(o.guildId ? { guild_id: o.guildId } : {}),
    options: [
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: o.subcommand,
        options: Object.entries(o.options).map(([name, value]) => ({
          name,
          type: ApplicationCommandOptionType.String,
          value,
          ...(name === o.focused ? { focused: true } : {}),
        })),
      },
    ],
  });
}
