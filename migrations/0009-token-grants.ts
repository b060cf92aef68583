/**
 * A model call's reservation is one statement that grants the largest output cap the budgets still hold. The
 * ledger keeps what it granted, so a reservation repeated after its answer was lost returns the same cap instead of
 * charging twice.
 */
import type { Kysely, Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds the granted cap, and the budget that lowered it, to `token_operations`. */
export const tokenGrants: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('token_operations')
      .addColumn('granted', 'integer')
      .addColumn('limited_by', 'text')
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('token_operations').dropColumn('granted').dropColumn('limited_by').execute();
  },
};
