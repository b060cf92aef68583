/**
 * `connections` as every channel says it (pure): the words after `connections` as a command, and the answer in
 * words. Each platform gives its own way to show a link and to type the command (`ConnectionsStyle`); the sentences
 * are the same everywhere, and no platform imports another's.
 */
import type { ConnectionsAnswer, ConnectionsCommand } from '../engine/channel.ts';
import type { PersonConnection } from '../engine/ports.ts';

/** What differs per platform. */
export interface ConnectionsStyle {
  /** A link with its words: Slack `<url|words>`, Discord `[words](<url>)`, the console `words: url`. */
  link(url: string, words: string): string;
  /** How a person types the command here: `/steward connections connect tracker`, or `connections` in the console. */
  command(action?: 'connect' | 'disconnect', server?: string): string;
}

/** The command in the words typed after `connections`; a note saying how to type it when they do not fit. */
export function parseConnectionsCommand(
  words: readonly string[],
  style: Pick<ConnectionsStyle, 'command'>,
): ConnectionsCommand | { note: string } {
  const [action = 'list', server, ...more] = words.map((w) => w.trim()).filter((w) => w !== '');
  const verb = action.toLowerCase();
  if (verb === 'list' && server === undefined) return { kind: 'list' };
  if ((verb === 'connect' || verb === 'disconnect') && server !== undefined && more.length === 0)
    return { kind: verb, server };
  return {
    note: `Use \`${style.command()}\` (your connections), \`${style.command('connect', '<server>')}\` or \`${style.command('disconnect', '<server>')}\`.`,
  };
}

/** The answer in words, for the person who asked only. */
export function connectionsText(answer: ConnectionsAnswer, style: ConnectionsStyle): string {
  switch (answer.kind) {
    case 'off':
      return 'No server here connects per person: every tool runs with the connection the operator set up.';
    case 'list':
      return [
        'Servers that run your steps with your own account:',
        ...answer.connections.map((c) => `• ${lineOf(c, style)}`),
      ].join('\n');
    case 'link':
      if (!answer.link)
        return `Steward has no web address to connect ${code(answer.server)} from (its dashboard is off: an operator sets \`STEWARD_DASHBOARD_PORT\`).`;
      return `${style.link(answer.link, `Connect ${answer.server}`)}: for you only; it works once, for ${String(answer.minutes)} minutes. Once you allow Steward there, your steps on ${code(answer.server)} run as you.`;
    case 'disconnected':
      if (!answer.known) return `You had no connection to ${code(answer.server)}; nothing changed.`;
      return answer.revoked
        ? `Disconnected ${code(answer.server)}: its server revoked your authorization, and Steward forgot it.`
        : `Disconnected ${code(answer.server)}: Steward forgot it. Its server offers no revocation (or refused it), so also remove Steward's access in your account there.`;
    case 'unknown':
      return `${code(answer.server)} is not a server that connects per person. Those are: ${answer.servers.map(code).join(', ')}.`;
  }
}

function lineOf(c: PersonConnection, style: ConnectionsStyle): string {
  const since = c.connectedAt ? ` since ${utc(c.connectedAt)}` : '';
  switch (c.state) {
    case 'connected':
      return `${code(c.server)}: connected${since} (\`${style.command('disconnect', c.server)}\` disconnects)`;
    case 'expired':
      return `${code(c.server)}: expired${since}; connect again: \`${style.command('connect', c.server)}\``;
    case 'none':
      return `${code(c.server)}: not connected (\`${style.command('connect', c.server)}\`)`;
  }
}

/**
 * A server's name in code marks. Names from the configuration are letters, digits, `_` and `-`; a name someone
 * typed is shown in those characters only, cut, so it can neither end the marks nor ping or link anyone.
 */
function code(server: string): string {
  const shown = server.replace(/[^\w-]/g, '?');
  return `\`${shown.length > 40 ? `${shown.slice(0, 39)}…` : shown}\``;
}

/** An instant in UTC, to the minute. */
function utc(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
