/**
 * Read-only queries over a run's history (revisions, decisions, events, model usage), for reports and audits.
 * `PgRunStore` exposes them as methods; they live here to keep the port's file about state changes.
 */
import { sql, type Kysely } from 'kysely';
import type { Plan } from '../engine/plan/plan-schema.ts';
import type { LlmUsageTotals, ModelRole, RunEvent, StoredDecision, StoredRevision } from '../engine/ports.ts';
import type { DecisionAction } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';

/** One entry of a run's event log (the engine's `RunEvent`). */
export type StoredEvent = RunEvent;

/** Every plan revision of a run, oldest first. */
export async function listRevisions(db: Kysely<DatabaseSchema>, runId: string): Promise<StoredRevision[]> {
  const rows = await db
    .selectFrom('plan_revisions')
    .select(['revision', 'plan', 'reason', 'created_at'])
    .where('run_id', '=', runId)
    .orderBy('revision')
    .execute();
  return rows.map((r) => ({ revision: r.revision, plan: r.plan as Plan, reason: r.reason, createdAt: r.created_at }));
}

/** Every decision on a run, in the order recorded. */
export async function listDecisions(db: Kysely<DatabaseSchema>, runId: string): Promise<StoredDecision[]> {
  const rows = await db.selectFrom('decisions').selectAll().where('run_id', '=', runId).orderBy('id').execute();
  return rows.map((r) => ({
    revision: r.revision,
    actor: { id: r.actor_id, channel: r.channel, ...(r.actor_name === null ? {} : { name: r.actor_name }) },
    action: r.action as DecisionAction,
    accepted: r.accepted,
    note: r.note,
    createdAt: r.created_at,
  }));
}

/** A run's event log in append order; with `types`, only the events of those types. */
export async function listEvents(
  db: Kysely<DatabaseSchema>,
  runId: string,
  types?: readonly string[],
): Promise<StoredEvent[]> {
  let query = db.selectFrom('run_events').selectAll().where('run_id', '=', runId);
  if (types) query = types.length > 0 ? query.where('type', 'in', types) : query.where(sql<boolean>`false`);
  const rows = await query.orderBy('id').execute();
  // bigserial ids arrive as strings from pg and numbers from PGlite.
  return rows.map((r) => ({ id: Number(r.id), type: r.type, payload: r.payload, createdAt: r.created_at }));
}

/** Calls, tokens and cost a run used, in total and per model role; the cost is null when any call had no price. */
export async function llmUsageForRun(db: Kysely<DatabaseSchema>, runId: string): Promise<LlmUsageTotals> {
  const rows = await db
    .selectFrom('llm_usage')
    .select((eb) => [
      'role',
      eb.fn.countAll().as('calls'),
      eb.fn.sum('input_tokens').as('input_tokens'),
      eb.fn.sum('cached_input_tokens').as('cached_input_tokens'),
      eb.fn.sum('output_tokens').as('output_tokens'),
      eb.fn.count('cost_micro_usd').as('priced_calls'),
      eb.fn.sum('cost_micro_usd').as('cost_micro_usd'),
    ])
    .where('run_id', '=', runId)
    .groupBy('role')
    .execute();
  const totals: LlmUsageTotals = {
    calls: 0,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    costMicroUsd: 0,
    byRole: {},
  };
  for (const row of rows) {
    // count and sum are bigint/numeric: strings from pg, numbers or bigints from PGlite.
    const calls = Number(row.calls);
    const usage = {
      calls,
      inputTokens: Number(row.input_tokens),
      cachedInputTokens: Number(row.cached_input_tokens),
      outputTokens: Number(row.output_tokens),
      costMicroUsd: Number(row.priced_calls) === calls ? Number(row.cost_micro_usd ?? 0) : null,
    };
    totals.byRole[row.role as ModelRole] = usage;
    totals.calls += usage.calls;
    totals.inputTokens += usage.inputTokens;
    totals.cachedInputTokens += usage.cachedInputTokens;
    totals.outputTokens += usage.outputTokens;
    totals.costMicroUsd =
      totals.costMicroUsd === null || usage.costMicroUsd === null ? null : totals.costMicroUsd + usage.costMicroUsd;
  }
  return totals;
}

export type { LlmUsageCount, LlmUsageTotals } from '../engine/ports.ts';
export type { StoredDecision, StoredRevision };
