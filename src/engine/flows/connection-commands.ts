/**
 * `connections`: a person's own connections to servers that connect per person, and the workspace's to servers an
 * approver connects for it, answered for them alone (only an approver acts on the workspace's). Listing
 * reads where they stand; `connect` gives them a private link with no run waiting (so a server nobody has connected
 * yet can be connected before the planner needs its tools); `disconnect` revokes at the server when it can and
 * forgets the connection here either way; `use` and `refuse` answer about a connection that waits for the person to
 * confirm it (made in a browser that showed no dashboard session of theirs).
 */
import type { ConnectionsAnswer, ConnectionsCommand } from '../channel.ts';
import type { Conversation, PersonConnections } from '../ports.ts';
import type { Actor } from '../types.ts';
import { isApprover } from '../run/run-actions.ts';
import { LINK_MINUTES } from './connection-waits.ts';
import type { Log } from './deps.ts';

/** Answers one `connections` command of `actor`. */
export async function answerConnections(
  deps: { connections?: PersonConnections; clock: () => Date; log: Log; settings: { approvers?: string[] } },
  actor: Actor,
  command: ConnectionsCommand,
  conversation?: Conversation,
): Promise<ConnectionsAnswer> {
  const { connections, clock, log } = deps;
  const servers = connections?.servers() ?? [];
  if (!connections || servers.length === 0) return { kind: 'off' };
  if (command.kind === 'list') return { kind: 'list', connections: await connections.list(actor, clock()) };
  // Server names are the operator's (letters, digits, "_" and "-"); people may type them in any case.
  const server = servers.find((s) => s.toLowerCase() === command.server.toLowerCase());
  if (!server) return { kind: 'unknown', server: command.server, servers };
  const who = `${actor.channel}:${actor.id}`;
  // The workspace's connection acts for everyone who asks: only an approver makes, confirms or removes it.
  const workspace = connections.workspaceServers().includes(server) ? ({ workspace: true } as const) : undefined;
  if (workspace && !isApprover(actor, deps.settings.approvers ?? [])) {
    log('info', `connections: ${who} (not an approver) was refused ${command.kind} for the workspace's ${server}`);
    return { kind: 'approverOnly', server };
  }
  if (command.kind === 'connect') {
    const link = await connections.connectLink(server, actor, null, clock(), conversation);
    log('info', `connections: ${who} asked for a link to connect ${server}${workspace ? ' for the workspace' : ''}`);
    return { kind: 'link', server, link, minutes: LINK_MINUTES, ...workspace };
  }
  if (command.kind === 'use' || command.kind === 'refuse') {
    // The answer comes from the person's own chat identity: only a connection made with their link, waiting, is found.
    const done = await connections.confirm(server, actor, command.kind, clock(), command.link);
    log('info', `connections: ${who} answered ${command.kind} for ${server}${done ? '' : ' (nothing waited)'}`);
    if (!done) return { kind: 'nothingPending', server };
    return done.used ? { kind: 'used', server, ...workspace } : { kind: 'refused', server, revoked: done.revoked };
  }
  const done = await connections.disconnect(server, actor);
  const revoked = done.revoked ? 'revoked at its server' : 'not revoked at its server';
  const whose = workspace ? ' for the workspace' : '';
  log('info', `connections: ${who} disconnected ${server}${whose} (${done.known ? revoked : 'there was none'})`);
  return { kind: 'disconnected', server, ...done, ...workspace };
}
