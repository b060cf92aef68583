/**
 * `ConnectionStore` over Kysely, for PostgreSQL and PGlite alike: each secret sealed by a `SecretBox` (AES-256-GCM)
 * and bound to its server, owner and kind, so the table never holds a token or client secret in clear.
 */
import { sql, type ColumnType, type Generated, type Kysely } from 'kysely';
import {
  ownerKey,
  ownerOf,
  type ConnectionOwner,
  type ConnectionSecret,
  type ConnectionStore,
  type HeldSecret,
  type StoredConnection,
} from '../mcp/connection-store.ts';
import { StewardError } from '../engine/errors.ts';
import type { DatabaseSchema } from './schema.ts';
import { parseSecretKey, SecretBox } from './secret-box.ts';

/** One sealed secret (migration 0021). */
export interface McpConnectionSecretsTable {
  id: Generated<number | string>;
  server: string;
  owner: string;
  kind: string;
  key_id: string;
  nonce: Buffer;
  ciphertext: Buffer;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

type Db = Kysely<DatabaseSchema & { mcp_connection_secrets: McpConnectionSecretsTable }>;

/** Sealed connection secrets in the `mcp_connection_secrets` table. */
export class PgConnectionStore implements ConnectionStore {
  private readonly db: Db;

  constructor(
    db: Kysely<DatabaseSchema>,
    private readonly box: SecretBox,
  ) {
    this.db = db.withTables<{ mcp_connection_secrets: McpConnectionSecretsTable }>();
  }

  async read(server: string, owner: ConnectionOwner, secret: ConnectionSecret): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('mcp_connection_secrets')
      .select(['key_id', 'nonce', 'ciphertext'])
      .where('server', '=', server)
      .where('owner', '=', ownerKey(owner))
      .where('kind', '=', secret)
      .executeTakeFirst();
    if (!row) return undefined;
    const sealed = { keyId: row.key_id, nonce: Buffer.from(row.nonce), ciphertext: Buffer.from(row.ciphertext) };
    return this.box.open(sealed, boundTo(server, ownerKey(owner), secret));
  }

  write(server: string, owner: ConnectionOwner, secret: ConnectionSecret, value: string): Promise<void> {
    return this.writeIn(this.db, server, owner, secret, value);
  }

  private async writeIn(
    db: Db,
    server: string,
    owner: ConnectionOwner,
    secret: ConnectionSecret,
    value: string,
  ): Promise<void> {
    const key = ownerKey(owner);
    const sealed = this.box.seal(value, boundTo(server, key, secret));
    const row = { key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext };
    await db
      .insertInto('mcp_connection_secrets')
      .values({ server, owner: key, kind: secret, ...row })
      .onConflict((c) => c.columns(['server', 'owner', 'kind']).doUpdateSet({ ...row, updated_at: sql`now()` }))
      .execute();
  }

  forget(server: string, owner: ConnectionOwner, secrets: readonly ConnectionSecret[]): Promise<void> {
    return this.forgetIn(this.db, server, owner, secrets);
  }

  private async forgetIn(
    db: Db,
    server: string,
    owner: ConnectionOwner,
    secrets: readonly ConnectionSecret[],
  ): Promise<void> {
    if (secrets.length === 0) return;
    await db
      .deleteFrom('mcp_connection_secrets')
      .where('server', '=', server)
      .where('owner', '=', ownerKey(owner))
      .where('kind', 'in', [...secrets])
      .execute();
  }

  async connections(of: { server: string } | { owner: ConnectionOwner }): Promise<StoredConnection[]> {
    let query = this.db
      .selectFrom('mcp_connection_secrets')
      .select(['server', 'owner', 'updated_at'])
      .where('kind', '=', 'tokens');
    query = 'server' in of ? query.where('server', '=', of.server) : query.where('owner', '=', ownerKey(of.owner));
    const rows = await query.orderBy('updated_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map((r) => ({ server: r.server, owner: ownerOf(r.owner), updatedAt: new Date(r.updated_at) }));
  }

  /**
   * Holds the secret's row with `SELECT ... FOR UPDATE` in a transaction that lasts as long as `fn`: another
   * process's hold or write of the same row waits for it. Everything `fn` does to the row goes through that transaction's own
   * connection, so a full pool of waiting holders never starves the one that holds. No row, no lock: there is
   * nothing to refresh or forget, and `replace` then inserts as `write` does.
   */
  hold<T>(
    server: string,
    owner: ConnectionOwner,
    secret: ConnectionSecret,
    fn: (held: HeldSecret) => Promise<T>,
  ): Promise<T> {
    const key = ownerKey(owner);
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('mcp_connection_secrets')
        .select(['key_id', 'nonce', 'ciphertext'])
        .where('server', '=', server)
        .where('owner', '=', key)
        .where('kind', '=', secret)
        .forUpdate()
        .executeTakeFirst();
      const value = row
        ? this.box.open(
            { keyId: row.key_id, nonce: Buffer.from(row.nonce), ciphertext: Buffer.from(row.ciphertext) },
            boundTo(server, key, secret),
          )
        : undefined;
      return fn({
        value,
        replace: (next) => this.writeIn(tx, server, owner, secret, next),
        forget: () => this.forgetIn(tx, server, owner, [secret]),
      });
    });
  }

  /**
   * Seals again under the current key every row sealed under an older one (key rotation: set the new key as
   * STEWARD_SECRETS_KEY, the old one in STEWARD_SECRETS_OLD_KEYS, run this, then drop the old key). Returns how
   * many rows it sealed again; a row changed meanwhile is left to its writer, who sealed it with the current key.
   */
  async sealAgain(): Promise<number> {
    const rows = await this.db
      .selectFrom('mcp_connection_secrets')
      .select(['id', 'server', 'owner', 'kind', 'key_id', 'nonce', 'ciphertext'])
      .where('key_id', '<>', this.box.currentKeyId)
      .execute();
    let sealedAgain = 0;
    for (const row of rows) {
      const bound = boundTo(row.server, row.owner, row.kind);
      const plain = this.box.open(
        { keyId: row.key_id, nonce: Buffer.from(row.nonce), ciphertext: Buffer.from(row.ciphertext) },
        bound,
      );
      const sealed = this.box.seal(plain, bound);
      const result = await this.db
        .updateTable('mcp_connection_secrets')
        .set({ key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext, updated_at: sql`now()` })
        .where('id', '=', row.id)
        .where('key_id', '=', row.key_id)
        .executeTakeFirst();
      sealedAgain += Number(result.numUpdatedRows);
    }
    return sealedAgain;
  }
}

/** The additional data a row's ciphertext is bound to. */
function boundTo(server: string, owner: string, kind: string): string {
  return JSON.stringify(['mcp_connection_secrets', server, owner, kind]);
}

/**
 * The connection store for a process: sealed under `key` (STEWARD_SECRETS_KEY), rows under `oldKeys` sealed again
 * at once. Without a key, undefined, unless `needed` (a server has "auth"): then a config error saying what to set.
 */
export async function openConnectionStore(
  db: Kysely<DatabaseSchema>,
  keys: { key: string | undefined; oldKeys: readonly string[]; needed: boolean },
): Promise<{ store: PgConnectionStore | undefined; sealedAgain: number }> {
  if (!keys.key) {
    if (!keys.needed) return { store: undefined, sealedAgain: 0 };
    throw new StewardError(
      'config',
      'Configuration error: mcp.json has a server with "auth", so STEWARD_SECRETS_KEY must be set: 32 random bytes in base64 (e.g. the output of `openssl rand -base64 32`). It seals OAuth tokens in the database; keep it as safe as the database password.',
    );
  }
  const old = keys.oldKeys.map((k, i) => parseSecretKey(k, `STEWARD_SECRETS_OLD_KEYS[${i}]`));
  const store = new PgConnectionStore(db, new SecretBox(parseSecretKey(keys.key), old));
  return { store, sealedAgain: old.length > 0 ? await store.sealAgain() : 0 };
}
