/**
 * Step attempts in one statement: the ends of some attempts and the starts of others, each with its event, under
 * one check of the run's lease. So a step's end and the starts of the steps that waited for it commit together, and
 * a run of three steps costs its store one round trip per wave instead of one per start and one per end.
 */
import { sql, type Kysely } from 'kysely';
import { StewardError } from '../engine/errors.ts';
import type { StepAttemptWrite, StepsRecorded } from '../engine/ports.ts';
import { toJsonText, toStorableText } from './json-text.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

interface WrittenRow {
  leased: number;
  held: boolean;
  revision_saved: boolean;
  run_ended: boolean;
  ended: number;
  started: [string, number][];
}

/**
 * Writes `w` (see `RunStore.recordSteps`) as `owner`. A start already stored under the same fence, or an end already
 * stored, is a repeat and changes nothing; a start stored under another fence, an end of an attempt that never
 * started, or a lease lost, throws. With `unlessHeld`, the starts are not written while the run is paused or
 * stopping, or while a Pause or Stop another process queued for it waits to be taken or applied (the ends are): the
 * result says so. With `revision`, the revision the starts belong to is saved first, in the same statement (a round
 * of the quick path and its calls: one round trip). With `endRun`, the run moves to its end in the same statement
 * (from one of `endRun.from`; the report is noted as owed either way), its event after those of the steps.
 */
export async function recordSteps(db: Db, owner: string, w: StepAttemptWrite): Promise<StepsRecorded> {
  const fence = w.fence ?? null;
  const unlessHeld = w.unlessHeld === true;
  const ends = toJsonText(
    w.ended.map((e) => ({
      step_id: e.stepId,
      attempt: e.attempt,
      revision: e.unstarted?.revision ?? 0,
      unstarted: !!e.unstarted,
      status: e.status,
      output: e.output,
      error: e.error,
      at_time: e.at.toISOString(),
      duration_ms: Math.round(e.durationMs),
    })),
  );
  const starts = toJsonText(
    w.started.map((s) => ({
      step_id: s.stepId,
      attempt: s.attempt,
      revision: s.revision,
      args: s.args,
      at_time: s.at.toISOString(),
    })),
  );
  const rev = w.revision;
  const end = w.endRun;
  // One statement writes the run's row once: a revision's move and the run's end never go together.
  if (rev && end) throw new StewardError('internal', 'a step write may save a revision or end the run, not both');
  const revPlan = rev ? toJsonText(rev.plan) : null;
  const { rows } = await sql<WrittenRow>`
    WITH lease AS (
      -- Held: a person's Pause or Stop is stored (or queued for this owner by another process) and no step may start
      -- after it, even one this process decided to start before it heard of it.
      -- A Pause or Stop taken by the holder holds too until it is applied and settled (its stored status takes over
      -- then), or for a minute if its taker died before settling it.
      SELECT id, ${unlessHeld}::boolean AND (status IN ('paused', 'stopping') OR EXISTS (
          SELECT 1 FROM run_commands c
          WHERE c.run_id = runs.id AND c.command->>'action' IN ('pause', 'stop')
            AND (c.taken_op IS NULL OR c.created_at > now() - interval '1 minute')
        )) AS held
      FROM runs
      WHERE id = ${w.runId} AND (${fence}::integer IS NULL OR (owner = ${owner} AND fence = ${fence}::integer))
      FOR SHARE
    ), revision_inserted AS (
      INSERT INTO plan_revisions (run_id, revision, plan, reason, created_at)
      SELECT lease.id, ${rev?.revision ?? null}::integer, ${revPlan}::jsonb, ${rev ? toStorableText(rev.reason) : null},
        ${rev?.at ?? null}::timestamptz
      FROM lease WHERE ${rev !== undefined}
      ON CONFLICT (run_id, revision) DO NOTHING
      RETURNING id
    ), revision_saved AS (
      -- Saved: by this statement, or by this same write before (a repeat after its answer was lost); or none asked.
      SELECT NOT ${rev !== undefined} OR EXISTS (SELECT 1 FROM revision_inserted) OR EXISTS (
          SELECT 1 FROM plan_revisions
          WHERE run_id = ${w.runId} AND revision = ${rev?.revision ?? null}::integer AND plan = ${revPlan}::jsonb
        ) AS saved
    ), revision_moved AS (
      UPDATE runs SET revision = ${rev?.revision ?? null}::integer, updated_at = ${rev?.at ?? null}::timestamptz
      WHERE id = (SELECT id FROM lease) AND ${rev !== undefined} AND (SELECT saved FROM revision_saved)
    ), ends AS (
      SELECT * FROM jsonb_to_recordset(${ends}::jsonb) AS e(step_id text, attempt integer, revision integer,
        unstarted boolean, status text, output jsonb, error jsonb, at_time timestamptz, duration_ms integer)
    ), starts AS (
      SELECT * FROM jsonb_to_recordset(${starts}::jsonb)
        AS s(step_id text, attempt integer, revision integer, args jsonb, at_time timestamptz)
    ), ended AS (
      UPDATE step_attempts a SET status = e.status, output = e.output, error = e.error, ended_at = e.at_time,
        duration_ms = e.duration_ms
      FROM ends e
      WHERE NOT e.unstarted AND a.run_id = ${w.runId} AND a.step_id = e.step_id AND a.attempt = e.attempt
        -- An attempt ends once: a late duplicate (say, "interrupted" after a real result) must not rewrite it.
        AND a.status = 'running' AND EXISTS (SELECT 1 FROM lease)
      RETURNING a.step_id, a.attempt, a.status, a.ended_at
    ), settled AS (
      -- Skipped steps, conditions and steps stopped before they were sent end without a start of their own.
      INSERT INTO step_attempts (run_id, step_id, attempt, revision, status, args, output, error, started_at, ended_at,
        duration_ms, created_at, fence)
      SELECT lease.id, e.step_id, e.attempt, e.revision, e.status, 'null'::jsonb, e.output, e.error, e.at_time,
        e.at_time, e.duration_ms, e.at_time, ${fence}::integer
      FROM lease, ends e WHERE e.unstarted
      ON CONFLICT (run_id, step_id, attempt) DO UPDATE SET status = excluded.status, output = excluded.output,
        error = excluded.error, ended_at = excluded.ended_at, duration_ms = excluded.duration_ms
        -- Under a fence, an attempt another holder started is never ended as this one's.
        WHERE step_attempts.status = 'running'
          AND (${fence}::integer IS NULL OR step_attempts.fence IS NOT DISTINCT FROM excluded.fence)
      RETURNING step_id, attempt, status, ended_at, (xmax = 0) AS inserted
    ), started AS (
      INSERT INTO step_attempts (run_id, step_id, attempt, revision, status, args, started_at, created_at, fence)
      SELECT lease.id, s.step_id, s.attempt, s.revision, 'running', coalesce(s.args, 'null'::jsonb), s.at_time,
        s.at_time, ${fence}::integer
      FROM lease, starts s
      WHERE NOT lease.held AND (SELECT saved FROM revision_saved)
      -- A replay after a crash re-announces the same attempt; the first record stands.
      ON CONFLICT (run_id, step_id, attempt) DO NOTHING
      RETURNING step_id, attempt, started_at
    ), run_ended AS (
      -- The run's end, with these last ends of its steps: the report is noted as owed in the same write.
      UPDATE runs SET status = ${end?.status ?? null}, updated_at = ${end?.at ?? null}::timestamptz, report_due = true
      WHERE id = (SELECT id FROM lease) AND ${end !== undefined} AND status = ANY(${end ? [...end.from] : []}::text[])
      RETURNING id
    ), run_owed AS (
      -- The report is owed even when the move lost its race (or is this write, repeated): whoever ended the run
      -- must still report it.
      UPDATE runs SET report_due = true
      WHERE id = (SELECT id FROM lease) AND ${end !== undefined} AND NOT EXISTS (SELECT 1 FROM run_ended)
    ), announced AS (
      INSERT INTO run_events (run_id, type, payload, created_at)
      SELECT ${w.runId}, t.type, t.payload, t.at_time FROM (
        SELECT 1 AS k, 'stepStarted' AS type, jsonb_build_object('stepId', step_id, 'attempt', attempt) AS payload,
          ended_at AS at_time FROM settled WHERE inserted
        UNION ALL
        SELECT 2, 'stepEnded', jsonb_build_object('stepId', step_id, 'attempt', attempt, 'status', status), ended_at
        FROM ended
        UNION ALL
        SELECT 2, 'stepEnded', jsonb_build_object('stepId', step_id, 'attempt', attempt, 'status', status), ended_at
        FROM settled
        UNION ALL
        SELECT 3, 'stepStarted', jsonb_build_object('stepId', step_id, 'attempt', attempt), started_at FROM started
        UNION ALL
        SELECT 4, ${end?.event?.type ?? null}, ${end?.event ? toJsonText(end.event.payload) : null}::jsonb,
          ${end?.at ?? null}::timestamptz
        FROM run_ended WHERE ${end?.event !== undefined}
      ) t ORDER BY t.k
    )
    SELECT (SELECT count(*) FROM lease)::integer AS leased, coalesce((SELECT held FROM lease), false) AS held,
      (SELECT saved FROM revision_saved) AS revision_saved, EXISTS (SELECT 1 FROM run_ended) AS run_ended,
      ((SELECT count(*) FROM ended) + (SELECT count(*) FROM settled))::integer AS ended,
      (SELECT coalesce(jsonb_agg(jsonb_build_array(step_id, attempt)), '[]'::jsonb) FROM started) AS started
  `.execute(db);
  const row = rows[0];
  if (!row || row.leased === 0) {
    if (fence !== null) throw fencedOut(w.runId);
    throw new StewardError('store_failed', `run ${w.runId} does not exist`);
  }
  // A revision is never overwritten: a second save of it is refused (and its starts with it).
  if (rev && !row.revision_saved) {
    throw new StewardError('store_failed', `revision ${rev.revision} of run ${w.runId} is already stored`);
  }
  if (row.ended < w.ended.length) await checkEnds(db, w, fence);
  const ended = end ? { runEnded: row.run_ended } : {};
  if (row.held) return { startsHeld: true, ...ended };
  if (row.started.length < w.started.length && fence !== null) await checkStarts(db, w, row.started, fence);
  return { startsHeld: false, ...ended };
}

/**
 * The ends not written were repeats or late duplicates, unless their attempt never started, or (for an end that
 * brings its own start) another holder started it.
 */
async function checkEnds(db: Db, w: StepAttemptWrite, fence: number | null): Promise<void> {
  const stored = await attempts(db, w.runId);
  const missing = w.ended.find((e) => !stored.has(key(e.stepId, e.attempt)));
  if (missing) {
    const what = `step ${missing.stepId} attempt ${missing.attempt} of run ${w.runId}`;
    throw new StewardError('store_failed', `${what} never started`);
  }
  const taken = w.ended.find((e) => e.unstarted && fence !== null && stored.get(key(e.stepId, e.attempt)) !== fence);
  if (taken) throw startedElsewhere(w.runId, taken.stepId, taken.attempt);
}

/** The starts not written were repeats of this holder's own, unless another holder started them. */
async function checkStarts(db: Db, w: StepAttemptWrite, written: [string, number][], fence: number): Promise<void> {
  const stored = await attempts(db, w.runId);
  const done = new Set(written.map(([stepId, attempt]) => key(stepId, attempt)));
  for (const s of w.started) {
    if (done.has(key(s.stepId, s.attempt)) || stored.get(key(s.stepId, s.attempt)) === fence) continue;
    throw startedElsewhere(w.runId, s.stepId, s.attempt);
  }
}

/** The run's stored attempts, with the fence each was started under. */
async function attempts(db: Db, runId: string): Promise<Map<string, number | null>> {
  const rows = await db
    .selectFrom('step_attempts')
    .select(['step_id', 'attempt', 'fence'])
    .where('run_id', '=', runId)
    .execute();
  return new Map(rows.map((r) => [key(r.step_id, r.attempt), r.fence]));
}

function key(stepId: string, attempt: number): string {
  return `${stepId}#${attempt}`;
}

function startedElsewhere(runId: string, stepId: string, attempt: number): StewardError {
  return new StewardError(
    'fenced',
    `attempt ${attempt} of step ${stepId} of run ${runId} was started by another process`,
  );
}

/** The error a write gets once another process took the run over. */
export function fencedOut(runId: string): StewardError {
  return new StewardError('fenced', `run ${runId} is now driven by another process; this one let it go`);
}
