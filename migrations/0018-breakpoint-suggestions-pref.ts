/**
 * Each person may turn suggested breakpoints off (`suggestions off`): a column of their preferences. A person who
 * only turned suggestions off has no review preference, so `review` may now be empty (read as the default).
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds `user_preferences.breakpoint_suggestions` (on for everyone so far) and lets `review` be null. */
export const breakpointSuggestionsPref: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('user_preferences')
      .addColumn('breakpoint_suggestions', 'boolean', (c) => c.notNull().defaultTo(true))
      .execute();
    await db.schema
      .alterTable('user_preferences')
      .alterColumn('review', (c) => c.dropNotNull())
      .execute();
  },
  async down(db: AnyDb) {
    await sql`delete from user_preferences where review is null`.execute(db);
    await db.schema
      .alterTable('user_preferences')
      .alterColumn('review', (c) => c.setNotNull())
      .execute();
    await db.schema.alterTable('user_preferences').dropColumn('breakpoint_suggestions').execute();
  },
};
