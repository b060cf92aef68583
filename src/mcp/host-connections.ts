/**
 * The connections people make to MCP servers from a browser, as the host offers them: a person's own (a server with
 * `"auth": "person"`) or the workspace's one that an approver makes (`"auth": "workspace"`). Where to send the
 * browser, the code it comes back with exchanged, a connection made in another browser confirmed or refused, a
 * disconnect (revoked where the authorization server offers it), and where each person stands. The OAuth itself is
 * the SDK's (person-authorization.ts); the sessions these connections open belong to the host's connections and pools.
 */
import type { PersonConnection } from '../engine/ports.ts';
import type { Actor } from '../engine/types.ts';
import { personOwner, secretFingerprint, type ConnectionOwner } from './connection-store.ts';
import { connectsInBrowser, type McpServerConfig } from './mcp-config.ts';
import type { McpConnection } from './mcp-connection.ts';
import {
  authorizationUrl,
  finishAuthorization,
  revokeStored,
  revokeTokens,
  tokensExpired,
  type PersonAuthorizationOptions,
} from './person-authorization.ts';
import type { PersonSessions } from './person-sessions.ts';

/** The workspace's one connection (of a server with `"auth": "workspace"`). */
export const WORKSPACE: ConnectionOwner = { kind: 'workspace' };

/** People's browser connections to the host's servers. */
export class HostConnections {
  constructor(
    /** The host's servers with one connection each (the workspace's, for those an approver connects). */
    private readonly connections: ReadonlyMap<string, McpConnection>,
    /** The host's servers that connect per person. */
    private readonly personal: ReadonlyMap<string, PersonSessions>,
    private readonly authorization: PersonAuthorizationOptions,
  ) {}

  /** The servers that connect per person. */
  personServers(): string[] {
    return [...this.personal.keys()];
  }

  /** The servers whose one connection, the workspace's, an approver makes in their browser. */
  workspaceServers(): string[] {
    return [...this.connections.values()]
      .filter((c) => !c.config.disabled && connectsInBrowser(c.config) === 'workspace')
      .map((c) => c.config.name);
  }

  /**
   * Where to send a person's browser to connect `server`: its authorization server's page, carrying `state`; the
   * callback at `redirectUrl` then calls `finishConnection`. Throws with a sentence when the server cannot be reached.
   */
  async connectionUrl(server: string, person: Actor, state: string): Promise<URL> {
    return authorizationUrl(this.connectedConfig(server), this.ownerFor(server, person), state, this.authorization);
  }

  /**
   * Exchanges the code the person's browser came back with; their tokens are stored sealed, their old session closed,
   * and a new one opened with the new tokens (its listing is the catalog: the first connection shows the planner the
   * server's tools). A session that does not open now is opened again at their next step. With `pending`, the tokens
   * are kept aside, unused, until the person confirms them (`usePending`) or refuses them (`refusePending`); their
   * `secretFingerprint` is returned, to name them later.
   */
  async finishConnection(server: string, person: Actor, code: string, pending = false): Promise<string | undefined> {
    const owner = this.ownerFor(server, person);
    await finishAuthorization(this.connectedConfig(server), owner, code, this.authorization, pending);
    if (!pending) {
      await this.reopen(server, owner);
      return undefined;
    }
    const kept = await this.authorization.store.read(server, owner, 'pending');
    return kept === undefined ? undefined : secretFingerprint(kept);
  }

  /**
   * The person confirmed the connection that waited for them: its tokens become their connection (the old ones are
   * replaced, their session opened anew). False when none waited.
   */
  async usePending(server: string, person: Actor): Promise<boolean> {
    const owner = this.ownerFor(server, person);
    const { store } = this.authorization;
    this.connectedConfig(server);
    const tokens = await store.read(server, owner, 'pending');
    if (tokens === undefined) return false;
    await store.write(server, owner, 'tokens', tokens);
    await store.forget(server, owner, ['pending']);
    await this.reopen(server, owner);
    return true;
  }

  /**
   * The person said the connection that waited for them is not theirs (or it waited too long): revoked at the
   * authorization server when it offers revocation, and forgotten. Their own connection, if any, is left as it was.
   * With `fingerprint`, only the pending tokens it names (as `finishConnection` returned it): never newer ones that a
   * later authorization of theirs brought.
   */
  async refusePending(
    server: string,
    person: Actor,
    fingerprint?: string,
  ): Promise<{ known: boolean; revoked: boolean }> {
    const owner = this.ownerFor(server, person);
    const config = this.connectedConfig(server);
    const { store, fetch } = this.authorization;
    const client = await store.read(server, owner, 'client');
    return store.hold(server, owner, 'pending', async (held) => {
      const other =
        fingerprint !== undefined && held.value !== undefined && secretFingerprint(held.value) !== fingerprint;
      if (held.value === undefined || other) return { known: false, revoked: false };
      const revoked = await revokeStored(config, held.value, client, fetch);
      await held.forget();
      return { known: true, revoked };
    });
  }

  /**
   * Closes the person's session and opens one with their tokens as stored now (its listing is the catalog); for the
   * workspace's connection, brings the server up now.
   */
  private async reopen(server: string, owner: ConnectionOwner): Promise<void> {
    if (owner.kind === 'workspace') {
      await this.connections.get(server)?.retryNow();
      return;
    }
    const pool = this.personal.get(server);
    await pool?.forget(owner.personId);
    const opened = await pool?.session(owner);
    if (opened?.kind === 'up') opened.release();
  }

  /**
   * Forgets the person's connection to `server`: revoked at its authorization server when that offers revocation
   * (a connection still waiting for them to confirm it, too), then their session closed and their tokens and client
   * deleted. `known`: they had tokens.
   */
  async disconnect(server: string, person: Actor): Promise<{ known: boolean; revoked: boolean }> {
    const owner = this.ownerFor(server, person);
    const config = this.connectedConfig(server);
    const known = (await this.authorization.store.read(server, owner, 'tokens')) !== undefined;
    const revoked = known ? await revokeTokens(config, owner, this.authorization) : false;
    await this.refusePending(server, person);
    if (owner.kind === 'person') await this.personal.get(server)?.forget(owner.personId);
    await this.authorization.store.forget(server, owner, ['tokens', 'client', 'verifier']);
    // Only once its tokens are gone: the session's next attempt must not find them.
    if (owner.kind === 'workspace') this.connections.get(server)?.drop('an approver disconnected it');
    return { known, revoked };
  }

  /**
   * Where the person stands with each server that connects per person at `at`, and the workspace with each server an
   * approver connects for it (`workspace`): when the tokens were stored (or last refreshed), and whether they are
   * expired for good (past their `expires_in` with no refresh token to renew them; a server may still refuse tokens
   * that look alive: a call finds out, and the SDK then forgets them).
   */
  async connectionsOf(person: Actor, at: Date = new Date()): Promise<PersonConnection[]> {
    const { store } = this.authorization;
    const [mine, workspace] = await Promise.all([
      store.connections({ owner: personOwner(person) }),
      this.workspaceServers().length > 0 ? store.connections({ owner: WORKSPACE }) : [],
    ]);
    const servers = [...this.personServers(), ...this.workspaceServers()];
    return Promise.all(
      servers.map(async (server): Promise<PersonConnection> => {
        const owner = this.ownerFor(server, person);
        const found = (owner.kind === 'workspace' ? workspace : mine).find((c) => c.server === server);
        const list = await this.listed(server, owner, found, at);
        return owner.kind === 'workspace' ? { ...list, workspace: true } : list;
      }),
    );
  }

  /** Where one owner stands with one server at `at`: `found` is their stored connection, if any. */
  private async listed(
    server: string,
    owner: ConnectionOwner,
    found: { updatedAt: Date } | undefined,
    at: Date,
  ): Promise<PersonConnection> {
    const pending = (await this.authorization.store.read(server, owner, 'pending')) !== undefined;
    if (!found) return { server, state: 'none', connectedAt: null, pending };
    const text = await this.authorization.store.read(server, owner, 'tokens');
    const expired = tokensExpired(text, found.updatedAt, at);
    return { server, state: expired ? 'expired' : 'connected', connectedAt: found.updatedAt, pending };
  }

  /**
   * Whether the person holds tokens for the server (the workspace, for a server an approver connects); it may still
   * refuse them: a call finds out.
   */
  async hasConnection(server: string, person: Actor): Promise<boolean> {
    return (await this.authorization.store.read(server, this.ownerFor(server, person), 'tokens')) !== undefined;
  }

  /** Whose connection a browser authorizing `server` for `person` makes: theirs, or the workspace's. */
  private ownerFor(server: string, person: Actor): ConnectionOwner {
    return this.personal.has(server) ? personOwner(person) : WORKSPACE;
  }

  /** The config of a server connected from a browser (per person, or for the workspace by an approver). */
  private connectedConfig(server: string): McpServerConfig {
    const config = this.personal.get(server)?.config ?? this.connections.get(server)?.config;
    if (!config || !connectsInBrowser(config))
      throw new Error(`MCP server "${server}" is not connected from a browser`);
    return config;
  }
}
