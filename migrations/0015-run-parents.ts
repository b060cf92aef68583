/**
 * The run a delegated run was handed out by (its parent, through a `delegate` step), on the run itself: cards say
 * whose step a child run is, and replies in a thread go to the run the person started rather than to its children.
 */
import type { Kysely, Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds `runs.parent_run_id` (null for every run a person started, and for all runs from before). */
export const runParents: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('runs')
      .addColumn('parent_run_id', 'text', (c) => c.references('runs.id').onDelete('set null'))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('runs').dropColumn('parent_run_id').execute();
  },
};
