/**
 * Writes that are safe to repeat: a write retried after a lost connection may already have been applied, so each
 * non-idempotent write carries an operation id, and a repeat with the same id finds its own earlier effect
 * instead of applying twice (or, for a conditional update, instead of reporting a lost race).
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

const OP_TABLES = ['run_events', 'decisions', 'llm_usage'] as const;

/** Adds operation-id columns (unique where set) and the token_operations ledger. */
export const repeatSafeWrites: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('runs').addColumn('status_op', 'text').addColumn('amendment_op', 'text').execute();
    await db.schema.alterTable('inbound_events').addColumn('op', 'text').execute();
    for (const table of OP_TABLES) {
      await db.schema.alterTable(table).addColumn('op', 'text').execute();
      await db.schema
        .createIndex(`${table}_op_key`)
        .on(table)
        .column('op')
        .unique()
        .where(sql.ref('op'), 'is not', null)
        .execute();
    }
    await db.schema
      .createTable('token_operations')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('op', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('token_operations').execute();
    for (const table of OP_TABLES) {
      await db.schema.dropIndex(`${table}_op_key`).execute();
      await db.schema.alterTable(table).dropColumn('op').execute();
    }
    await db.schema.alterTable('inbound_events').dropColumn('op').execute();
    await db.schema.alterTable('runs').dropColumn('status_op').dropColumn('amendment_op').execute();
  },
};
