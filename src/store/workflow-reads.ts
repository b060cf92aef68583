/**
 * The scheduler's reads: schedules due with what a fire needs to decide (its workflow, the current version, whether
 * an earlier fire's run is still active) in one query, and fires with their runs' status.
 */
import type { Kysely } from 'kysely';
import { ACTIVE_STATUSES } from '../engine/types.ts';
import type { DueSchedule, StoredFire } from '../engine/workflows.ts';
import type { DatabaseSchema } from './schema.ts';
import { fromFireRow, fromScheduleRow, fromVersionRow, fromWorkflowRow } from './workflow-rows.ts';

type Db = Kysely<DatabaseSchema>;

const DAY_MS = 24 * 60 * 60_000;

/** Schedules not paused or deleted, of workflows not deleted, due at `now`: earliest first, at most `limit`. */
export async function dueSchedules(db: Db, now: Date, limit: number): Promise<DueSchedule[]> {
  const rows = await db
    .selectFrom('workflow_schedules as s')
    .innerJoin('workflows as w', 'w.id', 's.workflow_id')
    .innerJoin('workflow_versions as v', (join) =>
      join.onRef('v.workflow_id', '=', 'w.id').onRef('v.version', '=', 'w.version'),
    )
    .selectAll('s')
    .select([
      'w.name as w_name',
      'w.owner_id as w_owner_id',
      'w.owner_name as w_owner_name',
      'w.owner_channel as w_owner_channel',
      'w.conversation_channel as w_conversation_channel',
      'w.conversation_key as w_conversation_key',
      'w.review as w_review',
      'w.version as w_version',
      'w.created_at as w_created_at',
      'v.plan as v_plan',
      'v.pins as v_pins',
      'v.risk as v_risk',
      'v.note as v_note',
      'v.source_run_id as v_source_run_id',
      'v.created_by_id as v_created_by_id',
      'v.created_by_name as v_created_by_name',
      'v.created_by_channel as v_created_by_channel',
      'v.created_at as v_created_at',
    ])
    .select((eb) =>
      // From the few active runs to their fires (by the run_id index), not through every fire the workflow had.
      eb
        .exists(
          eb
            .selectFrom('runs as r')
            .innerJoin('workflow_fires as f', 'f.run_id', 'r.id')
            .select('r.id')
            .whereRef('f.workflow_id', '=', 's.workflow_id')
            .where('r.status', 'in', ACTIVE_STATUSES),
        )
        .as('active'),
    )
    .select((eb) =>
      // The workflow's fires that started a run in the 24 hours before now (by the workflow_id, started_at index).
      eb
        .selectFrom('workflow_fires as f')
        .select((f) => f.fn.countAll().as('n'))
        .whereRef('f.workflow_id', '=', 's.workflow_id')
        .where('f.run_id', 'is not', null)
        .where('f.started_at', '>', new Date(now.getTime() - DAY_MS))
        .as('fires_today'),
    )
    .where('s.paused', '=', false)
    .where('s.deleted_at', 'is', null)
    .where('s.next_fire_at', '<=', now)
    .where('w.deleted_at', 'is', null)
    .orderBy('s.next_fire_at')
    .orderBy('s.id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    schedule: fromScheduleRow(r),
    workflow: fromWorkflowRow({
      id: r.workflow_id,
      name: r.w_name,
      owner_id: r.w_owner_id,
      owner_name: r.w_owner_name,
      owner_channel: r.w_owner_channel,
      conversation_channel: r.w_conversation_channel,
      conversation_key: r.w_conversation_key,
      review: r.w_review,
      version: r.w_version,
      created_at: r.w_created_at,
    }),
    version: fromVersionRow({
      workflow_id: r.workflow_id,
      version: r.w_version,
      plan: r.v_plan,
      pins: r.v_pins,
      risk: r.v_risk,
      note: r.v_note,
      source_run_id: r.v_source_run_id,
      created_by_id: r.v_created_by_id,
      created_by_name: r.v_created_by_name,
      created_by_channel: r.v_created_by_channel,
      created_at: r.v_created_at,
    }),
    active: Boolean(r.active),
    firesToday: Number(r.fires_today ?? 0),
  }));
}

function selectFires(db: Db) {
  return db
    .selectFrom('workflow_fires as f')
    .leftJoin('runs as r', 'r.id', 'f.run_id')
    .selectAll('f')
    .select('r.status as run_status');
}

/** The fire that created run `runId`, if one did. */
export async function fireOfRun(db: Db, runId: string): Promise<StoredFire | null> {
  const row = await selectFires(db).where('f.run_id', '=', runId).executeTakeFirst();
  return row ? fromFireRow(row) : null;
}

/** A workflow's latest `limit` fires, the latest started first. */
export async function listFires(db: Db, workflowId: string, limit: number): Promise<StoredFire[]> {
  const rows = await selectFires(db)
    .where('f.workflow_id', '=', workflowId)
    .orderBy('f.started_at', 'desc')
    .orderBy('f.scheduled_at', 'desc')
    .orderBy('f.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(fromFireRow);
}
