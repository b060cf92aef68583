/**
 * Spend caps in money. `spend_totals` holds what model calls reserved and spent per window (a UTC day or month) for
 * the workspace, a channel and a person, in whole micro-dollars; a model call's reservation locks its six rows and
 * is judged against the caps in the same statement that takes its tokens. `runs.place` is the chat channel a run's
 * conversation is in (a Slack channel of a thread, the Discord channel a thread was started in), `runs.spend_micro_usd`
 * what the run's calls took, and `runs.spend_exempt` an approver's approval past the caps. `llm_usage` notes what
 * each call charged (its cost, or its tokens at the default price) and the channel it counted for;
 * `token_operations.spend_micro_usd` what a reservation took, so a repeat returns it unchanged.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Creates `spend_totals` and the columns above. */
export const spendCaps: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('spend_totals')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('starts', 'date', (c) => c.notNull())
      .addColumn('micro_usd', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addUniqueConstraint('spend_totals_window', ['scope', 'key', 'period', 'starts'])
      .execute();
    await db.schema
      .alterTable('runs')
      .addColumn('place', 'text')
      .addColumn('spend_micro_usd', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('spend_exempt', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute();
    await db.schema
      .alterTable('llm_usage')
      .addColumn('charged_micro_usd', 'bigint')
      .addColumn('spend_channel', 'text')
      .execute();
    await db.schema.alterTable('token_operations').addColumn('spend_micro_usd', 'bigint').execute();
    await db.schema.createIndex('llm_usage_created_at_idx').on('llm_usage').column('created_at').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('llm_usage_created_at_idx').execute();
    await db.schema.alterTable('token_operations').dropColumn('spend_micro_usd').execute();
    await db.schema.alterTable('llm_usage').dropColumn('charged_micro_usd').dropColumn('spend_channel').execute();
    await db.schema
      .alterTable('runs')
      .dropColumn('place')
      .dropColumn('spend_micro_usd')
      .dropColumn('spend_exempt')
      .execute();
    await db.schema.dropTable('spend_totals').execute();
  },
};
