/**
 * Where the secrets of OAuth connections to MCP servers live: tokens, the registered client, and the PKCE verifier
 * of an authorization in progress, per server and per owner. Values are JSON text that the store keeps encrypted at
 * rest (PgConnectionStore) or in memory (tests); nothing else in Steward reads them.
 */

/** Whose connection: the workspace's one, or one person's (the platform-qualified id the engine uses). */
export type ConnectionOwner = { kind: 'workspace' } | { kind: 'person'; personId: string };

/**
 * The secrets a connection keeps; `pending`: a person's tokens from an authorization they have not confirmed in chat
 * yet (never used for a call until they do).
 */
export type ConnectionSecret = 'tokens' | 'client' | 'verifier' | 'pending';

/** One owner's tokens for one server, as a list shows it (never the tokens). */
export interface StoredConnection {
  server: string;
  owner: ConnectionOwner;
  /** When the tokens were last written (connected, or refreshed). */
  updatedAt: Date;
}

/**
 * What Steward needs of a connection store: read, write and forget one owner's secrets for one server, and find
 * which connections hold tokens (by server, or by owner), newest first.
 */
export interface ConnectionStore {
  read(server: string, owner: ConnectionOwner, secret: ConnectionSecret): Promise<string | undefined>;
  write(server: string, owner: ConnectionOwner, secret: ConnectionSecret, value: string): Promise<void>;
  forget(server: string, owner: ConnectionOwner, secrets: readonly ConnectionSecret[]): Promise<void>;
  /** The connections holding tokens, of one server or of one owner, newest first. */
  connections(of: { server: string } | { owner: ConnectionOwner }): Promise<StoredConnection[]>;
}

/** The owner as one string, for keys and rows: `workspace` or `person:<id>`. */
export function ownerKey(owner: ConnectionOwner): string {
  return owner.kind === 'workspace' ? 'workspace' : `person:${owner.personId}`;
}

/** The connection of the person who acted: their platform-qualified id (`slack:U123`, `discord:42`). */
export function personOwner(person: { channel: string; id: string }): Extract<ConnectionOwner, { kind: 'person' }> {
  return { kind: 'person', personId: `${person.channel}:${person.id}` };
}

/** The owner an `ownerKey` names. */
export function ownerOf(key: string): ConnectionOwner {
  return key.startsWith('person:') ? { kind: 'person', personId: key.slice('person:'.length) } : { kind: 'workspace' };
}

/** A store in this process's memory, for tests and for a host started without a database. */
export function createMemoryConnectionStore(): ConnectionStore {
  const values = new Map<string, { value: string; at: number }>();
  let writes = 0;
  const key = (server: string, owner: ConnectionOwner, secret: ConnectionSecret) =>
    JSON.stringify([server, ownerKey(owner), secret]);
  return {
    read: (server, owner, secret) => Promise.resolve(values.get(key(server, owner, secret))?.value),
    write: (server, owner, secret, value) => {
      values.set(key(server, owner, secret), { value, at: ++writes });
      return Promise.resolve();
    },
    forget: (server, owner, secrets) => {
      for (const secret of secrets) values.delete(key(server, owner, secret));
      return Promise.resolve();
    },
    connections: (of) => {
      const found: (StoredConnection & { at: number })[] = [];
      for (const [k, { at }] of values) {
        const [server, owner, secret] = JSON.parse(k) as [string, string, ConnectionSecret];
        if (secret !== 'tokens') continue;
        if ('server' in of ? of.server !== server : ownerKey(of.owner) !== owner) continue;
        found.push({ server, owner: ownerOf(owner), updatedAt: new Date(at), at });
      }
      return Promise.resolve(found.sort((a, b) => b.at - a.at).map(({ at: _at, ...c }) => c));
    },
  };
}
