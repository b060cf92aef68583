/**
 * The brakes' statements. Each counter is raised by one conditional statement on its own row (`INSERT … ON CONFLICT
 * DO UPDATE … WHERE n < cap RETURNING`, or `UPDATE … WHERE n < cap RETURNING`): PostgreSQL locks the row and judges
 * the condition on its latest version, so under READ COMMITTED two processes can never both take the last slot.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import {
  depthLimit,
  type Brake,
  type DelegationLimits,
  type MessageResult,
  type NewDelegation,
  type SpawnResult,
  type Tripped,
} from '../engine/assistant/delegations.ts';
import { TERMINAL_STATUSES } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';

type Trx = Transaction<DatabaseSchema>;

/** A refusal found by a brake, before it is recorded. */
interface Refusal extends Tripped {
  subject: string;
}

// Rolled back to when a brake refuses, so the brakes judged before it give back what they counted.
const SAVEPOINT = sql`SAVEPOINT spawn_brakes`;
const ROLLBACK_TO_SAVEPOINT = sql`ROLLBACK TO SAVEPOINT spawn_brakes`;

/**
 * One spawn in one transaction: a repeat (same id) answers as the first did; otherwise depth, rounds and
 * concurrency are judged in that order (rounds before concurrency: running out of rounds is final and asks for an
 * escalation, a full slot is not), then the delegation is recorded, or the refusal.
 */
export function spawnDelegation(
  db: Kysely<DatabaseSchema>,
  d: NewDelegation,
  limits: DelegationLimits,
  at: Date,
): Promise<SpawnResult> {
  return db.transaction().execute(async (trx) => {
    const repeat = await earlierAnswer(trx, d.id);
    if (repeat) return repeat;

    // The parent's depth never changes once recorded, so reading it is no check-then-write.
    const parent = d.parentRunId
      ? await trx
          .selectFrom('delegations')
          .select(['depth', 'depth_limit', 'depth_raised'])
          .where('child_run_id', '=', d.parentRunId)
          .executeTakeFirst()
      : undefined;
    // An approver's raise on the delegating run's card, else the room of a chain an approver raised above it.
    const raise = d.parentRunId
      ? await trx
          .selectFrom('brake_raises')
          .select('value')
          .where('run_id', '=', d.parentRunId)
          .where('brake', '=', 'depth')
          .executeTakeFirst()
      : undefined;
    const raised = raise?.value ?? (parent?.depth_raised ? parent.depth_limit : null);
    const depth = (parent?.depth ?? 0) + 1;
    const limit = depthLimit(d.requestedDepth, limits.depth, parent?.depth_limit ?? null, raised);
    if (depth > limit) {
      const subject = d.parentRunId ? `run ${d.parentRunId}` : `${d.requester.channel}:${d.requester.id}`;
      return recordTrip(trx, d.id, { ok: false, brake: 'depth', limit, count: depth, subject }, at);
    }

    await SAVEPOINT.execute(trx);
    const refuse = async (r: Refusal) => {
      await ROLLBACK_TO_SAVEPOINT.execute(trx);
      return recordTrip(trx, d.id, r, at);
    };
    const round = await takeRound(trx, d, limits.rounds, at);
    if (typeof round !== 'number') return refuse(round);
    const full = await takeSlot(trx, d, limits.concurrency, at);
    if (full) return refuse(full);
    await insertDelegation(trx, d, { depth, depthLimit: limit, round, raised: limit > limits.depth }, at);
    return { ok: true, delegationId: d.id, childRunId: d.childRunId, depth, depthLimit: limit, round };
  });
}

async function insertDelegation(
  trx: Trx,
  d: NewDelegation,
  place: { depth: number; depthLimit: number; round: number; raised: boolean },
  at: Date,
): Promise<void> {
  await trx
    .insertInto('delegations')
    .values({
      id: d.id,
      parent_run_id: d.parentRunId,
      child_run_id: d.childRunId,
      conversation_channel: d.conversation.channel,
      conversation_key: d.conversation.key,
      assistant: d.assistant,
      requester_id: d.requester.id,
      requester_name: d.requester.name ?? null,
      requester_channel: d.requester.channel,
      depth: place.depth,
      depth_limit: place.depthLimit,
      depth_raised: place.raised,
      round: place.round,
      task: d.task,
      created_at: at,
    })
    .execute();
}

/** The answer an earlier try of this spawn committed (its answer lost on the way back), if any. */
async function earlierAnswer(trx: Trx, id: string): Promise<SpawnResult | null> {
  const done = await trx
    .selectFrom('delegations')
    .select(['child_run_id', 'depth', 'depth_limit', 'round'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (done)
    return {
      ok: true,
      delegationId: id,
      childRunId: done.child_run_id,
      depth: done.depth,
      depthLimit: done.depth_limit,
      round: done.round,
    };
  return tripOf(trx, id);
}

async function tripOf(trx: Trx, op: string): Promise<Tripped | null> {
  const trip = await trx
    .selectFrom('brake_trips')
    .select(['brake', 'cap', 'count'])
    .where('op', '=', op)
    .executeTakeFirst();
  return trip ? { ok: false, brake: trip.brake as Brake, limit: trip.cap, count: trip.count } : null;
}

/** Takes the next round between the conversation and the Assistant: its number, or the refusal. */
async function takeRound(trx: Trx, d: NewDelegation, cap: number, at: Date): Promise<number | Refusal> {
  const key = {
    conversation_channel: d.conversation.channel,
    conversation_key: d.conversation.key,
    assistant: d.assistant,
  };
  const taken =
    cap < 1
      ? undefined
      : await trx
          .insertInto('delegation_rounds')
          .values({ ...key, rounds: 1, created_at: at, updated_at: at })
          .onConflict((oc) =>
            oc
              .columns(['conversation_channel', 'conversation_key', 'assistant'])
              .doUpdateSet((eb) => ({ rounds: eb('delegation_rounds.rounds', '+', 1), updated_at: at }))
              .where('delegation_rounds.rounds', '<', cap),
          )
          .returning('delegation_rounds.rounds')
          .executeTakeFirst();
  if (taken) return taken.rounds;
  const found = await trx
    .selectFrom('delegation_rounds')
    .select('rounds')
    .where('conversation_channel', '=', key.conversation_channel)
    .where('conversation_key', '=', key.conversation_key)
    .where('assistant', '=', key.assistant)
    .executeTakeFirst();
  const subject = `${d.conversation.channel}:${d.conversation.key} with ${d.assistant}`;
  return { ok: false, brake: 'rounds', limit: cap, count: found?.rounds ?? 0, subject };
}

/** Takes one of the person's concurrent child-run slots: null when taken, else the refusal. */
async function takeSlot(trx: Trx, d: NewDelegation, cap: number, at: Date): Promise<Refusal | null> {
  const key = { channel: d.requester.channel, user_id: d.requester.id };
  const taken =
    cap < 1
      ? undefined
      : await trx
          .insertInto('delegation_quotas')
          .values({ ...key, active: 1, created_at: at, updated_at: at })
          .onConflict((oc) =>
            oc
              .columns(['channel', 'user_id'])
              .doUpdateSet((eb) => ({ active: eb('delegation_quotas.active', '+', 1), updated_at: at }))
              .where('delegation_quotas.active', '<', cap),
          )
          .returning('delegation_quotas.active')
          .executeTakeFirst();
  if (taken) return null;
  const found = await trx
    .selectFrom('delegation_quotas')
    .select('active')
    .where('channel', '=', key.channel)
    .where('user_id', '=', key.user_id)
    .executeTakeFirst();
  const subject = `${key.channel}:${key.user_id}`;
  return { ok: false, brake: 'concurrency', limit: cap, count: found?.active ?? 0, subject };
}

async function recordTrip(trx: Trx, op: string, r: Refusal, at: Date): Promise<Tripped> {
  await trx
    .insertInto('brake_trips')
    .values({ brake: r.brake, subject: r.subject, cap: r.limit, count: r.count, op, created_at: at })
    .onConflict((oc) => oc.column('op').doNothing())
    .execute();
  return { ok: false, brake: r.brake, limit: r.limit, count: r.count };
}

/**
 * Ends a delegation and frees its slot, in one statement: only the update that ends it (ended_at still null) lowers
 * the person's counter, so a repeat frees nothing more.
 */
export async function endDelegation(db: Kysely<DatabaseSchema>, id: string, reply: string, at: Date): Promise<boolean> {
  const freed = await db
    .with('ended', (qb) =>
      qb
        .updateTable('delegations')
        .set({ ended_at: at, reply })
        .where('id', '=', id)
        .where('ended_at', 'is', null)
        .returning(['requester_channel', 'requester_id']),
    )
    .updateTable('delegation_quotas as q')
    .from('ended')
    .set((eb) => ({ active: eb('q.active', '-', 1), updated_at: at }))
    .whereRef('q.channel', '=', 'ended.requester_channel')
    .whereRef('q.user_id', '=', 'ended.requester_id')
    .where('q.active', '>', 0)
    .returning('q.active')
    .executeTakeFirst();
  return freed !== undefined;
}

/**
 * Counts one message: `UPDATE … SET messages = messages + 1 WHERE messages < cap`, stamped with `op` so that a
 * repeat (an answer lost) finds its own count instead of counting again; a refusal is recorded under `op` too.
 * (Only the last count's `op` is kept: a repeat that comes after another message was counted counts again, which
 * errs toward the brake.)
 */
export function countDelegationMessage(
  db: Kysely<DatabaseSchema>,
  id: string,
  op: string,
  cap: number,
  at: Date,
): Promise<MessageResult | null> {
  return db.transaction().execute(async (trx) => {
    const counted = await trx
      .updateTable('delegations')
      .set((eb) => ({ messages: eb('messages', '+', 1), message_op: op }))
      .where('id', '=', id)
      .where('messages', '<', cap)
      .where(sql<boolean>`message_op IS DISTINCT FROM ${op}`)
      .returning('messages')
      .executeTakeFirst();
    if (counted) return { ok: true, count: counted.messages };
    const found = await trx
      .selectFrom('delegations')
      .select(['messages', 'message_op'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!found) return null;
    if (found.message_op === op) return { ok: true, count: found.messages };
    const earlier = await tripOf(trx, op);
    if (earlier) return earlier;
    const refusal: Refusal = { ok: false, brake: 'messages', limit: cap, count: found.messages, subject: id };
    return recordTrip(trx, op, refusal, at);
  });
}

/**
 * Ends the delegations whose end was lost, and frees their slots, in one statement. The update re-checks
 * `ended_at IS NULL` on the newest row, so an `endChild` racing with it ends each delegation once, and frees once.
 */
export async function releaseOrphanDelegations(
  db: Kysely<DatabaseSchema>,
  unstartedBefore: Date,
  at: Date,
): Promise<number> {
  const terminal = sql.join(TERMINAL_STATUSES.map((s) => sql.lit(s)));
  const { rows } = await sql<{ n: number | string }>`
    WITH ended AS (
      UPDATE delegations d
      SET ended_at = ${at},
          reply = coalesce(
            (SELECT r.report FROM runs r WHERE r.id = d.child_run_id),
            CASE WHEN EXISTS (SELECT 1 FROM runs r WHERE r.id = d.child_run_id)
              THEN ${'The delegated run ended with no report.'}
              ELSE ${'The delegated run never started.'} END)
      WHERE d.ended_at IS NULL
        -- A child that ended still owing its report is not done: its report is the reply (as childEnd waits for).
        AND (EXISTS (SELECT 1 FROM runs r WHERE r.id = d.child_run_id AND r.status IN (${terminal}) AND NOT r.report_due)
          OR (d.created_at < ${unstartedBefore}
            AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = d.child_run_id)))
      RETURNING d.requester_channel, d.requester_id
    ), freed AS (
      SELECT requester_channel, requester_id, count(*) AS n FROM ended GROUP BY requester_channel, requester_id
    )
    UPDATE delegation_quotas q
    SET active = greatest(q.active - freed.n, 0), updated_at = ${at}
    FROM freed
    WHERE q.channel = freed.requester_channel AND q.user_id = freed.requester_id
    RETURNING freed.n
  `.execute(db);
  return rows.reduce((sum, r) => sum + Number(r.n), 0);
}
