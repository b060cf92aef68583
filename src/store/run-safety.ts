/** Queries for safety: pinned tool definitions and token budgets (judged by conditional updates). */
import { sql, type Kysely } from 'kysely';
import type { GrantedCap, PinnedTool, PrunedLedgers, RunStore, TokenBudgets, TokenRequest } from '../engine/ports.ts';
import { TERMINAL_STATUSES, type Actor, type Json } from '../engine/types.ts';
import { toJsonText } from './json-text.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/** Pins definitions for a run; pinning a tool again (after a person approved its change) replaces the pin. */
export async function pinTools(db: Db, runId: string, pins: readonly PinnedTool[], at: Date): Promise<void> {
  if (pins.length === 0) return;
  await db
    .insertInto('tool_pins')
    .values(
      pins.map((p) => ({
        run_id: runId,
        tool: p.tool,
        fingerprint: p.fingerprint,
        definition: toJsonText(p.definition),
        created_at: at,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['run_id', 'tool']).doUpdateSet((eb) => ({
        fingerprint: eb.ref('excluded.fingerprint'),
        definition: eb.ref('excluded.definition'),
      })),
    )
    .execute();
}

export async function listPins(db: Db, runId: string): Promise<PinnedTool[]> {
  const rows = await db
    .selectFrom('tool_pins')
    .select(['tool', 'fingerprint', 'definition'])
    .where('run_id', '=', runId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ tool: r.tool, fingerprint: r.fingerprint, definition: r.definition as Json }));
}

/**
 * Reserves a call's prompt and the largest cap the budgets hold (see `RunStore.reserveTokens`) in one statement. The
 * run's row and the person's row for `day` are locked while the cap is worked out, so concurrent reservations queue
 * and each sees what the one before took; the ledger keeps the grant, so a repeat of `op` returns it unchanged.
 * Null when a concurrent first reservation of the day created the person's row meanwhile: the caller asks again.
 */
export async function reserveTokens(
  db: Db,
  op: string,
  runId: string,
  actor: Actor,
  want: TokenRequest,
  caps: TokenBudgets,
  day: string,
): Promise<GrantedCap | null> {
  const { rows } = await sql<ReserveRow>`
    WITH prior AS (
      SELECT granted, limited_by FROM token_operations WHERE op = ${op}
    ), run AS (
      SELECT tokens_used FROM runs WHERE id = ${runId} FOR UPDATE
    ), person AS (
      SELECT tokens FROM user_daily_tokens
      WHERE channel = ${actor.channel} AND user_id = ${actor.id} AND day = ${day} FOR UPDATE
    ), room AS (
      SELECT ${caps.perRun}::bigint - run.tokens_used - ${want.prompt}::bigint AS run_room,
             ${caps.perUserPerDay}::bigint - coalesce((SELECT tokens FROM person), 0) - ${want.prompt}::bigint AS user_room
      FROM run
    ), grant_ AS (
      SELECT least(${want.output}::bigint, run_room, user_room)::integer AS cap,
             CASE WHEN least(run_room, user_room) >= ${want.output}::bigint THEN NULL
                  WHEN run_room <= user_room THEN 'run' ELSE 'user' END AS limited_by
      FROM room
      WHERE NOT EXISTS (SELECT 1 FROM prior) AND least(${want.output}::bigint, run_room, user_room) >= ${want.minOutput}
    ), person_charged AS (
      INSERT INTO user_daily_tokens (channel, user_id, day, tokens)
      SELECT ${actor.channel}, ${actor.id}, ${day}, ${want.prompt}::integer + cap FROM grant_
      ON CONFLICT (channel, user_id, day) DO UPDATE SET tokens = user_daily_tokens.tokens + excluded.tokens
        WHERE user_daily_tokens.tokens + excluded.tokens <= ${caps.perUserPerDay}
      RETURNING id
    ), run_charged AS (
      UPDATE runs SET tokens_used = tokens_used + ${want.prompt}::integer + (SELECT cap FROM grant_)
      WHERE id = ${runId} AND EXISTS (SELECT 1 FROM person_charged)
      RETURNING id
    ), noted AS (
      INSERT INTO token_operations (op, granted, limited_by)
      SELECT ${op}, cap, limited_by FROM grant_ WHERE EXISTS (SELECT 1 FROM run_charged)
    )
    SELECT (SELECT granted FROM prior) AS prior_cap, (SELECT limited_by FROM prior) AS prior_limited_by,
           (SELECT cap FROM grant_) AS cap, (SELECT limited_by FROM grant_) AS limited_by,
           (SELECT run_room FROM room) AS run_room, EXISTS (SELECT 1 FROM run_charged) AS charged`.execute(db);
  const row = rows[0];
  if (row?.prior_cap != null) return granted(row.prior_cap, row.prior_limited_by);
  if (row?.charged && row.cap !== null) return granted(row.cap, row.limited_by);
  // Granted but not charged: the person's row appeared after this statement's snapshot.
  if (row?.cap != null) return null;
  const runRoom = row?.run_room == null ? null : Number(row.run_room);
  return { ok: false, refusedBy: runRoom === null || runRoom < want.minOutput ? 'run' : 'user' };
}

interface ReserveRow {
  prior_cap: number | null;
  prior_limited_by: string | null;
  cap: number | null;
  limited_by: string | null;
  run_room: string | number | null;
  charged: boolean;
}

function granted(cap: number, limitedBy: string | null): GrantedCap {
  return limitedBy === 'run' || limitedBy === 'user' ? { ok: true, cap, limitedBy } : { ok: true, cap };
}

/**
 * Settles a call once per `op`, in one statement: both counters corrected (never below zero) and its usage row
 * written, only when the ledger's note of `op` is new.
 */
export async function settleTokens(db: Db, op: string, s: Parameters<RunStore['settleTokens']>[0]): Promise<void> {
  const { runId, actor, day, delta, usage } = s;
  await sql`
    WITH noted AS (
      INSERT INTO token_operations (op) VALUES (${op}) ON CONFLICT (op) DO NOTHING RETURNING op
    ), run AS (
      UPDATE runs SET tokens_used = greatest(0, tokens_used + ${delta}::integer)
      WHERE id = ${runId} AND ${delta}::integer <> 0 AND EXISTS (SELECT 1 FROM noted)
    ), person AS (
      UPDATE user_daily_tokens SET tokens = greatest(0, tokens + ${delta}::integer)
      WHERE channel = ${actor.channel} AND user_id = ${actor.id} AND day = ${day}
        AND ${delta}::integer <> 0 AND EXISTS (SELECT 1 FROM noted)
    )
    INSERT INTO llm_usage (run_id, role, model, input_tokens, output_tokens, cached_input_tokens, cost_micro_usd, op,
                           created_at)
    SELECT ${runId}, ${usage?.role ?? null}, ${usage?.model ?? null}, ${usage?.inputTokens ?? null}::integer,
           ${usage?.outputTokens ?? null}::integer, ${usage?.cachedInputTokens ?? 0}::integer,
           ${usage?.costMicroUsd ?? null}::bigint, ${op}, ${usage?.at ?? null}::timestamptz
    WHERE ${usage !== null} AND EXISTS (SELECT 1 FROM noted)
    ON CONFLICT (op) WHERE op IS NOT NULL DO NOTHING`.execute(db);
}

/** Records a platform event as handled; false when it was handled before (a redelivery), not by this `op`. */
export async function claimInbound(db: Db, op: string, key: string, at: Date): Promise<boolean> {
  const row = await db
    .insertInto('inbound_events')
    .values({ key, op, created_at: at })
    // The no-op update returns the row only when it is this claim's own, repeated after its answer was lost.
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({ key: (eb) => eb.ref('excluded.key') })
        .where('inbound_events.op', '=', op),
    )
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Forgets what only guards against a repeat that can no longer come, once older than `olderThanMs` (database time):
 * token ledger notes (a reservation or settlement is repeated within the store's seconds-long retries), handled
 * platform event ids (Slack retries for minutes, a Discord resume replays for minutes), and queued decisions that
 * were taken, or that wait on a run that has ended. One statement per table; the counts removed.
 */
export async function pruneLedgers(db: Db, olderThanMs: number): Promise<PrunedLedgers> {
  const cutoff = sql<Date>`now() - make_interval(secs => ${olderThanMs / 1000})`;
  const tokens = await db.deleteFrom('token_operations').where('created_at', '<', cutoff).executeTakeFirst();
  const events = await db.deleteFrom('inbound_events').where('created_at', '<', cutoff).executeTakeFirst();
  const commands = await db
    .deleteFrom('run_commands')
    .where('created_at', '<', cutoff)
    .where((eb) =>
      eb.or([
        eb('taken_op', 'is not', null),
        eb.exists(
          eb
            .selectFrom('runs')
            .select('runs.id')
            .whereRef('runs.id', '=', 'run_commands.run_id')
            .where('runs.status', 'in', [...TERMINAL_STATUSES]),
        ),
      ]),
    )
    .executeTakeFirst();
  return {
    tokenOperations: Number(tokens.numDeletedRows),
    inboundEvents: Number(events.numDeletedRows),
    runCommands: Number(commands.numDeletedRows),
  };
}
