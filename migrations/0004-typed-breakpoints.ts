/**
 * Breakpoints become objects: `{"stepId": "s2", "when": "after"}` instead of the strings `s2` (after the step)
 * and `before:s2` (before it), so no code outside this migration parses a prefix.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Rewrites every stored breakpoint list in place. */
export const typedBreakpoints: Migration = {
  async up(db: AnyDb) {
    await sql`
      UPDATE runs SET breakpoints = (
        SELECT coalesce(jsonb_agg(
          CASE WHEN entry LIKE 'before:%'
            THEN jsonb_build_object('stepId', substr(entry, 8), 'when', 'before')
            ELSE jsonb_build_object('stepId', entry, 'when', 'after')
          END ORDER BY position), '[]'::jsonb)
        FROM jsonb_array_elements_text(runs.breakpoints) WITH ORDINALITY AS e(entry, position)
      )
      WHERE jsonb_typeof(breakpoints) = 'array' AND breakpoints <> '[]'::jsonb`.execute(db);
  },
  async down(db: AnyDb) {
    await sql`
      UPDATE runs SET breakpoints = (
        SELECT coalesce(jsonb_agg(
          CASE WHEN e->>'when' = 'before' THEN to_jsonb('before:' || (e->>'stepId')) ELSE e->'stepId' END
          ORDER BY position), '[]'::jsonb)
        FROM jsonb_array_elements(runs.breakpoints) WITH ORDINALITY AS x(e, position)
      )
      WHERE jsonb_typeof(breakpoints) = 'array' AND breakpoints <> '[]'::jsonb`.execute(db);
  },
};
