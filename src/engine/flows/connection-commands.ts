/**
 * `connections`: a person's own connections to servers that connect per person, answered for them alone. Listing
 * reads where they stand; `connect` gives them a private link with no run waiting (so a server nobody has connected
 * yet can be connected before the planner needs its tools); `disconnect` revokes at the server when it can and
 * forgets the connection here either way.
 */
import type { ConnectionsAnswer, ConnectionsCommand } from '../channel.ts';
import type { PersonConnections } from '../ports.ts';
import type { Actor } from '../types.ts';
import { LINK_MINUTES } from './connection-waits.ts';
import type { Log } from './deps.ts';

/** Answers one `connections` command of `actor`. */
export async function answerConnections(
  deps: { connections?: PersonConnections; clock: () => Date; log: Log },
  actor: Actor,
  command: ConnectionsCommand,
): Promise<ConnectionsAnswer> {
  const { connections, clock, log } = deps;
  const servers = connections?.servers() ?? [];
  if (!connections || servers.length === 0) return { kind: 'off' };
  if (command.kind === 'list') return { kind: 'list', connections: await connections.list(actor, clock()) };
  // Server names are the operator's (letters, digits, "_" and "-"); people may type them in any case.
  const server = servers.find((s) => s.toLowerCase() === command.server.toLowerCase());
  if (!server) return { kind: 'unknown', server: command.server, servers };
  const who = `${actor.channel}:${actor.id}`;
  if (command.kind === 'connect') {
    const link = await connections.connectLink(server, actor, null, clock());
    log('info', `connections: ${who} asked for a link to connect ${server}`);
    return { kind: 'link', server, link, minutes: LINK_MINUTES };
  }
  const done = await connections.disconnect(server, actor);
  const revoked = done.revoked ? 'revoked at its server' : 'not revoked at its server';
  log('info', `connections: ${who} disconnected ${server} (${done.known ? revoked : 'there was none'})`);
  return { kind: 'disconnected', server, ...done };
}
