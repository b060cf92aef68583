/**
 * Model usage carries what each call cost, in whole micro-dollars (millionths of a US dollar) so sums are exact.
 * Null means the cost is unknown (the model has no price in the catalog, or the row is from before this migration),
 * never zero: a run's total is unknown when any of its calls is.
 */
import type { Kysely, Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds `llm_usage.cost_micro_usd`. */
export const modelCost: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('llm_usage').addColumn('cost_micro_usd', 'bigint').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('llm_usage').dropColumn('cost_micro_usd').execute();
  },
};
