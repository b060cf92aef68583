/**
 * Private links that connect a person to a server that connects per person ("auth": "person"). A link's random token
 * is stored only as its SHA-256, bound to the person, the server and the run that waits (if any), with an expiry.
 * Opening it (once) stores the hash of the OAuth `state` sent to the authorization server and the hash of a value
 * kept in that browser's cookie; the callback completes it (once) only with both.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Creates mcp_connect_links. */
export const mcpConnectLinks: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('mcp_connect_links')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('server', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('user_name', 'text')
      .addColumn('run_id', 'text')
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('state_hash', 'text', (c) => c.unique())
      .addColumn('binding_hash', 'text')
      .addColumn('opened_at', 'timestamptz')
      .addColumn('completed_at', 'timestamptz')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('mcp_connect_links').execute();
  },
};
