/**
 * `connections` on Discord (pure): how Discord shows its links and commands, the private question about a connection
 * that waits for its person to confirm it (two buttons), and a press on one read back as a `connections` command.
 * The press comes from the person's own Discord identity: that is what confirms the connection.
 */
import { ButtonStyle, ComponentType } from 'discord.js';
import type { ConnectionsAnswer, ConnectionsCommand } from '../../engine/channel.ts';
import type { ConnectionCheck } from '../../engine/messages.ts';
import { connectionCheckText, connectionsText, type ConnectionsStyle } from '../connection-words.ts';
import { textMessage, type DiscordMessage } from './discord-render.ts';

/** The most characters a message's content holds. */
const CONTENT_MAX = 2_000;
/** Prefix of the two buttons' custom ids: `stwc:<use|notme>:<server>:<link>` (at most 100 characters). */
const PREFIX = 'stwc';
const SERVER = /^[A-Za-z0-9_-]{1,64}$/;
const LINK = /^\d{1,18}$/;

/** How Discord shows a link (no preview) and the command, for the words of `connections`. */
export const DISCORD_CONNECTIONS_STYLE: ConnectionsStyle = {
  link: (url, words) => `[${words}](<${url}>)`,
  command: (action, server) => `/steward connections${action ? ` action:${action} server:${server ?? ''}` : ''}`,
};

/** The private answer to `/steward connections` (or a press). */
export function renderConnections(answer: ConnectionsAnswer): DiscordMessage {
  return textMessage(connectionsText(answer, DISCORD_CONNECTIONS_STYLE).slice(0, CONTENT_MAX));
}

/** The private question: use the connection, or not me; each button names the server and the link. */
export function renderConnectionCheck(check: ConnectionCheck): DiscordMessage {
  const text = connectionCheckText(check.server, DISCORD_CONNECTIONS_STYLE, true, check.workspace).replace(/\*/g, '**');
  const button = (kind: 'use' | 'notme', label: string, style: ButtonStyle.Success | ButtonStyle.Danger) => ({
    type: ComponentType.Button as const,
    style,
    label,
    custom_id: `${PREFIX}:${kind}:${check.server}:${check.link}`,
  });
  return textMessage(`🔐 ${text}`.slice(0, CONTENT_MAX), [
    {
      type: ComponentType.ActionRow,
      components: [
        button('use', 'Use this connection', ButtonStyle.Success),
        button('notme', 'Not me', ButtonStyle.Danger),
      ],
    },
  ]);
}

/** A press on one of the two buttons as the `connections` command it answers; null for any other custom id. */
export function connectionAnswerOf(customId: unknown): ConnectionsCommand | null {
  if (typeof customId !== 'string' || customId.length > 100) return null;
  const [prefix, kind, server = '', link = '', ...rest] = customId.split(':');
  if (prefix !== PREFIX || rest.length > 0 || !SERVER.test(server) || !LINK.test(link)) return null;
  if (kind === 'use') return { kind: 'use', server, link };
  if (kind === 'notme') return { kind: 'refuse', server, link };
  return null;
}
