/**
 * Where the secrets of OAuth connections to MCP servers live: tokens, the registered client, and the PKCE verifier
 * of an authorization in progress, per server and per owner. Values are JSON text that the store keeps encrypted at
 * rest (PgConnectionStore) or in memory (tests); nothing else in Steward reads them.
 */

/** Whose connection: the workspace's one, or one person's (the platform-qualified id the engine uses). */
export type ConnectionOwner = { kind: 'workspace' } | { kind: 'person'; personId: string };

/** The secrets a connection keeps. */
export type ConnectionSecret = 'tokens' | 'client' | 'verifier';

/** What Steward needs of a connection store: read, write and forget one owner's secrets for one server. */
export interface ConnectionStore {
  read(server: string, owner: ConnectionOwner, secret: ConnectionSecret): Promise<string | undefined>;
  write(server: string, owner: ConnectionOwner, secret: ConnectionSecret, value: string): Promise<void>;
  forget(server: string, owner: ConnectionOwner, secrets: readonly ConnectionSecret[]): Promise<void>;
}

/** The owner as one string, for keys and rows: `workspace` or `person:<id>`. */
export function ownerKey(owner: ConnectionOwner): string {
  return owner.kind === 'workspace' ? 'workspace' : `person:${owner.personId}`;
}

/** A store in this process's memory, for tests and for a host started without a database. */
export function createMemoryConnectionStore(): ConnectionStore {
  const values = new Map<string, string>();
  const key = (server: string, owner: ConnectionOwner, secret: ConnectionSecret) =>
    JSON.stringify([server, ownerKey(owner), secret]);
  return {
    read: (server, owner, secret) => Promise.resolve(values.get(key(server, owner, secret))),
    write: (server, owner, secret, value) => {
      values.set(key(server, owner, secret), value);
      return Promise.resolve();
    },
    forget: (server, owner, secrets) => {
      for (const secret of secrets) values.delete(key(server, owner, secret));
      return Promise.resolve();
    },
  };
}
