/** Queries for steering: active runs of a conversation, approved risk, breakpoints, preferences, interventions. */
import { sql, type Kysely } from 'kysely';
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

/** Counts `intervened` events of this person per tool, for the tools asked about. */
export async function countInterventions(db: Db, actor: Actor, tools: string[]): Promise<Record<string, number>> {
  if (tools.length === 0) return {};
  const rows = await sql<{ tool: string; n: number | string }>`
    select t.tool, count(*) as n
    from run_events e, jsonb_array_elements_text(e.payload -> 'tools') as t(tool)
    where e.type = 'intervened' and e.payload ->> 'actorId' = ${actor.id} and e.payload ->> 'channel' = ${actor.channel}
      and t.tool = any(${tools})
    group by t.tool`.execute(db);
  return Object.fromEntries(rows.rows.map((r) => [r.tool, Number(r.n)]));
}
