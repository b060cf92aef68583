/**
 * Recent history for plan estimates, in one statement: per tool (and for `llm` steps) the p50 and p90 duration of
 * its last ended attempts, and per model role the p50 and p90 tokens it spent (per run for the planner, classifier
 * and synthesizer; per call for `llm` steps) with the model it used last. A step attempt does not name its tool:
 * the revision it ran under does, so attempts are joined to their plan's step. The same durations also come per
 * (tool, the step's arguments as the plan wrote them, references unresolved), for the most recently used such groups
 * with enough samples: `audit.sleep` asked for 50 ms and for 600 ms are told apart; and per (tool, the arguments'
 * shape: top-level names with their values' JSON types, as `argShape` names them) for tools called with more than one
 * shape: `fs.search` with a path alone and with a path and a pattern are told apart, whatever the path.
 */
import { sql, type Kysely } from 'kysely';
import type {
  DurationStats,
  EstimateHistory,
  EstimateHistoryData,
  EstimatedRole,
  RoleTokenStats,
} from '../engine/estimate-history.ts';
import { canonicalJson } from '../engine/plan/canonical-json.ts';
import type { Json } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from './store-retry.ts';

/**
 * How far back history counts, and how many of the newest samples per tool or role at most; per (tool, arguments) and
 * per (tool, arguments' shape), groups count from `argSamples` samples, and only the `argGroups` most recently used of
 * each are read.
 */
export interface HistoryWindow {
  days: number;
  samples: number;
  argSamples: number;
  argGroups: number;
}

/** The largest arguments (as JSON text) a step's history is kept by; larger ones count under their tool only. */
const MAX_ARGS_BYTES = 2_000;

export const DEFAULT_HISTORY_WINDOW: HistoryWindow = { days: 14, samples: 200, argSamples: 3, argGroups: 500 };

interface HistoryRow {
  kind: 'tool' | 'args' | 'shape' | 'role';
  key: string;
  args: Json | null;
  samples: number;
  a50: number;
  a90: number;
  b50: number | null;
  b90: number | null;
  model: string | null;
}

/** Reads the history (`EstimateHistory`) on PostgreSQL or PGlite, retried like every store read. */
export class PgEstimateHistory implements EstimateHistory {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly window: HistoryWindow = DEFAULT_HISTORY_WINDOW,
    private readonly retry: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  readEstimateHistory(): Promise<EstimateHistoryData> {
    return withRetries('readEstimateHistory', () => readEstimateHistory(this.db, this.window), this.retry);
  }
}

/** The history as one statement's rows, folded into per-tool and per-role stats. */
export async function readEstimateHistory(
  db: Kysely<DatabaseSchema>,
  window: HistoryWindow = DEFAULT_HISTORY_WINDOW,
): Promise<EstimateHistoryData> {
  const { days, samples, argSamples, argGroups } = window;
  const { rows } = await sql<HistoryRow>`
    WITH ended AS (
      SELECT coalesce(s.step->>'tool', CASE WHEN s.step->>'kind' = 'llm' THEN 'llm' END) AS key, a.duration_ms,
        a.ended_at, coalesce(s.step->'args', '{}'::jsonb) AS args
      FROM step_attempts a
      JOIN plan_revisions p ON p.run_id = a.run_id AND p.revision = a.revision
      CROSS JOIN LATERAL jsonb_array_elements(p.plan->'steps') AS s(step)
      -- Ended attempts that did their work: a stopped or interrupted one says nothing about how long the tool takes.
      WHERE s.step->>'id' = a.step_id AND a.status IN ('succeeded', 'failed') AND a.duration_ms IS NOT NULL
        AND coalesce(a.error->>'code', '') <> 'interrupted'
        AND a.ended_at > now() - make_interval(days => ${days})
    ), attempts AS (
      SELECT key, duration_ms, row_number() OVER (PARTITION BY key ORDER BY ended_at DESC) AS n
      FROM ended WHERE key IS NOT NULL
    ), arg_attempts AS (
      SELECT key, args, duration_ms, ended_at,
        row_number() OVER (PARTITION BY key, args ORDER BY ended_at DESC) AS n
      FROM ended WHERE key IS NOT NULL
    ), by_args AS (
      -- jsonb compares by value, so key order and spacing in the stored plans do not split a group.
      SELECT key, args, count(*)::integer AS samples,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS a50,
        percentile_cont(0.9) WITHIN GROUP (ORDER BY duration_ms) AS a90
      -- Small arguments only (a step writing a file's content is keyed by its tool): every read sends the groups back.
      FROM arg_attempts WHERE n <= ${samples} AND octet_length(args::text) <= ${MAX_ARGS_BYTES}
      GROUP BY key, args HAVING count(*) >= ${argSamples}
      ORDER BY max(ended_at) DESC LIMIT ${argGroups}
    ), shape_attempts AS (
      -- The shape as argShape names it: each top-level name with its value's JSON type, a reference as 'ref'.
      SELECT key, duration_ms, ended_at, shape,
        row_number() OVER (PARTITION BY key, shape ORDER BY ended_at DESC) AS n
      FROM ended CROSS JOIN LATERAL (
        SELECT coalesce(jsonb_object_agg(e.name,
          CASE WHEN e.value -> '$ref' IS NOT NULL THEN 'ref' ELSE jsonb_typeof(e.value) END), '{}'::jsonb) AS shape
        FROM jsonb_each(CASE WHEN jsonb_typeof(args) = 'object' THEN args ELSE '{}'::jsonb END) AS e(name, value)
      ) AS s
      WHERE key IS NOT NULL
    ), shape_groups AS (
      SELECT key, shape, count(*)::integer AS samples, max(ended_at) AS at,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS a50,
        percentile_cont(0.9) WITHIN GROUP (ORDER BY duration_ms) AS a90,
        count(*) OVER (PARTITION BY key) AS shapes
      FROM shape_attempts WHERE n <= ${samples}
      GROUP BY key, shape
    ), by_shape AS (
      -- A tool called with one shape only: its shape's history is its own, and the card says so.
      SELECT * FROM shape_groups WHERE shapes > 1 AND samples >= ${argSamples}
      ORDER BY at DESC LIMIT ${argGroups}
    ), spent AS (
      -- Per run for the roles a run spends once; per call for llm steps (one call each).
      SELECT role, sum(input_tokens) AS input, sum(output_tokens) AS output, max(created_at) AS at,
        (array_agg(model ORDER BY created_at DESC))[1] AS model
      FROM llm_usage
      WHERE created_at > now() - make_interval(days => ${days})
        AND (role = 'llm_step' OR (run_id IS NOT NULL AND role IN ('planner', 'classifier', 'synthesizer')))
      GROUP BY role, CASE WHEN role = 'llm_step' THEN id::text ELSE run_id END
    ), recent AS (
      SELECT *, row_number() OVER (PARTITION BY role ORDER BY at DESC) AS n FROM spent
    )
    SELECT 'tool' AS kind, key, NULL::jsonb AS args, count(*)::integer AS samples,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS a50,
      percentile_cont(0.9) WITHIN GROUP (ORDER BY duration_ms) AS a90,
      NULL::double precision AS b50, NULL::double precision AS b90, NULL AS model
    FROM attempts WHERE n <= ${samples} GROUP BY key
    UNION ALL
    SELECT 'args', key, args, samples, a50, a90, NULL, NULL, NULL FROM by_args
    UNION ALL
    SELECT 'shape', key, shape, samples, a50, a90, NULL, NULL, NULL FROM by_shape
    UNION ALL
    SELECT 'role', role, NULL, count(*)::integer,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY input), percentile_cont(0.9) WITHIN GROUP (ORDER BY input),
      percentile_cont(0.5) WITHIN GROUP (ORDER BY output), percentile_cont(0.9) WITHIN GROUP (ORDER BY output),
      (array_agg(model ORDER BY at DESC))[1]
    FROM recent WHERE n <= ${samples} GROUP BY role`.execute(db);
  return fromRows(rows);
}

function fromRows(rows: readonly HistoryRow[]): EstimateHistoryData {
  const tools: Record<string, DurationStats> = {};
  const byArgs: Record<string, Record<string, DurationStats>> = {};
  const byShape: Record<string, Record<string, DurationStats>> = {};
  const roles: Partial<Record<EstimatedRole, RoleTokenStats>> = {};
  for (const r of rows) {
    const samples = Number(r.samples);
    if (r.kind === 'tool') {
      tools[r.key] = { p50Ms: Math.round(Number(r.a50)), p90Ms: Math.round(Number(r.a90)), samples };
    } else if (r.kind === 'args' || r.kind === 'shape') {
      const stats = { p50Ms: Math.round(Number(r.a50)), p90Ms: Math.round(Number(r.a90)), samples };
      ((r.kind === 'args' ? byArgs : byShape)[r.key] ??= {})[canonicalJson(r.args ?? {})] = stats;
    } else {
      roles[r.key as EstimatedRole] = {
        input: { low: Math.round(Number(r.a50)), high: Math.round(Number(r.a90)) },
        output: { low: Math.round(Number(r.b50)), high: Math.round(Number(r.b90)) },
        samples,
        model: r.model ?? '',
      };
    }
  }
  return { tools, byArgs, byShape, roles };
}
