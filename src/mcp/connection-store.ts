/**
 * Where the secrets of OAuth connections to MCP servers live: tokens, the registered client, and the PKCE verifier
 * of an authorization in progress, per server and per owner. Values are JSON text that the store keeps encrypted at
 * rest (PgConnectionStore) or in memory (tests); nothing else in Steward reads them.
 */
import { createHash } from 'node:crypto';

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

/** One owner's secret of one kind for one server while a caller holds it (see `ConnectionStore.hold`). */
export interface HeldSecret {
  /** The value stored when the hold began, undefined when none was. */
  value: string | undefined;
  /** Stores `value` in its place, before the hold ends. */
  replace(value: string): Promise<void>;
  /** Forgets the value held (never a newer one: none can be written while the hold lasts). */
  forget(): Promise<void>;
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
  /**
   * Runs `fn` with the owner's stored `secret` for `server` held: until `fn` settles, no other hold of it (in this
   * process or another on the same database) begins and no other write changes it, so what `fn` reads is what it
   * replaces or forgets. A refresh runs under the hold of the tokens, so a rotating refresh token is never sent twice.
   */
  hold<T>(
    server: string,
    owner: ConnectionOwner,
    secret: ConnectionSecret,
    fn: (held: HeldSecret) => Promise<T>,
  ): Promise<T>;
}

/** A secret's SHA-256 (hex): to tell later that a stored value is still the one meant, without keeping it. */
export function secretFingerprint(value: string): string {
  return createHash('sha256').update(value).digest('hex');
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
  /** Per key, the end of the last hold begun: the next one waits for it. */
  const holds = new Map<string, Promise<unknown>>();
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
    hold: async (server, owner, secret, fn) => {
      const k = key(server, owner, secret);
      const before = holds.get(k) ?? Promise.resolve();
      const run = before.then(() => {
        const stored = values.get(k);
        return fn({
          value: stored?.value,
          replace: (value) => {
            values.set(k, { value, at: ++writes });
            return Promise.resolve();
          },
          forget: () => {
            values.delete(k);
            return Promise.resolve();
          },
        });
      });
      const settled = run.then(
        () => undefined,
        () => undefined,
      );
      holds.set(k, settled);
      try {
        return await run;
      } finally {
        if (holds.get(k) === settled) holds.delete(k);
      }
    },
  };
}
