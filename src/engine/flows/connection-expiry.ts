/**
 * A connection made through someone's link that waited a day for them to confirm it was revoked and forgotten by the
 * sweep (any process's, once): the person hears it in chat, privately, with a fresh link to connect again. Told in
 * the thread of the run that still waits on it, else where the link was sent.
 */
import type { Notifier, PendingConnection, PersonConnections, RunRecords } from '../ports.ts';
import { plainText, sentence } from '../run/run-actions.ts';
import { isTerminal } from '../types.ts';
import { LINK_MINUTES } from './connection-waits.ts';
import type { Log } from './deps.ts';

/** What telling needs. */
export interface ExpiryDeps {
  connections: PersonConnections;
  store: Pick<RunRecords, 'getRun'>;
  notifier: Notifier;
  clock: () => Date;
  log: Log;
}

/** Tells each person whose connection expired unconfirmed, with a fresh link. Never throws. */
export async function tellExpired(deps: ExpiryDeps, expired: readonly PendingConnection[]): Promise<void> {
  for (const e of expired) {
    try {
      await tellOne(deps, e);
    } catch (err) {
      deps.log(
        'warn',
        `connect: could not tell ${e.person.channel}:${e.person.id} that ${e.server} expired: ${(err as Error).message}`,
      );
    }
  }
}

async function tellOne(deps: ExpiryDeps, e: PendingConnection): Promise<void> {
  const { connections, store, notifier, clock } = deps;
  const run = e.runId ? await store.getRun(e.runId) : null;
  const waiting = run && !isTerminal(run.status) ? run : null;
  // Nowhere known: the channel shows it where the person last was (or, on Discord, in a direct message).
  const conversation = waiting?.conversation ?? e.conversation ?? { channel: e.person.channel, key: '' };
  const link = await connections.connectLink(e.server, e.person, waiting?.id ?? null, clock(), conversation);
  const workspace = connections.workspaceServers().includes(e.server);
  const what = workspace ? `${e.server} for the workspace` : e.server;
  const again = link
    ? ` Connect ${what} again: ${link} (for you only; it works once, for ${String(LINK_MINUTES)} minutes).`
    : ' Steward has no web address to connect from now (its dashboard is off).';
  const waits = waiting ? ' This run still waits for it.' : '';
  const parts = sentence`${e.person}: the connection to ${what} made through your link was not confirmed in chat within a day, so Steward revoked it and forgot it; nothing ran with it.${waits}${again}`;
  await notifier.send(conversation, {
    kind: 'notice',
    level: 'warning',
    text: plainText(parts),
    parts,
    to: e.person,
    ...(waiting && { runId: waiting.id }),
  });
}
