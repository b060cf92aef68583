/**
 * Dashboard sessions kept in the database: the cookie carries only a random session id, the table its SHA-256, the
 * person, the approver roles they held, when it expires and when it was ended. Signing out ends the row, so a copied
 * cookie stops working at once on every process; "sign out everywhere" ends every row of the person.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Creates dashboard_sessions. */
export const dashboardSessions: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('dashboard_sessions')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('session_hash', 'text', (c) => c.notNull().unique())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('user_name', 'text')
      .addColumn('approver_roles', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('ended_at', 'timestamptz')
      .execute();
    await db.schema
      .createIndex('dashboard_sessions_person')
      .on('dashboard_sessions')
      .columns(['channel', 'user_id'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('dashboard_sessions').execute();
  },
};
