/**
 * Queries for a run's report: the note that a report is owed (set before the run ends, cleared once it was sent), and
 * the report itself, stored once. `PgRunStore` exposes them as methods. Every write here is safe to repeat.
 */
import { sql, type Kysely } from 'kysely';
import { StewardError } from '../engine/errors.ts';
import type { TokenSettlement } from '../engine/ports.ts';
import type { RunStatus } from '../engine/types.ts';
import { toJsonText, toStorableText } from './json-text.ts';
import { settledCounters, settlement } from './run-safety.ts';
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
 * that stands (this one, or the one stored before, e.g. by this same write repeated after its answer was lost), and
 * who holds the run under which fence, read by the same statement.
 */
export async function storeReport(
  db: Db,
  runId: string,
  report: string,
  status: RunStatus,
  at: Date,
): Promise<{ report: string; owner: string | null; fence: number }> {
  const text = toStorableText(report);
  const payload = toJsonText({ status });
  const { rows } = await sql<{ stored: boolean; report: string | null; owner: string | null; fence: number }>`
    WITH stored AS (
      -- A report is never rewritten: the first one stored stands.
      UPDATE runs SET report = ${text}, updated_at = ${at} WHERE id = ${runId} AND report IS NULL
      RETURNING id
    ), announced AS (
      INSERT INTO run_events (run_id, type, payload, created_at)
      SELECT id, 'reported', ${payload}::jsonb, ${at}::timestamptz FROM stored
    )
    SELECT EXISTS (SELECT 1 FROM stored) AS stored, report, owner, fence FROM runs WHERE id = ${runId}`.execute(db);
  let row = rows[0];
  // Another writer stored its report first: this UPDATE waited for its commit and found the report set, but the
  // statement's own snapshot (taken before that commit) still reads none. A new statement sees the one that stands.
  if (row && !row.stored && row.report == null) {
    const again = await sql<{ report: string | null; owner: string | null; fence: number }>`
      SELECT report, owner, fence FROM runs WHERE id = ${runId}`.execute(db);
    row = again.rows[0] && { ...again.rows[0], stored: false };
  }
  const standing = row?.stored ? text : row?.report;
  if (!row || standing == null)
    throw new StewardError('store_failed', `run ${runId} has no report and none was stored`);
  return { report: standing, owner: row.owner, fence: row.fence };
}

/**
 * `storeReport` and the settlement of the model call that wrote the report (`settle`, once per `op`) in one
 * statement. The run's row is written once: its counters move by the settlement whatever becomes of the report, and
 * the report is set only while it has none. The report returned is the row's own after the write, so one a concurrent
 * writer committed first is the one returned.
 */
export async function storeReportSettling(
  db: Db,
  runId: string,
  report: string,
  status: RunStatus,
  at: Date,
  op: string,
  settle: TokenSettlement,
): Promise<{ report: string; owner: string | null; fence: number }> {
  const text = toStorableText(report);
  const payload = toJsonText({ status });
  const run = sql`
      UPDATE runs SET ${settledCounters(settle)},
        -- A report is never rewritten: the first one stored stands.
        report = coalesce(runs.report, ${text}),
        updated_at = CASE WHEN runs.report IS NULL THEN ${at}::timestamptz ELSE runs.updated_at END
      WHERE id = ${runId}
      RETURNING id, report, owner, fence`;
  const { rows } = await sql<{ stored: boolean; report: string | null; owner: string | null; fence: number }>`
    WITH before AS (
      SELECT report IS NULL AS open FROM runs WHERE id = ${runId}
    ), ${settlement(op, settle, run)}, announced AS (
      INSERT INTO run_events (run_id, type, payload, created_at)
      SELECT id, 'reported', ${payload}::jsonb, ${at}::timestamptz FROM run
      WHERE (SELECT open FROM before) AND run.report = ${text}
    )
    SELECT coalesce((SELECT open FROM before), false) AND run.report = ${text} AS stored, report, owner, fence
    FROM run`.execute(db);
  const row = rows[0];
  if (!row || row.report == null)
    throw new StewardError('store_failed', `run ${runId} has no report and none was stored`);
  return { report: row.report, owner: row.owner, fence: row.fence };
}
