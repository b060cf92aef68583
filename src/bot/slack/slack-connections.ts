/**
 * `connections` on Slack (pure): how Slack shows its links and commands, the private question about a connection
 * that waits for its person to confirm it (two buttons), and a press on one read back as a `connections` command.
 * The press comes from the person's own Slack identity: that is what confirms the connection.
 */
import type { types } from '@slack/bolt';
import type { ConnectionsAnswer, ConnectionsCommand } from '../../engine/channel.ts';
import type { ConnectionCheck } from '../../engine/messages.ts';
import { connectionCheckText, connectionsText, type ConnectionsStyle } from '../connection-words.ts';
import type { SlackMessage } from './slack-render.ts';

/** Action ids of the two answers to a connection that waits to be confirmed. */
export const CONNECTION_USE_ACTION = 'steward.connection-use';
export const CONNECTION_NOTME_ACTION = 'steward.connection-notme';

/** How Slack shows a link and the command, for the words of `connections`. */
export const SLACK_CONNECTIONS_STYLE: ConnectionsStyle = {
  link: (url, words) => `<${url}|${words}>`,
  command: (action, server) => `/steward connections${action ? ` ${action} ${server ?? ''}` : ''}`,
};

/** The answer to `/steward connections …` (or a press), as Slack text. */
export function connectionsAnswerText(answer: ConnectionsAnswer): string {
  return connectionsText(answer, SLACK_CONNECTIONS_STYLE);
}

/** The answer as a private message. */
export function renderConnectionsAnswer(answer: ConnectionsAnswer): SlackMessage {
  const text = connectionsAnswerText(answer);
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text, verbatim: true } }] };
}

/** The private question: use the connection, or not me; each button names the server and the link. */
export function renderConnectionCheck(check: ConnectionCheck): SlackMessage {
  const text = connectionCheckText(check.server, SLACK_CONNECTIONS_STYLE, true, check.workspace);
  const value = JSON.stringify({ server: check.server, link: check.link });
  const blocks: types.KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `🔐 ${text}`, verbatim: true } },
    {
      type: 'actions',
      elements: [
        {
          type: 'button',
          action_id: CONNECTION_USE_ACTION,
          text: { type: 'plain_text', text: 'Use this connection' },
          style: 'primary',
          value,
        },
        {
          type: 'button',
          action_id: CONNECTION_NOTME_ACTION,
          text: { type: 'plain_text', text: 'Not me' },
          style: 'danger',
          value,
        },
      ],
    },
  ];
  return { text, blocks };
}

/** A press on one of the two buttons as the `connections` command it answers; null for any other action or value. */
export function connectionAnswerOf(actionId: string, value: string | undefined): ConnectionsCommand | null {
  const kind = actionId === CONNECTION_USE_ACTION ? 'use' : actionId === CONNECTION_NOTME_ACTION ? 'refuse' : null;
  if (!kind || !value) return null;
  try {
    const parsed = JSON.parse(value) as { server?: unknown; link?: unknown };
    if (typeof parsed.server !== 'string' || typeof parsed.link !== 'string') return null;
    return { kind, server: parsed.server, link: parsed.link };
  } catch {
    return null;
  }
}
