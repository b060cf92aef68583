/**
 * People's own connections to servers that connect per person, put together from the MCP host (the OAuth itself,
 * sessions, revocation) and the connect links in the database: the engine's `PersonConnections` (links in chat,
 * `/steward connections`) and the web's `ConnectFlow` (the link's page and the OAuth callback).
 */
import { randomBytes } from 'node:crypto';
import type { PersonConnection, PersonConnections } from './engine/ports.ts';
import type { Actor } from './engine/types.ts';
import type { McpHost } from './mcp/mcp-host.ts';
import type { PgConnectLinks } from './store/pg-connect-links.ts';
import type { ConnectFlow, ConnectTarget } from './web/connect-pages.ts';

/** Both sides of connecting: the engine's and the web origin's. */
export class PersonConnectionFlow implements PersonConnections, ConnectFlow {
  constructor(
    private readonly host: McpHost,
    private readonly links: PgConnectLinks,
    /** Steward's web origin (the dashboard's public address); without it no link can be sent. */
    private readonly baseUrl: string | undefined,
  ) {}

  servers(): string[] {
    return this.host.personServers();
  }

  async connectedAt(server: string, person: Actor): Promise<Date | null> {
    return (await this.host.connectionsOf(person)).find((c) => c.server === server)?.connectedAt ?? null;
  }

  async connectLink(server: string, person: Actor, runId: string | null, at: Date): Promise<string | null> {
    if (this.baseUrl === undefined || !this.servers().includes(server)) return null;
    const token = await this.links.issue({ server, person, runId }, at);
    return `${this.baseUrl.replace(/\/+$/, '')}/connect/${token}`;
  }

  list(person: Actor, at: Date): Promise<PersonConnection[]> {
    return this.host.connectionsOf(person, at);
  }

  disconnect(server: string, person: Actor): Promise<{ known: boolean; revoked: boolean }> {
    return this.host.disconnect(server, person);
  }

  peek(token: string, at: Date): Promise<ConnectTarget | null> {
    return this.links.peek(token, at);
  }

  async start(token: string, binding: string, at: Date): Promise<(ConnectTarget & { url: string }) | null> {
    // The OAuth state: random, kept only as a hash with the link, used once (RFC 6749 section 10.12).
    const state = randomBytes(32).toString('base64url');
    const target = await this.links.open(token, state, binding, at);
    if (!target) return null;
    const url = await this.host.connectionUrl(target.server, target.person, state);
    return { ...target, url: url.href };
  }

  async finish(state: string, binding: string, code: string, at: Date): Promise<ConnectTarget | null> {
    const target = await this.links.complete(state, binding, at);
    if (!target) return null;
    await this.host.finishConnection(target.server, target.person, code);
    // Whichever process holds the waiting run (this one or another) looks again at once.
    await this.links.signalConnected(target.runId);
    return target;
  }
}

/** The connect pages' flow, there once the MCP host is (its pages refuse until then, as for an unknown link). */
export function deferredConnectFlow(holder: { flow?: ConnectFlow }): ConnectFlow {
  return {
    peek: (token, at) => holder.flow?.peek(token, at) ?? Promise.resolve(null),
    start: (token, binding, at) => holder.flow?.start(token, binding, at) ?? Promise.resolve(null),
    finish: (state, binding, code, at) => holder.flow?.finish(state, binding, code, at) ?? Promise.resolve(null),
  };
}
