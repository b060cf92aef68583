/**
 * The route a run took at the front door: answered by the planner without tools (`answer`), answered by the quick
 * read-only loop (`quick`, also while the loop works), or planned (`plan`, the default: a planned run costs no
 * statement more). Null for runs from before.
 */
import type { Kysely, Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds `runs.route`: null in the rows there are, `plan` for new ones unless set. */
export const runRoutes: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('runs').addColumn('route', 'text').execute();
    await db.schema
      .alterTable('runs')
      .alterColumn('route', (c) => c.setDefault('plan'))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('runs').dropColumn('route').execute();
  },
};
