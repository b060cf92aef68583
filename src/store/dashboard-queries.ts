/**
 * The web dashboard's statements, all read-only except the sign-in links: who may see which run, the run list with
 * its filters, one run with everything it recorded, and a cheap fingerprint of a run that changes when it moves.
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { Range } from '../engine/estimate-history.ts';
import type { Plan } from '../engine/plan/plan-schema.ts';
import type { StoredDecision, StoredRevision, ToolProgress } from '../engine/ports.ts';
import { TERMINAL_STATUSES, type Json } from '../engine/types.ts';
import type { StoredQuestion } from '../engine/server-questions.ts';
import { PgQuestionLog } from './pg-question-log.ts';
import { listDecisions, listRevisions } from './run-history.ts';
import { toJsonText } from './json-text.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/** Who is looking: a person on a platform; an approver sees every run. */
export interface Viewer {
  channel: string;
  id: string;
  name?: string;
  approver: boolean;
}

/** The list's filters (each optional) and its page (1-based). */
export interface RunFilters {
  status?: string;
  /** A requester's id or name (names compared without case). */
  person?: string;
  channel?: string;
  /** A workflow's name: runs its fires started. */
  workflow?: string;
  page: number;
}

/** One line of the run list. */
export interface RunSummary {
  id: string;
  status: string;
  channel: string;
  requester: string;
  request: string;
  workflow: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One try at a step. */
export interface AttemptRow {
  stepId: string;
  attempt: number;
  revision: number;
  status: string;
  /** The arguments it was called with, references resolved (what the store kept as it started). */
  args?: Json;
  output: Json | null;
  error: unknown;
  startedAt: Date;
  endedAt: Date | null;
  durationMs: number | null;
  /** The latest progress its server reported while it ran (null: none). */
  progress: ToolProgress | null;
  /** When it was reported (null: never). */
  progressAt?: Date | null;
}

/** One model call. */
export interface ModelCallRow {
  role: string;
  model: string;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Micro-dollars; null when the model had no price. */
  costMicroUsd: number | null;
  createdAt: Date;
}

/**
 * The duration estimate a run started with (the first `estimated` or `autoApproved` event carrying one) and, once it
 * ended, what its steps took: the first attempt's start to the last attempt's end.
 */
export interface RunEstimate {
  /** Null when no step of the plan had history. */
  durationMs: Range | null;
  noHistory: string[];
  /** Null while the run has not ended (or no step ran). */
  actualMs: number | null;
}

/** One line of the estimates page: an ended run whose estimate had a duration range. */
export interface EstimatedRun {
  id: string;
  request: string;
  status: string;
  createdAt: Date;
  durationMs: Range;
  actualMs: number;
  /**
   * Why what the run took says little about its estimate, or null when it ran undisturbed: it did not complete, a
   * person paused, held, edited or resumed it, Steward restarted under it, it waited for someone to connect an
   * account, or it took under a second (where milliseconds of noise are most of any error).
   */
  disturbed: string | null;
}

/** Under this, a run's error is mostly noise: it is listed, not scored. */
export const SCORED_MIN_MS = 1_000;

/** Why a run's duration does not score its estimate (`EstimatedRun.disturbed`), or null. */
export function disturbance(r: {
  status: string;
  actualMs: number;
  steered: number;
  approvals: number;
  restarted: boolean;
  waited: boolean;
}): string | null {
  if (r.status !== 'completed') return `it ended ${r.status}`;
  if (r.restarted) return 'Steward restarted during it';
  if (r.steered > 0 || r.approvals > 1) return 'a person paused, held or changed it';
  if (r.waited) return 'it waited for an account to be connected';
  if (r.actualMs < SCORED_MIN_MS) return 'it took under a second';
  return null;
}

/** A run a `steward.delegate` step made: the Assistant it ran as and the step that made it. */
export interface ChildRun {
  id: string;
  assistant: string | null;
  /** The parent's step that delegated (null: the delegation is not stored). */
  stepId: string | null;
  status: string;
  request: string;
}

/** Everything the run page shows. */
export interface RunDetail {
  run: RunSummary & {
    revision: number;
    report: string | null;
    tokensUsed: number;
    plan: Plan | null;
    /** The Assistant it ran as (null: Steward's own). */
    assistant?: string | null;
    /** The run whose delegate step made it (null: a person started it). */
    parentRunId?: string | null;
  };
  /** The runs its delegate steps made, oldest first. */
  children?: ChildRun[];
  /** When Steward took the run over after a restart (`recovered` events), oldest first. */
  resumedAt?: Date[];
  estimate: RunEstimate | null;
  revisions: StoredRevision[];
  attempts: AttemptRow[];
  decisions: StoredDecision[];
  modelCalls: ModelCallRow[];
  /** Questions MCP servers asked during the run's steps (migration 0025), oldest first. */
  questions?: StoredQuestion[];
  /** People's ratings of the report (Slack's feedback buttons): each person's last, in the order first given. */
  feedback?: RunFeedback[];
}

/** One person's rating of a run's report. */
export interface RunFeedback {
  by: string;
  rating: 'good' | 'bad';
}

/**
 * Where a conversation lives, as a person who asked in it is taken to be there: a Slack channel (its key is
 * `<channel>:<thread ts>`, or the channel alone), else the whole key (a Discord channel or thread, the console).
 */
function placeOf(channel: Expression<string>, key: Expression<string>) {
  return sql<string>`case when ${channel} = 'slack' then split_part(${key}, ':', 1) else ${key} end`;
}

/** The runs a viewer may see: every run for an approver; else their own, and runs where they made a request. */
function visibleTo(viewer: Viewer) {
  return (eb: ExpressionBuilder<DatabaseSchema, 'runs'>): Expression<SqlBool> => {
    if (viewer.approver) return sql<SqlBool>`true`;
    const mine = eb.and([eb('runs.channel', '=', viewer.channel), eb('runs.requester_id', '=', viewer.id)]);
    const there = eb.exists(
      eb
        .selectFrom('runs as own')
        .select(sql`1`.as('one'))
        .where('own.channel', '=', viewer.channel)
        .where('own.requester_id', '=', viewer.id)
        .whereRef('own.channel', '=', 'runs.channel')
        .where(
          placeOf(sql.ref('own.channel'), sql.ref('own.conversation_key')),
          '=',
          placeOf(sql.ref('runs.channel'), sql.ref('runs.conversation_key')),
        ),
    );
    return eb.or([mine, there]);
  };
}

function runsQuery(db: Db, viewer: Viewer) {
  return db
    .selectFrom('runs')
    .leftJoin('workflow_fires', 'workflow_fires.run_id', 'runs.id')
    .leftJoin('workflows', 'workflows.id', 'workflow_fires.workflow_id')
    .where(visibleTo(viewer));
}

/**
 * `runsQuery` with each run's stored estimate (`est.estimate`, null when none) and, for an ended run, what its plan's
 * attempts took (`took.took_ms`; revision 0 is a plan whose steps started while it streamed, so it counts).
 */
function estimatesQuery(db: Db, viewer: Viewer) {
  return runsQuery(db, viewer)
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('run_events')
          .select(sql<Json>`run_events.payload -> 'estimate'`.as('estimate'))
          .whereRef('run_events.run_id', '=', 'runs.id')
          .where('run_events.type', 'in', ['estimated', 'autoApproved'])
          .where(sql<SqlBool>`jsonb_typeof(run_events.payload -> 'estimate') = 'object'`)
          .orderBy('run_events.id')
          .limit(1)
          .as('est'),
      (join) => join.onTrue(),
    )
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('step_attempts')
          .select(
            sql<
              number | null
            >`(extract(epoch from max(step_attempts.ended_at) - min(step_attempts.started_at)) * 1000)::float8`.as(
              'took_ms',
            ),
          )
          .whereRef('step_attempts.run_id', '=', 'runs.id')
          .where('step_attempts.revision', '>=', 0)
          .where('runs.status', 'in', [...TERMINAL_STATUSES])
          .as('took'),
      (join) => join.onTrue(),
    );
}

/** The ended runs the viewer may see whose estimate had a duration range: the newest `limit`, newest first. */
export async function listEstimatedRuns(db: Db, viewer: Viewer, limit: number): Promise<EstimatedRun[]> {
  const rows = await estimatesQuery(db, viewer)
    .where(sql<SqlBool>`jsonb_typeof(est.estimate -> 'durationMs') = 'object'`)
    .where('took.took_ms', 'is not', null)
    .select(['runs.id', 'runs.request', 'runs.status', 'runs.created_at', 'est.estimate', 'took.took_ms'])
    // What disturbed the run: decisions a person's steering left (any but its one approval), a restart, a wait.
    .select((eb) => [
      eb
        .selectFrom('decisions')
        .select(sql<number>`count(*) filter (where decisions.action <> 'approve')::int`.as('n'))
        .whereRef('decisions.run_id', '=', 'runs.id')
        .where('decisions.accepted', '=', true)
        .as('steered'),
      eb
        .selectFrom('decisions')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('decisions.run_id', '=', 'runs.id')
        .where('decisions.accepted', '=', true)
        .where('decisions.action', '=', 'approve')
        .as('approvals'),
      eb
        .selectFrom('run_events')
        .select(sql<string>`string_agg(distinct run_events.type, ',')`.as('types'))
        .whereRef('run_events.run_id', '=', 'runs.id')
        .where('run_events.type', 'in', ['recovered', 'connectionNeeded'])
        .as('events'),
    ])
    .orderBy('runs.created_at', 'desc')
    .orderBy('runs.id')
    .limit(limit)
    .execute();
  return rows.flatMap((r) => {
    const stored = toEstimate(r.estimate, r.took_ms);
    if (!stored?.durationMs || stored.actualMs === null) return [];
    const { durationMs, actualMs } = stored;
    const events = (r.events ?? '').split(',');
    const disturbed = disturbance({
      status: r.status,
      actualMs,
      steered: Number(r.steered ?? 0),
      approvals: Number(r.approvals ?? 0),
      restarted: events.includes('recovered'),
      waited: events.includes('connectionNeeded'),
    });
    return [
      { id: r.id, request: r.request, status: r.status, createdAt: r.created_at, durationMs, actualMs, disturbed },
    ];
  });
}

/** The stored estimate's duration part, read defensively: it is JSON an older version may have written. */
function toEstimate(estimate: Json | null, tookMs: number | null): RunEstimate | null {
  if (!estimate || typeof estimate !== 'object' || Array.isArray(estimate)) return null;
  const range = estimate.durationMs;
  const durationMs =
    range && typeof range === 'object' && !Array.isArray(range) && typeof range.low === 'number'
      ? { low: range.low, high: typeof range.high === 'number' ? range.high : range.low }
      : null;
  const noHistory = Array.isArray(estimate.noHistory)
    ? estimate.noHistory.filter((t): t is string => typeof t === 'string')
    : [];
  return { durationMs, noHistory, actualMs: tookMs === null ? null : Math.max(0, Number(tookMs)) };
}

/** A page of the runs the viewer may see, newest first, and whether there are more. */
export async function listVisibleRuns(
  db: Db,
  viewer: Viewer,
  filters: RunFilters,
  pageSize: number,
): Promise<{ runs: RunSummary[]; more: boolean }> {
  let query = runsQuery(db, viewer);
  if (filters.status) query = query.where('runs.status', '=', filters.status);
  if (filters.channel) query = query.where('runs.channel', '=', filters.channel);
  if (filters.workflow) query = query.where('workflows.name', '=', filters.workflow);
  const person = filters.person;
  if (person)
    query = query.where((eb) =>
      eb.or([
        eb('runs.requester_id', '=', person),
        eb(eb.fn('lower', ['runs.requester_name']), '=', person.toLowerCase()),
      ]),
    );
  const page = Math.max(1, Math.floor(filters.page));
  const rows = await query
    .select(['runs.id', 'runs.status', 'runs.channel', 'runs.requester_id', 'runs.requester_name', 'runs.request'])
    .select(['runs.created_at', 'runs.updated_at', 'workflows.name as workflow'])
    .orderBy('runs.created_at', 'desc')
    .orderBy('runs.id')
    .limit(pageSize + 1)
    .offset((page - 1) * pageSize)
    .execute();
  return { runs: rows.slice(0, pageSize).map(toSummary), more: rows.length > pageSize };
}

function toSummary(r: {
  id: string;
  status: string;
  channel: string;
  requester_id: string;
  requester_name: string | null;
  request: string;
  workflow: string | null;
  created_at: Date;
  updated_at: Date;
}): RunSummary {
  return {
    id: r.id,
    status: r.status,
    channel: r.channel,
    requester: r.requester_name ?? r.requester_id,
    request: r.request,
    workflow: r.workflow,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Each person's last rating of a run's report (`feedback` events): a later press replaces their earlier one. */
async function feedbackOf(db: Db, runId: string): Promise<RunFeedback[]> {
  const rows = await db
    .selectFrom('run_events')
    .select('payload')
    .where('run_id', '=', runId)
    .where('type', '=', 'feedback')
    .orderBy('id')
    .execute();
  const last = new Map<string, RunFeedback>();
  for (const { payload } of rows) {
    const p = payload as { rating?: unknown; by?: { id?: unknown; channel?: unknown; name?: unknown } };
    if ((p.rating !== 'good' && p.rating !== 'bad') || typeof p.by?.id !== 'string') continue;
    const name = typeof p.by.name === 'string' ? p.by.name : p.by.id;
    last.set(`${String(p.by.channel)}:${p.by.id}`, { by: name, rating: p.rating });
  }
  return [...last.values()];
}

/** The runs a run's delegate steps made, with the step each came from (a delegation's id is `<run>/<step>`). */
async function childrenOf(db: Db, runId: string): Promise<ChildRun[]> {
  const rows = await db
    .selectFrom('runs')
    .leftJoin('delegations', 'delegations.child_run_id', 'runs.id')
    .select(['runs.id', 'runs.assistant', 'runs.status', 'runs.request', 'delegations.id as delegation'])
    .where('runs.parent_run_id', '=', runId)
    .orderBy('runs.created_at')
    .orderBy('runs.id')
    .execute();
  const prefix = `${runId}/`;
  return rows.map((r) => ({
    id: r.id,
    assistant: r.assistant,
    stepId: r.delegation?.startsWith(prefix) ? r.delegation.slice(prefix.length) : null,
    status: r.status,
    request: r.request,
  }));
}

/** The run with everything it recorded, or null when it does not exist or the viewer may not see it. */
export async function runDetail(db: Db, viewer: Viewer, runId: string): Promise<RunDetail | null> {
  const row = await estimatesQuery(db, viewer)
    .leftJoin('plan_revisions', (join) =>
      join.onRef('plan_revisions.run_id', '=', 'runs.id').onRef('plan_revisions.revision', '=', 'runs.revision'),
    )
    .where('runs.id', '=', runId)
    .select(['runs.id', 'runs.status', 'runs.channel', 'runs.requester_id', 'runs.requester_name', 'runs.request'])
    .select(['runs.created_at', 'runs.updated_at', 'workflows.name as workflow', 'runs.revision', 'runs.report'])
    .select(['runs.tokens_used', 'plan_revisions.plan', 'est.estimate', 'took.took_ms'])
    .select(['runs.assistant', 'runs.parent_run_id'])
    .executeTakeFirst();
  if (!row) return null;
  const [revisions, attempts, decisions, modelCalls, questions, feedback, children, resumed] = await Promise.all([
    listRevisions(db, runId),
    db
      .selectFrom('step_attempts')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('started_at')
      .orderBy('id')
      .execute(),
    listDecisions(db, runId),
    db.selectFrom('llm_usage').selectAll().where('run_id', '=', runId).orderBy('id').execute(),
    new PgQuestionLog(db).questionsOf(runId),
    feedbackOf(db, runId),
    childrenOf(db, runId),
    db
      .selectFrom('run_events')
      .select('created_at')
      .where('run_id', '=', runId)
      .where('type', '=', 'recovered')
      .orderBy('id')
      .execute(),
  ]);
  return {
    run: {
      ...toSummary(row),
      revision: row.revision,
      report: row.report,
      tokensUsed: row.tokens_used,
      plan: (row.plan ?? null) as Plan | null,
      assistant: row.assistant,
      parentRunId: row.parent_run_id,
    },
    children,
    resumedAt: resumed.map((r) => r.created_at),
    estimate: toEstimate(row.estimate, row.took_ms),
    questions,
    feedback,
    revisions,
    attempts: attempts.map((a) => ({
      stepId: a.step_id,
      attempt: a.attempt,
      revision: a.revision,
      status: a.status,
      args: a.args,
      output: a.output,
      error: a.error,
      startedAt: a.started_at,
      endedAt: a.ended_at,
      durationMs: a.duration_ms,
      progress: (a.progress ?? null) as ToolProgress | null,
      progressAt: a.progress_at,
    })),
    decisions,
    modelCalls: modelCalls.map((c) => ({
      role: c.role,
      model: c.model,
      inputTokens: c.input_tokens,
      cachedInputTokens: c.cached_input_tokens,
      outputTokens: c.output_tokens,
      costMicroUsd: c.cost_micro_usd === null ? null : Number(c.cost_micro_usd),
      createdAt: c.created_at,
    })),
  };
}

/**
 * A fingerprint of the run's state (its row, its attempts, its decisions, its model calls) that changes whenever the
 * page would; null when the run is gone. Read every second per open page, so it is one small statement.
 */
export async function runFingerprint(db: Db, runId: string): Promise<string | null> {
  const row = await db
    .selectFrom('runs')
    .where('runs.id', '=', runId)
    .select((eb) => [
      'runs.status',
      'runs.revision',
      'runs.updated_at',
      eb
        .selectFrom('step_attempts')
        .whereRef('run_id', '=', 'runs.id')
        // A server's progress moves the page too (written at most once a second per call).
        .select(sql<string>`count(*) || ':' || count(ended_at) || ':' || coalesce(max(progress_at)::text, '')`.as('n'))
        .as('attempts'),
      eb
        .selectFrom('decisions')
        .whereRef('run_id', '=', 'runs.id')
        .select(sql<string>`count(*)::text`.as('n'))
        .as('decisions'),
      eb
        .selectFrom('llm_usage')
        .whereRef('run_id', '=', 'runs.id')
        .select(sql<string>`count(*)::text`.as('n'))
        .as('calls'),
    ])
    .executeTakeFirst();
  if (!row) return null;
  return [row.status, row.revision, new Date(row.updated_at).getTime(), row.attempts, row.decisions, row.calls].join(
    '|',
  );
}

/** The person a sign-in link signs in. */
export interface LinkPerson {
  channel: string;
  id: string;
  name: string | null;
  /** The roles named as approvers that they held when they asked for the link. */
  approverRoles: string[];
}

/** Stores a new sign-in link by its token's hash. */
export async function insertDashboardLink(
  db: Db,
  link: LinkPerson & { tokenHash: string; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('dashboard_links')
    .values({
      token_hash: link.tokenHash,
      channel: link.channel,
      user_id: link.id,
      user_name: link.name,
      approver_roles: toJsonText(link.approverRoles),
      expires_at: link.expiresAt,
    })
    .execute();
}

/**
 * Uses a sign-in link: one conditional statement, so of two uses at once only one gets the person; an expired, used
 * or unknown link gets null alike.
 */
export async function consumeDashboardLink(db: Db, tokenHash: string, at: Date): Promise<LinkPerson | null> {
  const row = await db
    .updateTable('dashboard_links')
    .set({ used_at: at })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .returning(['channel', 'user_id', 'user_name', 'approver_roles'])
    .executeTakeFirst();
  if (!row) return null;
  const roles = Array.isArray(row.approver_roles) ? row.approver_roles.filter((r) => typeof r === 'string') : [];
  return { channel: row.channel, id: row.user_id, name: row.user_name, approverRoles: roles };
}
