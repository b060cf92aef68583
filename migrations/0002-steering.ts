/**
 * Steering: the risk a person approved and the breakpoints set on a run (both survive a restart),
 * and each person's review preference.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds approved risk and breakpoints to runs, and the user_preferences table. */
export const steering: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('runs').addColumn('approved_risk', 'text').execute();
    await db.schema
      .alterTable('runs')
      .addColumn('breakpoints', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .execute();
    await db.schema
      .createTable('user_preferences')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('review', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addUniqueConstraint('user_preferences_user_key', ['channel', 'user_id'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('user_preferences').execute();
    await db.schema.alterTable('runs').dropColumn('breakpoints').execute();
    await db.schema.alterTable('runs').dropColumn('approved_risk').execute();
  },
};
