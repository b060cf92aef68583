/**
 * Brakes only people can raise (issue 30): `brake_raises` records an approver's decision on a run's card to let its
 * delegate steps go deeper than the operator's setting (never past the ceiling of 5), with who and when; a spawn reads
 * it in the transaction that judges the depth. `delegations.depth_raised` marks a chain whose limit an approver
 * raised, so the runs it hands out keep that room instead of falling back to the setting.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Creates `brake_raises` and `delegations.depth_raised`. */
export const brakeRaises: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('brake_raises')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('brake', 'text', (c) => c.notNull())
      .addColumn('value', 'integer', (c) => c.notNull())
      .addColumn('approver_id', 'text', (c) => c.notNull())
      .addColumn('approver_name', 'text')
      .addColumn('approver_channel', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addUniqueConstraint('brake_raises_run_brake', ['run_id', 'brake'])
      .execute();
    await db.schema
      .alterTable('delegations')
      .addColumn('depth_raised', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('delegations').dropColumn('depth_raised').execute();
    await db.schema.dropTable('brake_raises').execute();
  },
};
