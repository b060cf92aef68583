/**
 * The dashboard's spend page, read in three statements: what the workspace, each channel and each person hold today
 * and this month as the caps count it (`spend_totals`, reservations in flight included), and what settled calls
 * charged by model. An approver sees every channel and person; anyone else, as `/steward spend` narrows it, only
 * their own line and the channels their own runs spent in.
 */
import { sql, type Kysely } from 'kysely';
import { spendPersonKey, type SpendLine, type SpendWindows } from '../engine/spend.ts';
import type { Viewer } from './dashboard-queries.ts';
import type { DatabaseSchema } from './schema.ts';

/** What the spend page shows: the workspace's totals, and lines by channel, person and model (largest first). */
export interface DashboardSpend {
  windows: SpendWindows;
  workspace: { dayMicroUsd: number; monthMicroUsd: number };
  byChannel: SpendLine[];
  byPerson: SpendLine[];
  byModel: SpendLine[];
  /** Only the viewer's own line and their channels' (not an approver). */
  narrowed: boolean;
}

type Row = { scope: string; key: string; name: string | null; day: string | number; month: string | number };

/** The spend page's figures for `viewer` in windows `w`, at most `limit` lines a list. */
export async function dashboardSpend(
  db: Kysely<DatabaseSchema>,
  viewer: Viewer,
  w: SpendWindows,
  limit: number,
): Promise<DashboardSpend> {
  const person = spendPersonKey(viewer);
  const own = sql`r.channel = ${viewer.channel} AND r.requester_id = ${viewer.id}`;
  // The channels the viewer's own runs spent in: theirs to see, as `/steward spend` shows the asker's channel.
  const theirChannels = sql`(SELECT DISTINCT u.spend_channel FROM llm_usage u JOIN runs r ON r.id = u.run_id
    WHERE ${own} AND u.spend_channel IS NOT NULL)`;
  const visible = viewer.approver
    ? sql`true`
    : sql`(t.scope = 'workspace' OR (t.scope = 'person' AND t.key = ${person})
           OR (t.scope = 'channel' AND t.key IN ${theirChannels}))`;
  const { rows } = await sql<Row>`
    SELECT t.scope, t.key,
           CASE WHEN t.scope = 'person' THEN (SELECT max(r.requester_name) FROM runs r
             WHERE r.channel || ':' || r.requester_id = t.key) END AS name,
           coalesce(sum(t.micro_usd) FILTER (WHERE t.period = 'day'), 0) AS day,
           coalesce(sum(t.micro_usd) FILTER (WHERE t.period = 'month'), 0) AS month
    FROM spend_totals t
    WHERE ((t.period = 'day' AND t.starts = ${w.day}::date) OR (t.period = 'month' AND t.starts = ${w.month}::date))
      AND ${visible}
    GROUP BY t.scope, t.key`.execute(db);
  const { rows: models } = await sql<Row>`
    SELECT 'model' AS scope, u.model AS key, NULL AS name,
           coalesce(sum(u.charged_micro_usd) FILTER (WHERE u.created_at >= ${w.day}::timestamp AT TIME ZONE 'UTC'), 0) AS day,
           sum(u.charged_micro_usd) AS month
    FROM llm_usage u JOIN runs r ON r.id = u.run_id
    WHERE u.charged_micro_usd IS NOT NULL
      AND u.created_at >= ${w.month}::timestamp AT TIME ZONE 'UTC'
      AND u.created_at < (${w.month}::timestamp + interval '1 month') AT TIME ZONE 'UTC'
      AND ${viewer.approver ? sql`true` : own}
    GROUP BY u.model`.execute(db);
  const lines = (scope: string, from: Row[]) =>
    from
      .filter((r) => r.scope === scope)
      .map((r): SpendLine => ({
        key: r.key,
        ...(r.name ? { name: r.name } : {}),
        dayMicroUsd: Number(r.day),
        monthMicroUsd: Number(r.month),
      }))
      .sort((a, b) => b.monthMicroUsd - a.monthMicroUsd || a.key.localeCompare(b.key))
      .slice(0, limit);
  const workspace = rows.find((r) => r.scope === 'workspace');
  return {
    windows: w,
    workspace: { dayMicroUsd: Number(workspace?.day ?? 0), monthMicroUsd: Number(workspace?.month ?? 0) },
    byChannel: lines('channel', rows),
    byPerson: lines('person', rows),
    byModel: lines('model', models),
    narrowed: !viewer.approver,
  };
}
