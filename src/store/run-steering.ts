/** Queries for steering: active runs of a conversation, approved risk, breakpoints, preferences, interventions. */
import { sql, type Kysely } from 'kysely';
import type { InterventionSignal } from '../engine/plan/breakpoint-suggestions.ts';
import type { Breakpoint } from '../engine/plan/breakpoints.ts';
import type { Actor, ReviewPreference, RiskLevel } from '../engine/types.ts';
import { toJsonText } from './json-text.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

export async function setApprovedRisk(db: Db, runId: string, risk: RiskLevel, at: Date): Promise<void> {
  await db.updateTable('runs').set({ approved_risk: risk, updated_at: at }).where('id', '=', runId).execute();
}

export async function setBreakpoints(
  db: Db,
  runId: string,
  breakpoints: readonly Breakpoint[],
  at: Date,
): Promise<void> {
  await db
    .updateTable('runs')
    .set({ breakpoints: toJsonText(breakpoints), updated_at: at })
    .where('id', '=', runId)
    .execute();
}

export async function getReviewPreference(db: Db, actor: Actor): Promise<ReviewPreference | null> {
  const row = await db
    .selectFrom('user_preferences')
    .select('review')
    .where('channel', '=', actor.channel)
    .where('user_id', '=', actor.id)
    .executeTakeFirst();
  return (row?.review as ReviewPreference | undefined) ?? null;
}

export async function setReviewPreference(db: Db, actor: Actor, review: ReviewPreference, at: Date): Promise<void> {
  await db
    .insertInto('user_preferences')
    .values({ channel: actor.channel, user_id: actor.id, review, created_at: at, updated_at: at })
    .onConflict((oc) => oc.columns(['channel', 'user_id']).doUpdateSet({ review, updated_at: at }))
    .execute();
}

/** Whether this person's review cards offer suggested breakpoints (on unless they turned them off). */
export async function getBreakpointSuggestions(db: Db, actor: Actor): Promise<boolean> {
  const row = await db
    .selectFrom('user_preferences')
    .select('breakpoint_suggestions')
    .where('channel', '=', actor.channel)
    .where('user_id', '=', actor.id)
    .executeTakeFirst();
  return row?.breakpoint_suggestions ?? true;
}

export async function setBreakpointSuggestions(db: Db, actor: Actor, on: boolean, at: Date): Promise<void> {
  await db
    .insertInto('user_preferences')
    .values({ channel: actor.channel, user_id: actor.id, breakpoint_suggestions: on, created_at: at, updated_at: at })
    .onConflict((oc) => oc.columns(['channel', 'user_id']).doUpdateSet({ breakpoint_suggestions: on, updated_at: at }))
    .execute();
}

/**
 * Per tool asked about: this person's latest `intervened` event on it since `since`, and whether a run of theirs that
 * used the tool (pinned it) completed after that, other than the run they intervened on.
 */
export async function interventionSignals(
  db: Db,
  actor: Actor,
  tools: string[],
  since: Date,
): Promise<Record<string, InterventionSignal>> {
  if (tools.length === 0) return {};
  const rows = await sql<{ tool: string; action: string; at: Date | string; completed_since: boolean }>`
    select distinct on (t.tool) t.tool, e.payload ->> 'action' as action, e.created_at as at,
      exists (
        select 1 from runs r join tool_pins p on p.run_id = r.id
        where p.tool = t.tool and r.status = 'completed' and r.id <> e.run_id
          and r.requester_id = ${actor.id} and r.channel = ${actor.channel} and r.updated_at > e.created_at
      ) as completed_since
    from run_events e, jsonb_array_elements_text(e.payload -> 'tools') as t(tool)
    where e.type = 'intervened' and e.payload ->> 'actorId' = ${actor.id} and e.payload ->> 'channel' = ${actor.channel}
      and t.tool = any(${tools}) and e.created_at >= ${since}
    order by t.tool, e.created_at desc, e.id desc`.execute(db);
  return Object.fromEntries(
    rows.rows.map((r) => [r.tool, { action: r.action, at: new Date(r.at), completedSince: r.completed_since }]),
  );
}
