/**
 * Sign-in links of the web dashboard: one row per link, holding only a hash of its token (a leaked table opens
 * nothing), the person it signs in, when it expires and when it was used. Using a link is one conditional UPDATE.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Creates dashboard_links. */
export const dashboard: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('dashboard_links')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      // SHA-256 of the token, hex: the token itself is only in the link the person was sent.
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('user_name', 'text')
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('used_at', 'timestamptz')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('dashboard_links').execute();
  },
};
