/**
 * Spend totals: the six windows a run's model calls count in (the workspace, the run's chat channel and its
 * requester, each for the UTC day and month), opened as rows before a first reservation locks them, and read back
 * for plan cards and `/steward spend`. Reservations and settlements are in `run-safety.ts`, beside the token budgets
 * they share a statement with.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { SpendLimit } from '../engine/ports.ts';
import {
  NO_SPEND_CAPS,
  SPEND_PERIODS,
  SPEND_SCOPES,
  spendPersonKey,
  spendWindows,
  type RunSpend,
  type SpendCaps,
  type SpendLedger,
  type SpendLine,
  type SpendPeriod,
  type SpendScope,
  type SpendWindows,
  type StoredSpendTotal,
} from '../engine/spend.ts';
import type { Actor } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/** Every spend limit a reservation may name. */
export const SPEND_LIMITS: readonly SpendLimit[] = SPEND_SCOPES.flatMap((s) =>
  SPEND_PERIODS.map((p): SpendLimit => `${s}-${p}`),
);

/**
 * The channel a run counts for, as SQL over its row `r`: `<platform>:<place>`, where the place is the run's own, else
 * that of the first run of its conversation that has one (a workflow's fire, a delegated run or an amendment run in
 * a thread started by a mention), else the conversation itself (the console; a conversation no mention started).
 */
const CHANNEL_KEY = sql`r.channel || ':' || coalesce(r.place, (
    SELECT o.place FROM runs o
    WHERE o.channel = r.channel AND o.conversation_key = r.conversation_key AND o.place IS NOT NULL
    ORDER BY o.created_at LIMIT 1
  ), r.conversation_key)`;

/**
 * `wanted (scope, key, period, starts, cap)`: a CTE of the six windows a call of `runId` by `actor` counts in, with
 * their caps (null: none). No rows when the run does not exist.
 */
export function spendWindowsSql(runId: string, actor: Actor, w: SpendWindows, caps: SpendCaps): RawBuilder<unknown> {
  const rows = SPEND_SCOPES.flatMap((scope) =>
    SPEND_PERIODS.map(
      (period) =>
        sql`(${scope}, ${period}, ${period === 'day' ? w.day : w.month}::date, ${caps[scope][period]}::bigint)`,
    ),
  );
  return sql`wanted (scope, key, period, starts, cap) AS (
      SELECT v.scope,
             CASE v.scope WHEN 'workspace' THEN '' WHEN 'person' THEN ${spendPersonKey(actor)} ELSE c.key END,
             v.period, v.starts, v.cap
      FROM (VALUES ${sql.join(rows)}) AS v (scope, period, starts, cap)
      CROSS JOIN (SELECT ${CHANNEL_KEY} AS key FROM runs r WHERE r.id = ${runId}) c
    )`;
}

/**
 * The six windows a new run's calls will count in, as of its creation (a SELECT of `scope, key, period, starts`), for
 * `createRun` to open in its own statement: its place, else that of an earlier run of its conversation, else the
 * conversation is its channel.
 */
export function newRunWindows(run: {
  conversation: { channel: string; key: string };
  requester: Actor;
  place?: string;
  at: Date;
}): RawBuilder<{ scope: string; key: string; period: string; starts: string }> {
  const w = spendWindows(run.at);
  const { channel, key } = run.conversation;
  const chan = sql`${channel}::text || ':' || coalesce(${run.place ?? null}::text, (
      SELECT o.place FROM runs o WHERE o.channel = ${channel} AND o.conversation_key = ${key} AND o.place IS NOT NULL
      ORDER BY o.created_at LIMIT 1
    ), ${key}::text)`;
  const person = spendPersonKey(run.requester);
  return sql`SELECT v.scope, v.key, v.period, v.starts::date FROM (VALUES
      ('workspace', '', 'day', ${w.day}), ('workspace', '', 'month', ${w.month}),
      ('person', ${person}, 'day', ${w.day}), ('person', ${person}, 'month', ${w.month}),
      ('channel', ${chan}, 'day', ${w.day}), ('channel', ${chan}, 'month', ${w.month})
    ) AS v (scope, key, period, starts)`;
}

/** Creates the window rows a reservation needs that do not exist yet (all at zero); a repeat changes nothing. */
export async function openSpendWindows(db: Db, runId: string, actor: Actor, w: SpendWindows): Promise<void> {
  await sql`
    WITH ${spendWindowsSql(runId, actor, w, NO_SPEND_CAPS)}
    INSERT INTO spend_totals (scope, key, period, starts)
    SELECT scope, key, period, starts FROM wanted
    ON CONFLICT (scope, key, period, starts) DO NOTHING`.execute(db);
}

/** What counts for a run's calls now (a window with no row yet holds nothing), its own spend, and its exemption. */
export async function runSpend(db: Db, runId: string, requester: Actor, w: SpendWindows): Promise<RunSpend> {
  const { rows } = await sql<{
    scope: SpendScope;
    period: SpendPeriod;
    micro_usd: string | number;
    run_micro_usd: string | number;
    exempt: boolean;
  }>`
    WITH ${spendWindowsSql(runId, requester, w, NO_SPEND_CAPS)}
    SELECT w.scope, w.period, coalesce(t.micro_usd, 0) AS micro_usd, r.spend_micro_usd AS run_micro_usd,
           r.spend_exempt AS exempt
    FROM wanted w
    LEFT JOIN spend_totals t ON t.scope = w.scope AND t.key = w.key AND t.period = w.period AND t.starts = w.starts
    CROSS JOIN runs r WHERE r.id = ${runId}`.execute(db);
  return {
    totals: rows.map((r) => ({ scope: r.scope, period: r.period, spentMicroUsd: Number(r.micro_usd) })),
    runMicroUsd: Number(rows[0]?.run_micro_usd ?? 0),
    exempt: rows[0]?.exempt ?? false,
  };
}

type Report = Awaited<ReturnType<SpendLedger['spendReport']>>;

/**
 * The workspace's, a channel's and a person's windows, and what settled calls charged this month and today by
 * channel, person and model, largest first (only the person's and the channel's own lines when `narrow`).
 */
export async function spendReport(
  db: Db,
  w: SpendWindows,
  who: Parameters<SpendLedger['spendReport']>[1],
): Promise<Report> {
  const person = spendPersonKey(who.person);
  const { rows: totals } = await sql<{ scope: SpendScope; period: SpendPeriod; micro_usd: string | number }>`
    SELECT scope, period, micro_usd FROM spend_totals
    WHERE ((scope = 'workspace' AND key = '') OR (scope = 'channel' AND key = ${who.channelKey})
           OR (scope = 'person' AND key = ${person}))
      AND ((period = 'day' AND starts = ${w.day}::date) OR (period = 'month' AND starts = ${w.month}::date))`.execute(
    db,
  );
  const found = new Map(totals.map((t) => [`${t.scope}-${t.period}`, Number(t.micro_usd)]));
  const ownTotals: StoredSpendTotal[] = SPEND_SCOPES.flatMap((scope) =>
    SPEND_PERIODS.map((period) => ({ scope, period, spentMicroUsd: found.get(`${scope}-${period}`) ?? 0 })),
  );
  const by = (key: RawBuilder<unknown>, name: RawBuilder<unknown>, only: RawBuilder<unknown>) =>
    sql<{ key: string; name: string | null; day: string | number; month: string | number }>`
      SELECT ${key} AS key, ${name} AS name,
             coalesce(sum(u.charged_micro_usd) FILTER (WHERE u.created_at >= ${w.day}::timestamp AT TIME ZONE 'UTC'), 0) AS day,
             sum(u.charged_micro_usd) AS month
      FROM llm_usage u JOIN runs r ON r.id = u.run_id
      WHERE u.charged_micro_usd IS NOT NULL
        AND u.created_at >= ${w.month}::timestamp AT TIME ZONE 'UTC'
        AND u.created_at < (${w.month}::timestamp + interval '1 month') AT TIME ZONE 'UTC'
        AND ${only}
      GROUP BY 1 ORDER BY month DESC, key LIMIT ${who.limit}`.execute(db);
  const mine = sql`(r.channel || ':' || r.requester_id) = ${person}`;
  const narrowChannel = who.narrow ? sql`u.spend_channel = ${who.channelKey}` : sql`true`;
  const narrowPerson = who.narrow ? mine : sql`true`;
  const [channels, people, models] = await Promise.all([
    by(sql`u.spend_channel`, sql`NULL::text`, narrowChannel),
    by(sql`r.channel || ':' || r.requester_id`, sql`max(r.requester_name)`, narrowPerson),
    by(sql`u.model`, sql`NULL::text`, narrowPerson),
  ]);
  const lines = (rows: { key: string; name: string | null; day: string | number; month: string | number }[]) =>
    rows.map((r): SpendLine => ({
      key: r.key,
      ...(r.name ? { name: r.name } : {}),
      dayMicroUsd: Number(r.day),
      monthMicroUsd: Number(r.month),
    }));
  return {
    totals: ownTotals,
    byChannel: lines(channels.rows),
    byPerson: lines(people.rows),
    byModel: lines(models.rows),
  };
}
