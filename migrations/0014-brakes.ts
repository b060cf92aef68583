/**
 * Brakes on delegation, kept in the database where no model can talk past them: one row per delegation (its depth,
 * its round, the messages it exchanged), one counter row per person (child runs active now) and per conversation and
 * Assistant (rounds), and one row per trip. Each counter is raised by one conditional statement on its own row.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

const now = sql`now()`;

/** Creates delegations, delegation_quotas, delegation_rounds and brake_trips. */
export const brakes: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('delegations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      // Null when a person addressed the Assistant directly (depth 1).
      .addColumn('parent_run_id', 'text', (c) => c.references('runs.id').onDelete('set null'))
      // No foreign key: the child run is created after its delegation, under this id, by the caller.
      .addColumn('child_run_id', 'text', (c) => c.notNull().unique())
      .addColumn('conversation_channel', 'text', (c) => c.notNull())
      .addColumn('conversation_key', 'text', (c) => c.notNull())
      .addColumn('assistant', 'text', (c) => c.notNull())
      .addColumn('requester_id', 'text', (c) => c.notNull())
      .addColumn('requester_name', 'text')
      .addColumn('requester_channel', 'text', (c) => c.notNull())
      .addColumn('depth', 'integer', (c) => c.notNull())
      // The depth limit of the chain, inherited by children so a deeper spawn can only lower it.
      .addColumn('depth_limit', 'integer', (c) => c.notNull())
      .addColumn('round', 'integer', (c) => c.notNull())
      .addColumn('task', 'text', (c) => c.notNull())
      .addColumn('reply', 'text')
      .addColumn('messages', 'integer', (c) => c.notNull().defaultTo(0))
      // Operation id of the last counted message, so a repeated count finds its own effect.
      .addColumn('message_op', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addColumn('ended_at', 'timestamptz')
      // A second guard behind the rounds counter: two delegations never share a round.
      .addUniqueConstraint('delegations_round_key', ['conversation_channel', 'conversation_key', 'assistant', 'round'])
      .execute();
    await db.schema
      .createIndex('delegations_parent_idx')
      .on('delegations')
      .column('parent_run_id')
      .where(sql.ref('parent_run_id'), 'is not', null)
      .execute();

    // Delegations still holding a slot, for the sweep that frees the slots of children whose end was lost.
    await db.schema
      .createIndex('delegations_open_idx')
      .on('delegations')
      .column('created_at')
      .where(sql.ref('ended_at'), 'is', null)
      .execute();

    // Child runs a person has going now: raised by a spawn, lowered once by the child's end.
    await db.schema
      .createTable('delegation_quotas')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('active', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addUniqueConstraint('delegation_quotas_user_key', ['channel', 'user_id'])
      .execute();

    // Rounds between a conversation and one Assistant: raised by each spawn, never lowered.
    await db.schema
      .createTable('delegation_rounds')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('conversation_channel', 'text', (c) => c.notNull())
      .addColumn('conversation_key', 'text', (c) => c.notNull())
      .addColumn('assistant', 'text', (c) => c.notNull())
      .addColumn('rounds', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addUniqueConstraint('delegation_rounds_key', ['conversation_channel', 'conversation_key', 'assistant'])
      .execute();

    await db.schema
      .createTable('brake_trips')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('brake', 'text', (c) => c.notNull())
      // What was limited: a run (depth), a person (concurrency), a conversation and Assistant (rounds), a delegation.
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('cap', 'integer', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      // Operation id of the refused attempt: a repeat of it finds this refusal instead of tripping again.
      .addColumn('op', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .execute();
    await db.schema.createIndex('brake_trips_created_idx').on('brake_trips').column('created_at').execute();
  },
  async down(db: AnyDb) {
    for (const table of ['brake_trips', 'delegation_rounds', 'delegation_quotas', 'delegations']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
