/**
 * Safety: tool definitions pinned at approval (compared before each step), and token budgets per run and
 * per person per day, kept as counters that one conditional UPDATE can judge.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds tool_pins, runs.tokens_used, user_daily_tokens and inbound_events. */
export const safety: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('tool_pins')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('definition', 'jsonb', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addUniqueConstraint('tool_pins_run_tool_key', ['run_id', 'tool'])
      .execute();
    await db.schema
      .alterTable('runs')
      .addColumn('tokens_used', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('user_daily_tokens')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('day', 'date', (c) => c.notNull())
      .addColumn('tokens', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addUniqueConstraint('user_daily_tokens_key', ['channel', 'user_id', 'day'])
      .execute();
    // Platform event ids already handled: a redelivered event (Slack retries) is dropped even after a restart.
    await db.schema
      .createTable('inbound_events')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('key', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('inbound_events').execute();
    await db.schema.dropTable('user_daily_tokens').execute();
    await db.schema.alterTable('runs').dropColumn('tokens_used').execute();
    await db.schema.dropTable('tool_pins').execute();
  },
};
