/**
 * Maps database rows to the engine's stored shapes. The database is trusted to hold what the store wrote,
 * so values are cast, not re-validated: a plan stored under an older schema must still load for recovery.
 */
import type { Selectable } from 'kysely';
import type { Breakpoint } from '../engine/plan/breakpoints.ts';
import type { Plan } from '../engine/plan/plan-schema.ts';
import type { RunRoute, StoredRun, StoredStepAttempt, ToolProgress } from '../engine/ports.ts';
import type { ReviewPreference, RiskLevel, RunStatus, StepError, StepStatus } from '../engine/types.ts';
import type { RunsTable, StepAttemptsTable } from './schema.ts';

/** A runs row joined with the plan of its current revision (null before the first plan is saved). */
export type RunRow = Selectable<RunsTable> & { plan: unknown };

/** A run's row read with its requester's review preference (`requester_review`), as the flows want it. */
export function fromRunRowWithPreference(row: RunRow & { requester_review?: string | null }): StoredRun {
  return { ...fromRunRow(row), reviewPreference: (row.requester_review ?? null) as ReviewPreference | null };
}

/** Rebuilds a stored run from its row. */
export function fromRunRow(row: RunRow): StoredRun {
  return {
    id: row.id,
    status: row.status as RunStatus,
    conversation: { channel: row.channel, key: row.conversation_key },
    // `channel` names the platform adapter, and a requester asks on the platform the run talks on.
    requester: {
      id: row.requester_id,
      channel: row.channel,
      ...(row.requester_name === null ? {} : { name: row.requester_name }),
    },
    request: row.request,
    revision: row.revision,
    amendmentRounds: row.amendment_rounds,
    plan: (row.plan ?? null) as Plan | null,
    approvedRisk: (row.approved_risk ?? null) as RiskLevel | null,
    breakpoints: Array.isArray(row.breakpoints) ? (row.breakpoints as Breakpoint[]) : [],
    reviewDueAt: row.review_due_at,
    ...(row.assistant ? { assistant: row.assistant } : {}),
    ...(row.parent_run_id !== null && { parentRunId: row.parent_run_id }),
    ...(row.route !== null && { route: row.route as RunRoute }),
    createdAt: row.created_at,
  };
}

/** Rebuilds a stored step attempt from its row. */
export function fromStepAttemptRow(row: Selectable<StepAttemptsTable>): StoredStepAttempt {
  return {
    stepId: row.step_id,
    attempt: row.attempt,
    revision: row.revision,
    status: row.status as StepStatus,
    args: row.args,
    output: row.output,
    error: row.error as StepError | null,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    // Only where a server reported some: most attempts never hear of progress.
    ...(row.progress !== null && row.progress !== undefined && { progress: row.progress as unknown as ToolProgress }),
  };
}
