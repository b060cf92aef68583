/**
 * Posts Slack refuses because Steward is not a member of the conversation: chat.postMessage and chat.postEphemeral
 * answer `not_in_channel` for a public channel (a bot without chat:write.public) and `channel_not_found` for a private
 * one it is not in (https://api.slack.com/methods/chat.postMessage and .../chat.postEphemeral, "Errors"). Such a
 * refusal becomes one clear error, and what was meant for a person can go to them by DM instead.
 */
import type { SlackMessage } from './slack-render.ts';

/** Slack's error codes for a post into a conversation the bot is not in. */
const OUTSIDE = new Set(['not_in_channel', 'channel_not_found']);

/** Steward cannot post in `channel` because it is not a member: the message says so and how to fix it. */
export class NotInChannelError extends Error {
  constructor(
    readonly channel: string,
    readonly code: string,
    options?: { cause: unknown },
  ) {
    super(
      `Steward is not a member of channel ${channel} (Slack: ${code}); invite it there with /invite @Steward`,
      options,
    );
    this.name = 'NotInChannelError';
  }
}

/** The error to throw for a refused post into `channel`: a NotInChannelError when that is why, else `err` itself. */
export function postRefusal(err: unknown, channel: string): unknown {
  const code = (err as { data?: { error?: unknown } } | null)?.data?.error;
  // A DM or a user id is never a channel to be invited to.
  if (typeof code !== 'string' || !OUTSIDE.has(code) || /^[DUW]/.test(channel)) return err;
  return new NotInChannelError(channel, code, { cause: err });
}

/**
 * A message meant for a person in `channel`, sent to them by DM instead (chat.postMessage with their user id as the
 * channel posts in the app's DM with them): it starts by saying where it belongs and why it came here.
 */
export function asDirectMessage(message: SlackMessage, refused: NotInChannelError): SlackMessage {
  const where = `About <#${refused.channel}>: I cannot post there, since I am not a member of it (invite me with \`/invite @Steward\`), so I tell you here.`;
  return {
    text: `${where} ${message.text}`.slice(0, 3_000),
    blocks: [{ type: 'context', elements: [{ type: 'mrkdwn', text: where, verbatim: true }] }, ...message.blocks],
  };
}
