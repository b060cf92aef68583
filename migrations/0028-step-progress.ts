/**
 * The latest progress a server reported on a running step's call, kept on its attempt so the dashboard shows it
 * (written at the card's pace, at most once a second per call, and never after the attempt ended).
 */
import type { Kysely, Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds step_attempts.progress (`{ progress, total?, message? }`) and progress_at. */
export const stepProgress: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('step_attempts')
      .addColumn('progress', 'jsonb')
      .addColumn('progress_at', 'timestamptz')
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('step_attempts').dropColumn('progress').dropColumn('progress_at').execute();
  },
};
