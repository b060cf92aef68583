/**
 * Discord's side of Steward's vocabulary (pure): a run's conversation is the Discord channel it talks in, a thread
 * in a server or a direct-message channel (key `<guild id>:<channel id>`, or `dm:<channel id>`); people are actors
 * with the roles Discord reported with their action; a mention of the bot is taken out of the request's text.
 */
import { ThreadAutoArchiveDuration } from 'discord.js';
import type { Conversation } from '../../engine/ports.ts';
import type { Actor } from '../../engine/types.ts';

/** The channel name Steward's engine sees for Discord. */
export const DISCORD_CHANNEL = 'discord';

const SNOWFLAKE = /^\d{15,22}$/;

/** A Discord channel (thread or DM) as a conversation for the engine. */
export function toConversation(guildId: string | null, channelId: string): Conversation {
  return { channel: DISCORD_CHANNEL, key: `${guildId ?? 'dm'}:${channelId}` };
}

/** The Discord channel of a conversation key, or null when the key is not one of ours. */
export function fromConversation(conversation: Conversation): { guildId: string | null; channelId: string } | null {
  if (conversation.channel !== DISCORD_CHANNEL) return null;
  const [guild = '', channelId = '', ...rest] = conversation.key.split(':');
  if (rest.length > 0 || !SNOWFLAKE.test(channelId) || (guild !== 'dm' && !SNOWFLAKE.test(guild))) return null;
  return { guildId: guild === 'dm' ? null : guild, channelId };
}

/** The parts of a Discord user (and, in a server, its member) this adapter reads. */
export interface DiscordPerson {
  id: string;
  username: string;
  globalName?: string | null;
  /** The member's nickname in the server, when it has one. */
  nick?: string | null;
  /** The member's role ids in the server (none in a DM). */
  roles?: readonly string[];
}

/** A Discord person as an actor: named as the server shows them, with their roles as of this action. */
export function toActor(person: DiscordPerson): Actor {
  const name = person.nick ?? person.globalName ?? person.username;
  const roles = person.roles && person.roles.length > 0 ? { roles: [...person.roles] } : {};
  return { id: person.id, name, channel: DISCORD_CHANNEL, ...roles };
}

/**
 * A message's text for the engine: the bot's own mentions (`<@id>`, `<@!id>`, and its own roles `<@&id>`) taken out,
 * whitespace tidied. Other mentions stay as Discord wrote them; they are shown inert and never ping.
 */
export function requestText(content: string, botUserId: string, botRoleIds: readonly string[] = []): string {
  const roles = botRoleIds.filter((id) => SNOWFLAKE.test(id));
  const own = new RegExp(`<@!?${botUserId}>${roles.map((id) => `|<@&${id}>`).join('')}`, 'g');
  return content
    .replace(own, ' ')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

/**
 * How a run's thread is opened: named from the request, and kept open for a week without activity, the longest
 * Discord allows (a thread archives itself after its `auto_archive_duration`, and an archived thread's messages cannot
 * be edited: a plan waiting overnight would keep a card that cannot change). A card that meets an archived thread all
 * the same unarchives it (`DiscordChannel`).
 */
export function runThread(request: string): { name: string; autoArchiveDuration: ThreadAutoArchiveDuration } {
  return { name: threadName(request), autoArchiveDuration: ThreadAutoArchiveDuration.OneWeek };
}

/** A thread's name from the request that started it: one line, at most 100 characters (Discord's limit). */
export function threadName(request: string): string {
  const line = request.split('\n')[0]?.trim() ?? '';
  const name = line.length > 90 ? `${line.slice(0, 89)}…` : line;
  return name || 'Steward';
}

/** The delivery id the engine de-duplicates on: a message or an interaction is delivered again after a resume. */
export function deliveryId(id: string): string {
  return `discord:${id}`;
}
