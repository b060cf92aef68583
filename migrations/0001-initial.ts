/**
 * The first schema: runs, their immutable plan revisions, step attempts, decisions, model usage and the event log.
 * Landed migrations are never edited; change the schema with a new numbered file.
 */
import { sql, type Kysely, type Migration } from 'kysely';

// Migrations see the database as it was when they were written, never today's schema types.
type AnyDb = Kysely<unknown>;

const now = sql`now()`;

/** Creates the initial tables and indexes. */
export const initial: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('conversation_key', 'text', (c) => c.notNull())
      .addColumn('requester_id', 'text', (c) => c.notNull())
      .addColumn('requester_name', 'text')
      .addColumn('request', 'text', (c) => c.notNull())
      // 0 before any plan is saved too: the current plan is looked up by (id, revision) and may be missing.
      .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('amendment_rounds', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('report', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .execute();
    // Recovery at start-up lists runs by status.
    await db.schema.createIndex('runs_status_idx').on('runs').column('status').execute();
    await db.schema.createIndex('runs_conversation_idx').on('runs').columns(['channel', 'conversation_key']).execute();

    await db.schema
      .createTable('plan_revisions')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('plan', 'jsonb', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addUniqueConstraint('plan_revisions_run_revision_key', ['run_id', 'revision'])
      .execute();

    await db.schema
      .createTable('step_attempts')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('step_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('args', 'jsonb', (c) => c.notNull())
      .addColumn('output', 'jsonb')
      .addColumn('error', 'jsonb')
      .addColumn('started_at', 'timestamptz', (c) => c.notNull())
      .addColumn('ended_at', 'timestamptz')
      .addColumn('duration_ms', 'integer')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      // The idempotency key of a tool call: a replay after a crash finds the row instead of adding one.
      .addUniqueConstraint('step_attempts_run_step_attempt_key', ['run_id', 'step_id', 'attempt'])
      .execute();

    await db.schema
      .createTable('decisions')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('actor_id', 'text', (c) => c.notNull())
      .addColumn('actor_name', 'text')
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('accepted', 'boolean', (c) => c.notNull())
      .addColumn('note', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .execute();
    await db.schema.createIndex('decisions_run_idx').on('decisions').column('run_id').execute();

    await db.schema
      .createTable('llm_usage')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      // Null for calls made outside a run (e.g. classifying a message that starts none).
      .addColumn('run_id', 'text', (c) => c.references('runs.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('input_tokens', 'integer', (c) => c.notNull())
      .addColumn('output_tokens', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .execute();
    await db.schema.createIndex('llm_usage_run_idx').on('llm_usage').column('run_id').execute();

    await db.schema
      .createTable('run_events')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', 'jsonb', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .execute();
    // Replays read one run's events in id order.
    await db.schema.createIndex('run_events_run_idx').on('run_events').columns(['run_id', 'id']).execute();
  },

  async down(db: AnyDb) {
    for (const table of ['run_events', 'llm_usage', 'decisions', 'step_attempts', 'plan_revisions', 'runs']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
