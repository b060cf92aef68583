/**
 * The bot's permissions in a channel, as Discord computes them
 * (https://discord.com/developers/docs/topics/permissions#permission-overwrites): the permissions of @everyone (the
 * role whose id is the guild's) OR those of the member's roles; ADMINISTRATOR allows everything; then the channel's
 * overwrites in order: @everyone's deny then allow, every role overwrite's denies together then allows together, the
 * member's own deny then allow. A thread has the permissions of its parent channel
 * (https://discord.com/developers/docs/topics/threads#permissions).
 *
 * What the fake's REST refuses without them, and with what, is in `refuseWithout` below.
 */
import { ChannelType, PermissionFlagsBits, type APIChannel, type APIOverwrite } from 'discord.js';
import { fail, type Answer } from './fake-discord-rest.ts';

export const P = PermissionFlagsBits;

/**
 * What Steward's invite link asks for (docs/discord.md, "Invite the bot": 309237730304): View Channels, Send Messages,
 * Embed Links, Read Message History, Create Public Threads, Send Messages in Threads. Discord gives the bot's managed
 * role exactly the permissions the invite granted.
 */
export const STEWARD_INVITE =
  P.ViewChannel |
  P.SendMessages |
  P.EmbedLinks |
  P.ReadMessageHistory |
  P.CreatePublicThreads |
  P.SendMessagesInThreads;

/** @everyone in the fake's server: everything but Administrator (an open server), so that overwrites apply. */
export const EVERYONE_DEFAULT = (1n << 41n) - 1n - P.Administrator;

/** The guild's roles and who holds which, as the permission rules read them. */
export interface PermissionModel {
  guildId: string;
  /** Role id → its permissions (the guild's id is @everyone). */
  roles: Map<string, bigint>;
  /** The bot's user id and its roles (besides @everyone). */
  botId: string;
  botRoles: readonly string[];
}

/** The bot's permissions in `channel` (a thread: its parent's), from roles and the channel's overwrites. */
export function botPermissions(
  m: PermissionModel,
  channel: APIChannel,
  parentOf: (id: string) => APIChannel | undefined,
) {
  const where =
    channel.type === ChannelType.PublicThread || channel.type === ChannelType.PrivateThread
      ? (parentOf((channel as { parent_id?: string }).parent_id ?? '') ?? channel)
      : channel;
  let perms = m.roles.get(m.guildId) ?? 0n;
  for (const r of m.botRoles) perms |= m.roles.get(r) ?? 0n;
  if (perms & P.Administrator) return (1n << 53n) - 1n;
  const overwrites = ((where as { permission_overwrites?: APIOverwrite[] }).permission_overwrites ?? []).map((o) => ({
    ...o,
    allowBits: BigInt(o.allow),
    denyBits: BigInt(o.deny),
  }));
  const everyone = overwrites.find((o) => o.id === m.guildId);
  if (everyone) perms = (perms & ~everyone.denyBits) | everyone.allowBits;
  let allow = 0n;
  let deny = 0n;
  for (const o of overwrites)
    if (o.type === 0 && m.botRoles.includes(o.id)) {
      allow |= o.allowBits;
      deny |= o.denyBits;
    }
  perms = (perms & ~deny) | allow;
  const own = overwrites.find((o) => o.type === 1 && o.id === m.botId);
  if (own) perms = (perms & ~own.denyBits) | own.allowBits;
  return perms;
}

/** Discord's names for the permissions Steward's calls need, as its error messages and docs spell them. */
const NAMES = new Map<bigint, string>([
  [P.ViewChannel, 'VIEW_CHANNEL'],
  [P.SendMessages, 'SEND_MESSAGES'],
  [P.SendMessagesInThreads, 'SEND_MESSAGES_IN_THREADS'],
  [P.CreatePublicThreads, 'CREATE_PUBLIC_THREADS'],
  [P.EmbedLinks, 'EMBED_LINKS'],
  [P.AttachFiles, 'ATTACH_FILES'],
  [P.ReadMessageHistory, 'READ_MESSAGE_HISTORY'],
]);

/**
 * The refusal for a call that needs `needed` in a channel where the bot has `has`, or undefined when it may. Without
 * VIEW_CHANNEL Discord answers 403 with 50001 "Missing Access"; without any other permission, 403 with 50013
 * "Missing Permissions" (Opcodes and Status Codes, JSON Error Codes:
 * https://discord.com/developers/docs/topics/opcodes-and-status-codes#json-json-error-codes). `missing` lists the
 * names for the test to read (Discord's body does not name them).
 */
export function refuseWithout(has: bigint, needed: readonly bigint[]): (Answer & { missing: string[] }) | undefined {
  if (!(has & P.ViewChannel)) return { ...fail(403, 50001, 'Missing Access'), missing: ['VIEW_CHANNEL'] };
  const missing = needed.filter((p) => !(has & p)).map((p) => NAMES.get(p) ?? String(p));
  return missing.length ? { ...fail(403, 50013, 'Missing Permissions'), missing } : undefined;
}
