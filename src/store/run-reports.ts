/**
 * Queries for a run's report: the note that a report is owed (set before the run ends, cleared once it was sent), and
 * the report itself, stored once. `PgRunStore` exposes them as methods. Every write here is safe to repeat.
 */
import { sql, type Kysely } from 'kysely';
import { StewardError } from '../engine/errors.ts';
import type { RunStatus } from '../engine/types.ts';
import { toJsonText, toStorableText } from './json-text.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/**
 * Notes that the run owes its report (or, with `due` false, that it was sent: then the run needs no owner any more,
 * and its lease is let go in the same write).
 */
export async function setReportDue(db: Db, runId: string, due: boolean, at: Date): Promise<void> {
  await db
    .updateTable('runs')
    .set({ report_due: due, updated_at: at, ...(due ? {} : { owner: null, lease_expires_at: null }) })
    .where('id', '=', runId)
    .execute();
}

/**
 * Stores the report and its `reported` event in one statement, only while the run has no report; returns the report
 * that stands (this one, or the one stored before, e.g. by this same write repeated after its answer was lost).
 */
export async function storeReport(db: Db, runId: string, report: string, status: RunStatus, at: Date): Promise<string> {
  const text = toStorableText(report);
  const payload = toJsonText({ status });
  const written = await db
    .with('stored', (q) =>
      q
        .updateTable('runs')
        .set({ report: text, updated_at: at })
        .where('id', '=', runId)
        // A report is never rewritten: the first one stored stands.
        .where('report', 'is', null)
        .returning('id'),
    )
    .insertInto('run_events')
    .columns(['run_id', 'type', 'payload', 'created_at'])
    .expression((eb) =>
      eb
        .selectFrom('stored')
        .select((r) => [
          r.ref('stored.id').as('run_id'),
          sql.lit('reported').as('type'),
          sql`${payload}::jsonb`.as('payload'),
          sql`${at}::timestamptz`.as('created_at'),
        ]),
    )
    .returning('run_id')
    .executeTakeFirst();
  if (written !== undefined) return text;
  const row = await db.selectFrom('runs').select('report').where('id', '=', runId).executeTakeFirst();
  if (row?.report == null) throw new StewardError('store_failed', `run ${runId} has no report and none was stored`);
  return row.report;
}
