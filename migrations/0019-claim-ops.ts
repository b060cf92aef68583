/**
 * A takeover claim carries an operation id, so a claim repeated after its answer was lost finds the runs it took
 * (before, the repeat found none: they were held by then, and lay undriven until their new lease lapsed).
 */
import type { Kysely, Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds `runs.claim_op`: the operation id of the claim that gave the run its current lease. */
export const claimOps: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('runs').addColumn('claim_op', 'text').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('runs').dropColumn('claim_op').execute();
  },
};
