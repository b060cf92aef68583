/**
 * People's own connections to servers that connect per person, put together from the MCP host (the OAuth itself,
 * sessions, revocation) and the connect links in the database: the engine's `PersonConnections` (links in chat,
 * `/steward connections`, the answer to a connection that waits to be confirmed) and the web's `ConnectFlow` (the
 * link's page and the OAuth callback).
 *
 * A connection made in a browser that was signed in to the dashboard as the link's person is theirs at once. Made in
 * any other browser (the link may have been forwarded, or seen by someone else), it waits, used for nothing, until
 * the person answers in chat, where Steward knows who they are: use it, or not them (revoked and forgotten); after a
 * day without an answer it is revoked and forgotten too.
 */
import { randomBytes } from 'node:crypto';
import type { Conversation, PendingConnection, PersonConnection, PersonConnections } from './engine/ports.ts';
import type { Actor } from './engine/types.ts';
import type { McpHost } from './mcp/mcp-host.ts';
import { PENDING_CONNECTION_TTL_MS, type PgConnectLinks } from './store/pg-connect-links.ts';
import type { ConnectFlow, ConnectTarget, FinishedConnection } from './web/connect-pages.ts';

type Ask = (pending: PendingConnection) => Promise<void>;

/** Both sides of connecting: the engine's and the web origin's. */
export class PersonConnectionFlow implements PersonConnections, ConnectFlow {
  private readonly asks: Ask[] = [];

  constructor(
    private readonly host: McpHost,
    private readonly links: PgConnectLinks,
    /** Steward's web origin (the dashboard's public address); without it no link can be sent. */
    private readonly baseUrl: string | undefined,
    private readonly log?: (level: 'info' | 'warn' | 'error', message: string) => void,
  ) {}

  servers(): string[] {
    return [...this.host.personServers(), ...this.host.workspaceServers()];
  }

  workspaceServers(): string[] {
    return this.host.workspaceServers();
  }

  async connectedAt(server: string, person: Actor): Promise<Date | null> {
    return (await this.host.connectionsOf(person)).find((c) => c.server === server)?.connectedAt ?? null;
  }

  async connectLink(
    server: string,
    person: Actor,
    runId: string | null,
    at: Date,
    conversation?: Conversation,
  ): Promise<string | null> {
    if (this.baseUrl === undefined || !this.servers().includes(server)) return null;
    const token = await this.links.issue({ server, person, runId, ...(conversation && { conversation }) }, at);
    return `${this.baseUrl.replace(/\/+$/, '')}/connect/${token}`;
  }

  list(person: Actor, at: Date): Promise<PersonConnection[]> {
    return this.host.connectionsOf(person, at);
  }

  disconnect(server: string, person: Actor): Promise<{ known: boolean; revoked: boolean }> {
    return this.host.disconnect(server, person);
  }

  async confirm(
    server: string,
    person: Actor,
    answer: 'use' | 'refuse',
    at: Date,
    link?: string,
  ): Promise<{ used: true } | { used: false; revoked: boolean } | null> {
    // One statement decides, once, and only for this person: a second press, or anyone else's, finds nothing.
    const decided = await this.links.decide(server, person, answer === 'use' ? 'used' : 'refused', at, link);
    if (!decided) return null;
    if (answer === 'refuse') return { used: false, revoked: (await this.host.refusePending(server, person)).revoked };
    if (!(await this.host.usePending(server, person))) return null;
    // Whichever process holds the waiting run (this one or another) looks again at once.
    await this.links.signalConnected(decided.runId);
    return { used: true };
  }

  async expirePending(at: Date): Promise<PendingConnection[]> {
    const told: PendingConnection[] = [];
    try {
      const cutoff = new Date(at.getTime() - PENDING_CONNECTION_TTL_MS);
      for (const expired of await this.links.expirePending(cutoff, at)) {
        const { server, person, fingerprint, link, runId, conversation } = expired;
        // Only the tokens that link brought (a newer link of theirs may have brought others since).
        const { known, revoked } = await this.host.refusePending(server, person, fingerprint);
        if (!known) continue;
        this.log?.(
          'info',
          `connect: ${who(person)} did not confirm ${server} within a day; the connection that waited was ${revoked ? 'revoked at the server and ' : ''}forgotten`,
        );
        told.push({ server, person, link, runId, ...(conversation && { conversation }) });
      }
    } catch (err) {
      this.log?.('warn', `connect: connections waiting to be confirmed not expired yet: ${(err as Error).message}`);
    }
    return told;
  }

  whenPending(ask: Ask): () => void {
    this.asks.push(ask);
    return () => {
      const i = this.asks.indexOf(ask);
      if (i >= 0) this.asks.splice(i, 1);
    };
  }

  async heard(): Promise<void> {
    const lines = await this.host.listUnlisted().catch((err: unknown) => [(err as Error).message]);
    for (const line of lines) this.log?.('info', line);
  }

  async peek(token: string, at: Date): Promise<ConnectTarget | null> {
    return this.marked(await this.links.peek(token, at));
  }

  /** The target, marked when the connection it makes is the workspace's. */
  private marked<T extends ConnectTarget | null>(target: T): T {
    if (!target || !this.host.workspaceServers().includes(target.server)) return target;
    return { ...target, workspace: true };
  }

  async start(
    token: string,
    binding: string,
    at: Date,
    signedIn = false,
  ): Promise<(ConnectTarget & { url: string }) | null> {
    // The OAuth state: random, kept only as a hash with the link, used once (RFC 6749 section 10.12).
    const state = randomBytes(32).toString('base64url');
    const target = await this.links.open(token, state, binding, at, signedIn);
    if (!target) return null;
    const url = await this.host.connectionUrl(target.server, target.person, state);
    return { ...this.marked(target), url: url.href };
  }

  async finish(state: string, binding: string, code: string, at: Date): Promise<FinishedConnection | null> {
    const done = await this.links.complete(state, binding, at);
    if (!done) return null;
    const { link, signedIn, ...target } = done;
    const fingerprint = await this.host.finishConnection(target.server, target.person, code, !signedIn);
    if (signedIn) {
      // Whichever process holds the waiting run (this one or another) looks again at once.
      await this.links.signalConnected(target.runId);
      return { ...this.marked(target), pending: false };
    }
    await this.links.markPending(link, at, fingerprint);
    const ask = this.asks[0];
    if (!ask) {
      this.log?.(
        'warn',
        `connect: ${target.person.channel}:${target.person.id} cannot be asked to confirm ${target.server} (no engine here)`,
      );
      return { ...target, pending: true };
    }
    // The connection waits either way; the person can still answer with `connections use <server>`.
    await ask({ ...target, link }).catch((err: unknown) =>
      this.log?.(
        'warn',
        `connect: could not ask ${who(target.person)} to confirm ${target.server}: ${(err as Error).message}`,
      ),
    );
    return { ...target, pending: true };
  }
}

function who(person: Actor): string {
  return `${person.channel}:${person.id}`;
}

/** The connect pages' flow, there once the MCP host is (its pages refuse until then, as for an unknown link). */
export function deferredConnectFlow(holder: { flow?: ConnectFlow }): ConnectFlow {
  return {
    peek: (token, at) => holder.flow?.peek(token, at) ?? Promise.resolve(null),
    start: (token, binding, at, signedIn) => holder.flow?.start(token, binding, at, signedIn) ?? Promise.resolve(null),
    finish: (state, binding, code, at) => holder.flow?.finish(state, binding, code, at) ?? Promise.resolve(null),
  };
}
