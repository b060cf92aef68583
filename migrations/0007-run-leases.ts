/**
 * Several processes on one database: a run is driven by the process that holds its lease (`owner`, until
 * `lease_expires_at` by the database's clock), and each new holder gets a higher `fence`. A step attempt carries the
 * fence it was started under, so a process that lost the lease can neither start nor end a step. Decisions that
 * reach a process which does not drive the run wait in `run_commands` until the owner takes them. A review's
 * deadline is kept in `review_due_at`, so a new owner keeps it.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds the lease columns, the attempts' fence and the decision queue. */
export const runLeases: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('runs')
      .addColumn('owner', 'text')
      .addColumn('lease_expires_at', 'timestamptz')
      .addColumn('fence', 'integer', (c) => c.notNull().defaultTo(0))
      // When the review now awaited runs out, so whoever holds the run next keeps the same deadline.
      .addColumn('review_due_at', 'timestamptz')
      .execute();
    // The renewals and the takeover scan read only runs that are held or need an owner.
    await db.schema
      .createIndex('runs_owner_idx')
      .on('runs')
      .column('owner')
      .where(sql.ref('owner'), 'is not', null)
      .execute();
    await db.schema.alterTable('step_attempts').addColumn('fence', 'integer').execute();
    await db.schema
      .createTable('run_commands')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('command', 'jsonb', (c) => c.notNull())
      // Set by the owner that took the decision: a repeat of the take finds what it took.
      .addColumn('taken_op', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema.createIndex('run_commands_run_idx').on('run_commands').columns(['run_id', 'id']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('run_commands').execute();
    await db.schema.alterTable('step_attempts').dropColumn('fence').execute();
    await db.schema.dropIndex('runs_owner_idx').execute();
    await db.schema
      .alterTable('runs')
      .dropColumn('owner')
      .dropColumn('lease_expires_at')
      .dropColumn('fence')
      .dropColumn('review_due_at')
      .execute();
  },
};
