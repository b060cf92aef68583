/**
 * Turns Slack event payloads into Steward's inbound messages (pure). A run's conversation is its Slack thread:
 * key `<channel id>:<thread root ts>`.
 */
import type { InboundMessage } from '../../engine/channel.ts';
import type { Conversation } from '../../engine/ports.ts';
import type { Actor } from '../../engine/types.ts';

/** The channel name Steward's engine sees for Slack. */
export const SLACK_CHANNEL = 'slack';

/** The parts of a Slack message event this adapter reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  channel?: string;
  ts?: string;
  thread_ts?: string;
  /** `im` for a direct message with the bot; `channel`, `group` or `mpim` otherwise. */
  channel_type?: string;
}

/** A Slack thread, as a conversation for the engine. */
export function toConversation(channel: string, threadTs: string): Conversation {
  return { channel: SLACK_CHANNEL, key: `${channel}:${threadTs}` };
}

/**
 * A whole Slack conversation (a channel or a DM, not one thread), for a slash command: Slack does not say which
 * thread, if any, a command was typed in.
 */
export function toChannelConversation(channel: string): Conversation {
  return { channel: SLACK_CHANNEL, key: channel };
}

/** The Slack channel and thread of a conversation key, or null when the key is not one of ours. */
export function fromConversation(conversation: Conversation): { channel: string; threadTs: string } | null {
  const m = /^([A-Z0-9]+):(\d+\.\d+)$/.exec(conversation.key);
  return conversation.channel === SLACK_CHANNEL && m?.[1] && m[2] ? { channel: m[1], threadTs: m[2] } : null;
}

/** A Slack user as an actor; interaction payloads carry a name, events only the id. */
export function toActor(user: { id: string; username?: string; name?: string }): Actor {
  const name = user.username ?? user.name;
  return name ? { id: user.id, name, channel: SLACK_CHANNEL } : { id: user.id, channel: SLACK_CHANNEL };
}

/** An app_mention as a message for the engine, answered in the thread it belongs to (or starts). */
export function fromMention(event: SlackMessageEvent, botUserId: string | undefined): InboundMessage | null {
  if (event.bot_id) return null;
  return requestFrom(event, botUserId);
}

/**
 * A plain reply inside a thread, or null for anything else: top-level chatter, edits and other subtypes, bots
 * (Steward included), and replies that mention Steward (their app_mention event already carries them).
 */
export function fromThreadReply(event: SlackMessageEvent, botUserId: string | undefined): InboundMessage | null {
  if (event.subtype !== undefined && event.subtype !== 'thread_broadcast') return null;
  // Direct messages are all for Steward: `fromDirectMessage` takes them, threads or not.
  if (event.channel_type === 'im') return null;
  if (!event.user || !event.channel || !event.ts || !event.thread_ts || event.thread_ts === event.ts || event.bot_id)
    return null;
  if (botUserId && (event.user === botUserId || (event.text ?? '').includes(`<@${botUserId}>`))) return null;
  const text = messageText(event.text ?? '', botUserId);
  if (!text) return null;
  return { conversation: toConversation(event.channel, event.thread_ts), actor: toActor({ id: event.user }), text };
}

/**
 * A message in a direct conversation with Steward: every one is addressed to it, so no mention is needed. A top-level
 * message starts a request answered in its thread; a message in a thread goes to that thread's conversation (a reply
 * to its active run, or a new request there). Edits and other subtypes, and bots (Steward included), are ignored.
 */
export function fromDirectMessage(event: SlackMessageEvent, botUserId: string | undefined): InboundMessage | null {
  if (event.channel_type !== 'im' || event.subtype !== undefined || event.bot_id) return null;
  if (botUserId && event.user === botUserId) return null;
  return requestFrom(event, botUserId);
}

/** A person's message as a request answered in its thread (or the thread it starts); null without text. */
function requestFrom(event: SlackMessageEvent, botUserId: string | undefined): InboundMessage | null {
  if (!event.user || !event.channel || !event.ts) return null;
  const text = messageText(event.text ?? '', botUserId);
  if (!text) return null;
  return {
    conversation: toConversation(event.channel, event.thread_ts ?? event.ts),
    actor: toActor({ id: event.user }),
    text,
    // The channel the thread is in: spend caps per channel count every thread of it.
    place: event.channel,
  };
}

/** The text a person typed: Steward's own mention removed and Slack's three escapes undone. */
export function messageText(raw: string, botUserId: string | undefined): string {
  const withoutMention = botUserId ? raw.split(`<@${botUserId}>`).join(' ') : raw.replace(/^\s*<@[UW][A-Z0-9]+>/, ' ');
  return withoutMention
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+/g, ' ')
    .trim();
}
