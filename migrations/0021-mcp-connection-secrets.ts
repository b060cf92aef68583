/**
 * The secrets of OAuth connections to MCP servers (tokens, registered clients, PKCE verifiers), one row per server,
 * owner and kind, sealed with AES-256-GCM; `key_id` names the key that sealed the row, so rows under an older key can
 * be found and sealed again under the new one.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Creates `mcp_connection_secrets`. */
export const mcpConnectionSecrets: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('mcp_connection_secrets')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('server', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('nonce', 'bytea', (c) => c.notNull())
      .addColumn('ciphertext', 'bytea', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addUniqueConstraint('mcp_connection_secrets_unique', ['server', 'owner', 'kind'])
      .execute();
    await db.schema
      .createIndex('mcp_connection_secrets_key_id')
      .on('mcp_connection_secrets')
      .column('key_id')
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('mcp_connection_secrets').execute();
  },
};
