/** Queries for safety: pinned tool definitions, token budgets and spend caps (judged by conditional updates). */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type {
  GrantedCap,
  PinnedTool,
  PrunedLedgers,
  TokenBudgets,
  TokenRequest,
  TokenSettlement,
} from '../engine/ports.ts';
import { NO_SPEND_CAPS, type SpendRequest, type SpendWindows } from '../engine/spend.ts';
import { openSpendWindows, SPEND_LIMITS, spendWindowsSql } from './spend-ledger.ts';
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
 * run's row, the person's row for `day` and the six spend windows of the call are locked while the cap is worked
 * out (the windows in id order), so concurrent reservations queue and each sees what the one before took; the ledger
 * keeps the grant, so a repeat of `op` returns it unchanged. A spend window with no row yet (the first call of a
 * day or month) is opened at zero and the statement asked again. Null when a concurrent first reservation of the
 * day created the person's row meanwhile: the caller asks again. Without `spend`, the call is counted at no price.
 */
export async function reserveTokens(
  db: Db,
  op: string,
  runId: string,
  actor: Actor,
  want: TokenRequest,
  caps: TokenBudgets,
  day: string,
  spend: SpendRequest = { price: { input: 0, output: 0 }, caps: NO_SPEND_CAPS, windows: monthOf(day) },
): Promise<GrantedCap | null> {
  const first = await reserveOnce(db, op, runId, actor, want, caps, day, spend);
  if (first !== 'missing') return first;
  await openSpendWindows(db, runId, actor, spend.windows);
  const again = await reserveOnce(db, op, runId, actor, want, caps, day, spend);
  return again === 'missing' ? null : again;
}

async function reserveOnce(
  db: Db,
  op: string,
  runId: string,
  actor: Actor,
  want: TokenRequest,
  caps: TokenBudgets,
  day: string,
  spend: SpendRequest,
): Promise<GrantedCap | 'missing' | null> {
  const { price } = spend;
  const windows = spendWindowsSql(runId, actor, spend.windows, spend.caps);
  const promptCost = sql`(${want.prompt}::numeric * ${String(price.input)}::numeric)`;
  const { rows } = await sql<ReserveRow>`
    WITH prior AS (
      SELECT granted, limited_by, spend_micro_usd FROM token_operations WHERE op = ${op}
    ), run AS (
      SELECT tokens_used, spend_exempt FROM runs WHERE id = ${runId} FOR UPDATE
    ), person AS (
      SELECT tokens FROM user_daily_tokens
      WHERE channel = ${actor.channel} AND user_id = ${actor.id} AND day = ${day} FOR UPDATE
    ), ${windows}, totals AS (
      -- Locked in id order (after the run's row), so reservations and settlements queue instead of deadlocking.
      SELECT t.id, t.scope, t.period, t.micro_usd, w.cap FROM spend_totals t
      JOIN wanted w ON w.scope = t.scope AND w.key = t.key AND w.period = t.period AND w.starts = t.starts
      WHERE EXISTS (SELECT 1 FROM run)
      ORDER BY t.id FOR UPDATE OF t
    ), money AS (
      SELECT count(*) AS windows,
             min(cap - micro_usd) FILTER (WHERE cap IS NOT NULL) AS cap_room,
             (SELECT scope || '-' || period FROM totals WHERE cap IS NOT NULL ORDER BY cap - micro_usd, id LIMIT 1)
               AS tightest
      FROM totals
    ), room AS (
      SELECT ${caps.perRun}::bigint - run.tokens_used - ${want.prompt}::bigint AS run_room,
             ${caps.perUserPerDay}::bigint - coalesce((SELECT tokens FROM person), 0) - ${want.prompt}::bigint AS user_room,
             -- Output tokens the spend caps still hold after the prompt; null: no cap limits this call (none is set,
             -- or an approver exempted the run: its token budget bounds it).
             CASE WHEN run.spend_exempt OR money.cap_room IS NULL THEN NULL
                  WHEN money.cap_room < ${promptCost} THEN -1
                  WHEN ${String(price.output)}::numeric <= 0 THEN NULL
                  ELSE floor((money.cap_room - ${promptCost}) / ${String(price.output)}::numeric)
             END::bigint AS spend_room,
             money.windows, money.tightest, money.cap_room
      FROM run, money
    ), grant_ AS (
      SELECT cap, limited_by, ceil(${promptCost} + cap * ${String(price.output)}::numeric)::bigint AS charge
      FROM (
        SELECT least(${want.output}::bigint, run_room, user_room, coalesce(spend_room, ${want.output}::bigint))::integer AS cap,
               CASE WHEN least(run_room, user_room, coalesce(spend_room, ${want.output}::bigint)) >= ${want.output}::bigint
                      THEN NULL
                    WHEN run_room <= user_room AND run_room <= coalesce(spend_room, run_room) THEN 'run'
                    WHEN user_room <= coalesce(spend_room, user_room) THEN 'user'
                    ELSE tightest END AS limited_by
        FROM room WHERE windows = 6
      ) g
      WHERE NOT EXISTS (SELECT 1 FROM prior) AND cap >= ${want.minOutput}
    ), person_charged AS (
      INSERT INTO user_daily_tokens (channel, user_id, day, tokens)
      SELECT ${actor.channel}, ${actor.id}, ${day}, ${want.prompt}::integer + cap FROM grant_
      ON CONFLICT (channel, user_id, day) DO UPDATE SET tokens = user_daily_tokens.tokens + excluded.tokens
        WHERE user_daily_tokens.tokens + excluded.tokens <= ${caps.perUserPerDay}
      RETURNING id
    ), run_charged AS (
      UPDATE runs SET tokens_used = tokens_used + ${want.prompt}::integer + g.cap,
                      spend_micro_usd = spend_micro_usd + g.charge
      FROM grant_ g
      WHERE id = ${runId} AND EXISTS (SELECT 1 FROM person_charged)
      RETURNING runs.id
    ), spent AS (
      UPDATE spend_totals t SET micro_usd = t.micro_usd + g.charge
      FROM grant_ g
      WHERE t.id IN (SELECT id FROM totals) AND EXISTS (SELECT 1 FROM run_charged)
    ), noted AS (
      INSERT INTO token_operations (op, granted, limited_by, spend_micro_usd)
      SELECT ${op}, cap, limited_by, charge FROM grant_ WHERE EXISTS (SELECT 1 FROM run_charged)
    )
    SELECT (SELECT granted FROM prior) AS prior_cap, (SELECT limited_by FROM prior) AS prior_limited_by,
           (SELECT spend_micro_usd FROM prior) AS prior_charge,
           (SELECT cap FROM grant_) AS cap, (SELECT limited_by FROM grant_) AS limited_by,
           (SELECT charge FROM grant_) AS charge,
           room.run_room, room.user_room, room.spend_room, room.windows, room.tightest, room.cap_room,
           EXISTS (SELECT 1 FROM run_charged) AS charged
    FROM (SELECT 1) one LEFT JOIN room ON true`.execute(db);
  const row = rows[0];
  if (row?.prior_cap != null) return granted(row.prior_cap, row.prior_limited_by, row.prior_charge);
  if (row?.charged && row.cap !== null) return granted(row.cap, row.limited_by, row.charge);
  // Granted but not charged: the person's row appeared after this statement's snapshot.
  if (row?.cap != null) return null;
  if (row?.run_room != null && Number(row.windows) < 6) return 'missing';
  return refused(row, want.minOutput);
}

interface ReserveRow {
  prior_cap: number | null;
  prior_limited_by: string | null;
  prior_charge: string | number | null;
  cap: number | null;
  limited_by: string | null;
  charge: string | number | null;
  run_room: string | number | null;
  user_room: string | number | null;
  spend_room: string | number | null;
  windows: string | number | null;
  tightest: string | null;
  cap_room: string | number | null;
  charged: boolean;
}

const LIMITS = new Set(['run', 'user', ...SPEND_LIMITS]);

function isLimit(v: string | null): v is NonNullable<Extract<GrantedCap, { ok: true }>['limitedBy']> {
  return v !== null && LIMITS.has(v);
}

function granted(cap: number, limitedBy: string | null, charge: string | number | null): GrantedCap {
  const spendMicroUsd = Number(charge ?? 0);
  return { ok: true, cap, ...(isLimit(limitedBy) && { limitedBy }), ...(spendMicroUsd > 0 && { spendMicroUsd }) };
}

/** The budget that refused: the run's, else the person's, else the tightest spend cap (with what is left of it). */
function refused(row: ReserveRow | undefined, minOutput: number): GrantedCap {
  const n = (v: string | number | null | undefined) => (v == null ? null : Number(v));
  const runRoom = n(row?.run_room);
  if (runRoom === null || runRoom < minOutput) return { ok: false, refusedBy: 'run' };
  const tightest = row?.tightest ?? null;
  if ((n(row?.user_room) ?? 0) >= minOutput && n(row?.spend_room) !== null && isLimit(tightest) && tightest !== 'run') {
    return { ok: false, refusedBy: tightest, leftMicroUsd: Math.max(0, n(row?.cap_room) ?? 0) };
  }
  return { ok: false, refusedBy: 'user' };
}

/**
 * Settles a call once per `op`, in one statement: the run's and the person's token counters and the spend totals
 * corrected (never below zero), and its usage row written with what it charged and the channel it counted for,
 * only when the ledger's note of `op` is new. The run's row goes first and the windows in id order, as reservations
 * lock them.
 */
export async function settleTokens(db: Db, op: string, s: TokenSettlement): Promise<void> {
  const { runId, delta } = s;
  const spendDelta = s.spend?.delta ?? 0;
  const run = sql`
      UPDATE runs SET ${settledCounters(s)}
      WHERE id = ${runId} AND (${delta}::integer <> 0 OR ${spendDelta}::bigint <> 0) AND EXISTS (SELECT 1 FROM noted)
      RETURNING id`;
  await sql`WITH ${settlement(op, s, run)} SELECT 1`.execute(db);
}

/**
 * `SET` terms that move a run's token and spend counters by the settlement (never below zero), only when the
 * ledger's note of its op is new (`noted`, from `settlement`): for a statement that writes the run's row for another
 * reason too, since one statement may update a row only once.
 */
export function settledCounters(s: TokenSettlement): RawBuilder<unknown> {
  const spendDelta = s.spend?.delta ?? 0;
  return sql`tokens_used = CASE WHEN EXISTS (SELECT 1 FROM noted)
        THEN greatest(0, tokens_used + ${s.delta}::integer) ELSE tokens_used END,
      spend_micro_usd = CASE WHEN EXISTS (SELECT 1 FROM noted)
        THEN greatest(0, spend_micro_usd + ${spendDelta}::bigint) ELSE spend_micro_usd END`;
}

/**
 * The CTEs of a settlement once per `op` (see `settleTokens`), for one statement: `noted` (the ledger's note, new or
 * not), `run` (the caller's write of the run's row, which must move its counters with `settledCounters` or alike,
 * and which comes first), then the person's counter, the spend windows in id order, and the usage row.
 */
export function settlement(op: string, s: TokenSettlement, run: RawBuilder<unknown>): RawBuilder<unknown> {
  const { runId, actor, day, delta, usage } = s;
  const spendDelta = s.spend?.delta ?? 0;
  const windows = spendWindowsSql(runId, actor, s.spend?.windows ?? monthOf(day), NO_SPEND_CAPS);
  return sql`noted AS (
      INSERT INTO token_operations (op) VALUES (${op}) ON CONFLICT (op) DO NOTHING RETURNING op
    ), run AS (${run}), person AS (
      UPDATE user_daily_tokens SET tokens = greatest(0, tokens + ${delta}::integer)
      WHERE channel = ${actor.channel} AND user_id = ${actor.id} AND day = ${day}
        AND ${delta}::integer <> 0 AND EXISTS (SELECT 1 FROM noted)
    ), ${windows}, locked AS (
      SELECT t.id FROM spend_totals t
      JOIN wanted w ON w.scope = t.scope AND w.key = t.key AND w.period = t.period AND w.starts = t.starts
      WHERE ${spendDelta}::bigint <> 0 AND EXISTS (SELECT 1 FROM noted) AND (SELECT count(*) FROM run) >= 0
      ORDER BY t.id FOR UPDATE OF t
    ), spent AS (
      UPDATE spend_totals SET micro_usd = greatest(0, micro_usd + ${spendDelta}::bigint)
      WHERE id IN (SELECT id FROM locked)
    ), usage AS (
      INSERT INTO llm_usage (run_id, role, model, input_tokens, output_tokens, cached_input_tokens, cost_micro_usd,
                             charged_micro_usd, spend_channel, op, created_at)
      SELECT ${runId}, ${usage?.role ?? null}, ${usage?.model ?? null}, ${usage?.inputTokens ?? null}::integer,
             ${usage?.outputTokens ?? null}::integer, ${usage?.cachedInputTokens ?? 0}::integer,
             ${usage?.costMicroUsd ?? null}::bigint, ${usage?.chargedMicroUsd ?? null}::bigint,
             (SELECT key FROM wanted WHERE scope = 'channel' LIMIT 1), ${op}, ${usage?.at ?? null}::timestamptz
      WHERE ${usage !== null} AND EXISTS (SELECT 1 FROM noted)
      ON CONFLICT (op) WHERE op IS NOT NULL DO NOTHING
    )`;
}

/** The windows of a day that carries no month of its own (a settlement written before spend caps existed). */
function monthOf(day: string): SpendWindows {
  return { day, month: `${day.slice(0, 7)}-01` };
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
