/**
 * Claiming fires: one statement per chunk of claims moves each schedule past its fire time only from the time the
 * claimer expected (the race is decided there, under the schedule's row lock), records the fires won, and creates
 * their runs as `createRun` and `saveRevision` would (the `requested` event, revision 0, the lease held by the
 * claimer) plus a `workflowFired` event: in `planning`, or, for a fire its saved approval covers, already `running`
 * with its approved risk, pins and `autoApproved` event, as `transition` would have moved it. A thousand fires due in one minute cost a handful of statements.
 */
import { sql, type Kysely } from 'kysely';
import { estimateJson } from '../engine/run/estimates.ts';
import type { FireClaim, FireRun } from '../engine/workflows.ts';
import { toJsonText, toStorableText } from './json-text.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/** Claims per statement: large enough to make 1,000 claims a few round trips, small enough to keep each one short. */
export const CLAIM_CHUNK = 200;

/** Claims in the order their schedules' rows are locked, so concurrent claimers queue instead of deadlocking. */
export function inLockOrder(claims: readonly FireClaim[]): FireClaim[] {
  const key = (c: FireClaim) => c.scheduleId ?? '';
  return [...claims].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** One claim as a row of the statement's input. */
function toClaimRow(c: FireClaim, n: number) {
  const { fire } = c;
  const run = fire.run;
  return {
    n,
    schedule_id: c.scheduleId,
    expected: c.expectedNext?.toISOString() ?? null,
    next: c.nextFireAt?.toISOString() ?? null,
    fire_id: fire.id,
    workflow_id: fire.workflowId,
    version: fire.version,
    scheduled_at: fire.scheduledAt.toISOString(),
    outcome: fire.outcome,
    note: fire.note,
    run_id: run?.id ?? null,
    channel: run?.conversation.channel ?? null,
    conversation_key: run?.conversation.key ?? null,
    requester_id: run?.requester.id ?? null,
    requester_name: run?.requester.name ?? null,
    request: run === null ? null : toStorableText(run.request),
    plan: run?.plan ?? null,
    requested: run === null ? null : { actor: run.requester.id, channel: run.requester.channel },
    announced: { workflowId: fire.workflowId, version: fire.version, fireId: fire.id, scheduledAt: fire.scheduledAt },
    approved_risk: run?.approved?.risk ?? null,
    pins: run?.approved?.pins ?? null,
    auto: run?.approved ? autoApproved(run.approved, fire.id) : null,
  };
}

/** A started fire's `autoApproved` payload, as `ReviewFlow.offer` writes one: with its estimate when it has one. */
function autoApproved(approved: NonNullable<FireRun['approved']>, fireId: string) {
  const payload = { revision: 0, risk: approved.risk, preference: 'saved', fireId };
  return approved.estimate ? { ...payload, estimate: estimateJson(approved.estimate) } : payload;
}

/**
 * Claims `claims` as `owner` in one statement; returns the ids of the fires won, in claim order. A fire this owner
 * already recorded under the same id (this very claim, repeated after its answer was lost) counts as won and is not
 * written again; a fire whose schedule moved on, or whose (workflow, scheduled time) already has a fire, is lost.
 */
export async function claimChunk(
  db: Db,
  owner: string,
  claims: readonly FireClaim[],
  at: Date,
  leaseMs: number,
): Promise<string[]> {
  const input = toJsonText(claims.map(toClaimRow));
  const lease = Math.max(1, Math.round(leaseMs));
  const { rows } = await sql<{ id: string }>`
    WITH c AS (
      SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS c(n integer, schedule_id text, expected timestamptz,
        next timestamptz, fire_id text, workflow_id text, version integer, scheduled_at timestamptz, outcome text,
        note text, run_id text, channel text, conversation_key text, requester_id text, requester_name text,
        request text, plan jsonb, requested jsonb, announced jsonb, approved_risk text, pins jsonb, auto jsonb)
    ), mine AS (
      SELECT f.id FROM workflow_fires f JOIN c ON c.fire_id = f.id
      WHERE f.claimed_by = ${owner} AND f.workflow_id = c.workflow_id AND f.scheduled_at = c.scheduled_at
    ), locked AS (
      SELECT id FROM workflow_schedules WHERE id IN (SELECT schedule_id FROM c)
      ORDER BY id COLLATE "C" FOR NO KEY UPDATE
    ), moved AS (
      UPDATE workflow_schedules s SET next_fire_at = c.next, updated_at = ${at}
      FROM c
      WHERE s.id = c.schedule_id AND s.id IN (SELECT id FROM locked) AND s.next_fire_at = c.expected
        AND NOT s.paused AND s.deleted_at IS NULL
      RETURNING c.fire_id
    ), won AS (
      SELECT c.* FROM c WHERE c.schedule_id IS NULL OR c.fire_id IN (SELECT fire_id FROM moved)
    ), fired AS (
      -- A fire id already stored, or a (workflow, scheduled time) already fired, is not written twice.
      INSERT INTO workflow_fires (id, workflow_id, schedule_id, version, scheduled_at, started_at, outcome, note,
        run_id, claimed_by, created_at)
      SELECT fire_id, workflow_id, schedule_id, version, scheduled_at, ${at}, outcome, note, run_id, ${owner}, ${at}
      FROM won
      ON CONFLICT DO NOTHING
      RETURNING id
    ), started AS (
      SELECT won.*, w.name FROM won JOIN fired ON fired.id = won.fire_id JOIN workflows w ON w.id = won.workflow_id
      WHERE won.run_id IS NOT NULL
    ), created AS (
      -- A fire its saved approval covers starts here: running, with its approved risk (and its pins, below).
      INSERT INTO runs (id, status, approved_risk, channel, conversation_key, requester_id, requester_name, request,
        revision, owner, lease_expires_at, created_at, updated_at)
      SELECT run_id, CASE WHEN approved_risk IS NULL THEN 'planning' ELSE 'running' END, approved_risk, channel,
        conversation_key, requester_id, requester_name, request, 0,
        ${owner}, now() + ${lease} * interval '1 millisecond', ${at}, ${at}
      FROM started
    ), pinned AS (
      INSERT INTO tool_pins (run_id, tool, fingerprint, definition, created_at)
      SELECT started.run_id, p.tool, p.fingerprint, p.definition, ${at}
      FROM started, jsonb_to_recordset(started.pins) AS p(tool text, fingerprint text, definition jsonb)
      WHERE started.pins IS NOT NULL
    ), revised AS (
      INSERT INTO plan_revisions (run_id, revision, plan, reason, created_at)
      SELECT run_id, 0, plan, 'workflow ' || name || ' v' || version, ${at} FROM started
    ), noted AS (
      -- Ids in this order keep each run's log as createRun starts it, with its request first.
      INSERT INTO run_events (run_id, type, payload, created_at)
      SELECT e.run_id, e.type, e.payload, ${at} FROM (
        SELECT n, 1 AS k, run_id, 'requested' AS type, requested AS payload FROM started
        UNION ALL
        SELECT n, 2, run_id, 'workflowFired', announced FROM started
        UNION ALL
        SELECT n, 3, run_id, 'autoApproved', auto FROM started WHERE auto IS NOT NULL
      ) e ORDER BY e.n, e.k
    )
    SELECT c.fire_id AS id FROM c
    WHERE c.fire_id IN (SELECT id FROM fired) OR c.fire_id IN (SELECT id FROM mine)
    ORDER BY c.n`.execute(db);
  return rows.map((r) => r.id);
}
