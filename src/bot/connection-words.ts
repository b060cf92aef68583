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
  command(action?: 'connect' | 'disconnect' | 'use' | 'notme', server?: string): string;
}

/** What a person types after `connections` to act on one server, and the command each makes. */
const ACTIONS: Record<string, 'connect' | 'disconnect' | 'use' | 'refuse'> = {
  connect: 'connect',
  disconnect: 'disconnect',
  use: 'use',
  notme: 'refuse',
};

/** The command in the words typed after `connections`; a note saying how to type it when they do not fit. */
export function parseConnectionsCommand(
  words: readonly string[],
  style: Pick<ConnectionsStyle, 'command'>,
): ConnectionsCommand | { note: string } {
  const [action = 'list', server, ...more] = words.map((w) => w.trim()).filter((w) => w !== '');
  const verb = action.toLowerCase();
  if (verb === 'list' && server === undefined) return { kind: 'list' };
  const kind = Object.hasOwn(ACTIONS, verb) ? ACTIONS[verb] : undefined;
  if (kind && server !== undefined && more.length === 0) return { kind, server };
  return {
    note: `Use \`${style.command()}\` (your connections), \`${style.command('connect', '<server>')}\` or \`${style.command('disconnect', '<server>')}\` (and \`use\` or \`notme\` to answer about a connection that waits for you).`,
  };
}

/** The answer in words, for the person who asked only. */
export function connectionsText(answer: ConnectionsAnswer, style: ConnectionsStyle): string {
  switch (answer.kind) {
    case 'off':
      return 'No server here connects per person: every tool runs with the connection the operator set up.';
    case 'list': {
      const own = answer.connections.filter((c) => !c.workspace);
      const shared = answer.connections.filter((c) => c.workspace);
      return [
        ...(own.length > 0 ? ['Servers that run your steps with your own account:'] : []),
        ...own.map((c) => `• ${lineOf(c, style)}`),
        ...(shared.length > 0
          ? ["Servers that run everyone's steps as the workspace (an approver connects them):"]
          : []),
        ...shared.map((c) => `• ${workspaceLine(c, style)}`),
      ].join('\n');
    }
    case 'link':
      if (!answer.link)
        return `Steward has no web address to connect ${code(answer.server)} from (its dashboard is off: an operator sets \`STEWARD_DASHBOARD_PORT\`).`;
      if (answer.workspace)
        return `${style.link(answer.link, `Connect ${answer.server} for the workspace`)}: for you only; it works once, for ${String(answer.minutes)} minutes. The account you allow there is the workspace's: every step on ${code(answer.server)} runs with it, whoever asked.`;
      return `${style.link(answer.link, `Connect ${answer.server}`)}: for you only; it works once, for ${String(answer.minutes)} minutes. Once you allow Steward there, your steps on ${code(answer.server)} run as you.`;
    case 'approverOnly':
      return `${code(answer.server)} runs as the workspace, with one connection for everyone: only an approver can connect or disconnect it. Ask one to connect it.`;
    case 'disconnected':
      if (answer.workspace) {
        if (!answer.known) return `The workspace had no connection to ${code(answer.server)}; nothing changed.`;
        return answer.revoked
          ? `Disconnected ${code(answer.server)} for the workspace: its server revoked the authorization, and Steward forgot it. Steps on it wait until an approver connects it again.`
          : `Disconnected ${code(answer.server)} for the workspace: Steward forgot it. Its server offers no revocation (or refused it), so also remove Steward's access in that account. Steps on it wait until an approver connects it again.`;
      }
      if (!answer.known) return `You had no connection to ${code(answer.server)}; nothing changed.`;
      return answer.revoked
        ? `Disconnected ${code(answer.server)}: its server revoked your authorization, and Steward forgot it.`
        : `Disconnected ${code(answer.server)}: Steward forgot it. Its server offers no revocation (or refused it), so also remove Steward's access in your account there.`;
    case 'unknown':
      return `${code(answer.server)} is not a server that connects per person. Those are: ${answer.servers.map(code).join(', ')}.`;
    case 'used':
      if (answer.workspace)
        return `Connected ${code(answer.server)} for the workspace: every step there runs with the account you allowed; runs that waited for it go on.`;
      return `Connected ${code(answer.server)}: your steps there run with the account you allowed; a run that waited for it goes on.`;
    case 'refused':
      return `Forgotten: nothing runs with that account on ${code(answer.server)}${answer.revoked ? ', and its server revoked it' : "; its server offers no revocation (or refused it), so the account's owner should remove Steward's access there"}. To connect your own account: \`${style.command('connect', answer.server)}\`.`;
    case 'nothingPending':
      return `No connection to ${code(answer.server)} waits for you to confirm it (it was answered already, or a newer one replaced it).`;
  }
}

/**
 * The private question after a connection was made through the person's link in a browser that showed no dashboard
 * session of theirs; `buttons`: the platform shows the two answers as buttons, else as what to type.
 */
export function connectionCheckText(
  server: string,
  style: ConnectionsStyle,
  buttons: boolean,
  workspace?: boolean,
): string {
  const whose = workspace ? "as the workspace's (every step there would run with it)" : 'as yours';
  const head = `Someone allowed Steward to use an account on ${code(server)} ${whose}, through your connect link, in a browser that was not signed in to Steward's dashboard as you. Nothing runs with it until you answer.`;
  if (buttons) return `${head} Was it you? *Use this connection* if so; *Not me* revokes and forgets it.`;
  return `${head} If it was you: \`${style.command('use', server)}\`. If not: \`${style.command('notme', server)}\` (revoked and forgotten).`;
}

function lineOf(c: PersonConnection, style: ConnectionsStyle): string {
  const line = stateOf(c, style);
  if (!c.pending) return line;
  return `${line}; a connection made in a browser not signed in as you waits for your answer: \`${style.command('use', c.server)}\` or \`${style.command('notme', c.server)}\``;
}

/** A workspace server's line: whether it is connected, and (for anyone) how an approver acts on it. */
function workspaceLine(c: PersonConnection, style: ConnectionsStyle): string {
  const since = c.connectedAt ? ` since ${utc(c.connectedAt)}` : '';
  const waits = c.pending
    ? `; a connection made in a browser not signed in as its approver waits for their answer`
    : '';
  switch (c.state) {
    case 'connected':
      return `${code(c.server)}: connected for the workspace${since} (an approver disconnects: \`${style.command('disconnect', c.server)}\`)${waits}`;
    case 'expired':
      return `${code(c.server)}: expired${since}; Connect for the workspace (approvers): \`${style.command('connect', c.server)}\`${waits}`;
    case 'none':
      return `${code(c.server)}: not connected; Connect for the workspace (approvers): \`${style.command('connect', c.server)}\`${waits}`;
  }
}

function stateOf(c: PersonConnection, style: ConnectionsStyle): string {
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
