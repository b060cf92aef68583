/**
 * Maps workflow rows to the engine's workflow shapes. As with runs, stored values are trusted and cast, not
 * re-validated: a plan saved under an older schema must still load.
 */
import type { Selectable } from 'kysely';
import type { Plan } from '../engine/plan/plan-schema.ts';
import type { PinnedTool } from '../engine/ports.ts';
import type { Actor, RiskLevel, RunStatus } from '../engine/types.ts';
import type {
  CatchUp,
  FireOutcome,
  FireReview,
  Overlap,
  StoredFire,
  StoredSchedule,
  StoredWorkflow,
  WorkflowVersion,
} from '../engine/workflows.ts';
import type { WorkflowFiresTable, WorkflowSchedulesTable, WorkflowsTable, WorkflowVersionsTable } from './schema.ts';

/** The columns of a workflows row that make a `StoredWorkflow`. */
export type WorkflowRow = Omit<Selectable<WorkflowsTable>, 'updated_at' | 'deleted_at'>;
/** The columns of a workflow_versions row that make a `WorkflowVersion`. */
export type VersionRow = Omit<Selectable<WorkflowVersionsTable>, 'id' | 'op'>;
/** A workflow_fires row with its run's status (null without a run). */
export type FireRow = Selectable<WorkflowFiresTable> & { run_status: string | null };

/** An actor from its stored columns; a missing name is left out, as the engine's actors have it optional. */
export function toActor(id: string, name: string | null, channel: string): Actor {
  return { id, channel, ...(name === null ? {} : { name }) };
}

/** Rebuilds a workflow from its row. */
export function fromWorkflowRow(row: WorkflowRow): StoredWorkflow {
  return {
    id: row.id,
    name: row.name,
    owner: toActor(row.owner_id, row.owner_name, row.owner_channel),
    conversation: { channel: row.conversation_channel, key: row.conversation_key },
    review: row.review as FireReview,
    version: row.version,
    createdAt: row.created_at,
  };
}

/** Rebuilds a workflow version from its row. */
export function fromVersionRow(row: VersionRow): WorkflowVersion {
  return {
    workflowId: row.workflow_id,
    version: row.version,
    plan: row.plan as Plan,
    pins: row.pins as PinnedTool[],
    risk: row.risk as RiskLevel,
    note: row.note,
    sourceRunId: row.source_run_id,
    createdBy: toActor(row.created_by_id, row.created_by_name, row.created_by_channel),
    createdAt: row.created_at,
  };
}

/** Rebuilds a schedule from its row. */
export function fromScheduleRow(row: Selectable<WorkflowSchedulesTable>): StoredSchedule {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    cron: row.cron,
    timeZone: row.time_zone,
    catchUp: row.catch_up as CatchUp,
    overlap: row.overlap as Overlap,
    paused: row.paused,
    nextFireAt: row.next_fire_at,
    createdAt: row.created_at,
  };
}

/** Rebuilds a fire from its row and its run's status. */
export function fromFireRow(row: FireRow): StoredFire {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    scheduleId: row.schedule_id,
    version: row.version,
    scheduledAt: row.scheduled_at,
    startedAt: row.started_at,
    outcome: row.outcome as FireOutcome,
    note: row.note,
    runId: row.run_id,
    runStatus: (row.run_status ?? null) as RunStatus | null,
  };
}
