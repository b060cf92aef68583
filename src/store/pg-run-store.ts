/**
 * `RunStore` over Kysely, for PostgreSQL and PGlite alike. The database judges every race: state changes and
 * limits are single conditional UPDATEs, and the caller learns from the returned row whether it won.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { StewardError } from '../engine/errors.ts';
import type { Plan } from '../engine/plan/plan-schema.ts';
import type {
  ClaimedRun,
  Conversation,
  EarlierOutput,
  EarlierTurn,
  GrantedCap,
  PinnedTool,
  PrunedLedgers,
  RunStore,
  StepAttemptWrite,
  StepsRecorded,
  StoredRun,
  StoredStepAttempt,
  TokenBudgets,
  TokenRequest,
  TokenSettlement,
  UnreportedRun,
} from '../engine/ports.ts';
import {
  ACTIVE_STATUSES,
  TERMINAL_STATUSES,
  type Actor,
  type Json,
  type ReviewPreference,
  type RiskLevel,
  type RunStatus,
} from '../engine/types.ts';
import type { InterventionSignal } from '../engine/plan/breakpoint-suggestions.ts';
import type { Breakpoint } from '../engine/plan/breakpoints.ts';
import type { RunSpend, SpendRequest, SpendWindows } from '../engine/spend.ts';
import { toJsonText, toStorableText } from './json-text.ts';
import { countRunsAwaitingOwner, countRunsByStatus } from './run-counts.ts';
import * as history from './run-history.ts';
import * as leases from './run-leases.ts';
import { deadLocalOwners, newOwnerId } from './process-identity.ts';
import * as reports from './run-reports.ts';
import { listRunsOf } from './run-lists.ts';
import * as safety from './run-safety.ts';
import * as spendLedger from './spend-ledger.ts';
import * as steering from './run-steering.ts';
import * as steps from './run-steps.ts';
import * as turns from './run-turns.ts';
import { fromRunRow, fromRunRowWithPreference, fromStepAttemptRow, type RunRow } from './run-rows.ts';
import type { DatabaseSchema } from './schema.ts';
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from './store-retry.ts';

type Port<K extends keyof RunStore> = Parameters<RunStore[K]>;
type TransitionOptions = NonNullable<Port<'transition'>[3]>;

/**
 * Durable run state in PostgreSQL or PGlite; failures surface as `StewardError` (`store_failed`, or `config`).
 * Transient failures are retried (see `store-retry.ts`), so every write here is safe to repeat: idempotent by its
 * key, or carrying an operation id that lets a repeat find its own earlier effect.
 */
export class PgRunStore implements RunStore {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly retry: RetryPolicy;
  /** This process, as named in the leases it holds. */
  readonly owner: string;

  /** Told of each model call's usage once it is settled (for the operator's metrics). */
  private readonly onSettled: ((usage: NonNullable<Port<'settleTokens'>[0]['usage']>) => void) | undefined;

  constructor(
    db: Kysely<DatabaseSchema>,
    options: {
      retry?: Partial<RetryPolicy>;
      owner?: string;
      onSettled?: (usage: NonNullable<Port<'settleTokens'>[0]['usage']>) => void;
    } = {},
  ) {
    this.db = db;
    this.onSettled = options.onSettled;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.owner = options.owner ?? newOwnerId();
  }

  /** Runs one operation, translating failures and retrying the transient ones. */
  private attempt<T>(action: string, work: () => Promise<T>): Promise<T> {
    return withRetries(action, work, this.retry);
  }

  async createRun(run: Port<'createRun'>[0]): Promise<boolean> {
    // With a mention, one transaction: its claim (whose op is the run's id, so a repeat of this very write claims it
    // again), then the run. Without, the one statement that stores the run.
    const { deliveryId } = run;
    if (!deliveryId) return this.attempt('createRun', () => this.insertRun(this.db, run).then(() => true));
    return this.attempt('createRun', () =>
      this.db.transaction().execute(async (trx) => {
        if (!(await safety.claimInbound(trx, run.id, deliveryId, run.at))) return false;
        await this.insertRun(trx, run);
        return true;
      }),
    );
  }

  async createRunUnlessActive(
    run: Port<'createRun'>[0],
    options: Port<'createRunUnlessActive'>[1] = {},
  ): Promise<{ created: boolean; active?: StoredRun; run?: StoredRun; earlierTurns?: EarlierTurn[] }> {
    const { deliveryId } = run;
    const limit = options.earlierTurns ?? 0;
    if (!deliveryId) return this.attempt('createRun', () => this.insertRunUnlessActive(this.db, run, limit));
    return this.attempt('createRun', () =>
      this.db.transaction().execute(async (trx) => {
        if (!(await safety.claimInbound(trx, run.id, deliveryId, run.at))) return { created: false };
        return this.insertRunUnlessActive(trx, run, limit);
      }),
    );
  }

  /**
   * One statement: the conversation's active run, else the run with its `requested` event and its spend windows (as
   * `insertRun`). A repeat of this very write (its answer lost) finds its own run and counts it created.
   */
  private async insertRunUnlessActive(
    db: Kysely<DatabaseSchema>,
    run: Port<'createRun'>[0],
    limit: number,
  ): Promise<{ created: boolean; active?: StoredRun; run?: StoredRun; earlierTurns?: EarlierTurn[] }> {
    const { conversation, requester } = run;
    const active = this.selectRuns()
      .where('runs.channel', '=', conversation.channel)
      .where('runs.conversation_key', '=', conversation.key)
      .where('runs.status', 'in', ACTIVE_STATUSES)
      .where('runs.id', '!=', run.id)
      .orderBy(sql`runs.parent_run_id is not null and runs.status = 'awaiting_review'`, 'desc')
      .orderBy(sql`runs.parent_run_id is null`, 'desc')
      .orderBy('runs.created_at', 'desc')
      .limit(1);
    const request = toStorableText(run.request);
    const lease = run.leaseMs === undefined ? null : run.leaseMs;
    const payload = toJsonText({ actor: requester.id, channel: requester.channel });
    // The turns are read only for a run created now (a repeat of this write reads them again: before its own run).
    const earlier =
      limit > 0 ? sql`(SELECT json_agg(t) FROM (${turns.earlierTurnsBefore(db, run, limit)}) t)` : sql`NULL`;
    type TurnRow = Parameters<typeof turns.toEarlierTurn>[0];
    type Found = RunRow & {
      created: boolean;
      mine: boolean;
      earlier_turns: TurnRow[] | null;
      requester_review: string | null;
    };
    // The row found (the active run), or the one created (no plan yet): at most one of the two exists.
    const { rows } = await sql<Found>`
      WITH active AS (${active}), created AS (
        INSERT INTO runs (id, status, channel, conversation_key, requester_id, requester_name, request, assistant,
          parent_run_id, place, created_at, updated_at, owner, lease_expires_at)
        SELECT ${run.id}, 'planning', ${conversation.channel}, ${conversation.key}, ${requester.id},
          ${requester.name ?? null}, ${request}, ${run.assistant ?? null}, ${run.parentRunId ?? null},
          ${run.place ?? null}, ${run.at}::timestamptz, ${run.at}::timestamptz,
          CASE WHEN ${lease}::integer IS NULL THEN NULL ELSE ${this.owner} END,
          now() + ${lease}::integer * interval '1 millisecond'
        WHERE NOT EXISTS (SELECT 1 FROM active)
        ON CONFLICT (id) DO NOTHING
        RETURNING *
      ), opened AS (
        INSERT INTO spend_totals (scope, key, period, starts)
        SELECT w.scope, w.key, w.period, w.starts FROM (${spendLedger.newRunWindows(run)}) w
        WHERE EXISTS (SELECT 1 FROM created)
        ON CONFLICT (scope, key, period, starts) DO NOTHING
      ), requested AS (
        INSERT INTO run_events (run_id, type, payload, created_at)
        SELECT id, 'requested', ${payload}::jsonb, ${run.at}::timestamptz FROM created
      )
      SELECT EXISTS (SELECT 1 FROM created) AS created,
        EXISTS (
          SELECT 1 FROM runs WHERE id = ${run.id} AND channel = ${conversation.channel}
            AND conversation_key = ${conversation.key} AND requester_id = ${requester.id} AND request = ${request}
            AND created_at = ${run.at}::timestamptz
        ) AS mine,
        CASE WHEN NOT EXISTS (SELECT 1 FROM active) THEN ${earlier} END AS earlier_turns,
        (SELECT review FROM user_preferences WHERE channel = ${requester.channel} AND user_id = ${requester.id})
          AS requester_review,
        found.*
      FROM (SELECT 1) one LEFT JOIN (
        SELECT * FROM active UNION ALL SELECT created.*, NULL::jsonb AS plan FROM created
      ) found ON true`.execute(db);
    const row = rows[0];
    if (row?.created || row?.mine) {
      // A repeat of the write finds its run by neither: it is read again by whoever needs it.
      const stored = row.created ? { run: fromRunRowWithPreference(row) } : {};
      if (limit === 0) return { created: true, ...stored };
      return { created: true, ...stored, earlierTurns: (row.earlier_turns ?? []).map(turns.toEarlierTurn) };
    }
    if (row?.id) return { created: false, active: fromRunRow(row) };
    throw new StewardError('store_failed', `a run with id ${run.id} already exists`);
  }

  /**
   * One statement: the run, its `requested` event, and the spend windows its model calls will count in (opened at
   * zero where missing, so its first call's reservation finds them to lock); a repeat of this very insert (its answer
   * lost) is fine.
   */
  private async insertRun(db: Kysely<DatabaseSchema>, run: Port<'createRun'>[0]): Promise<void> {
    const row = {
      id: run.id,
      status: 'planning',
      channel: run.conversation.channel,
      conversation_key: run.conversation.key,
      requester_id: run.requester.id,
      requester_name: run.requester.name ?? null,
      request: toStorableText(run.request),
      assistant: run.assistant ?? null,
      parent_run_id: run.parentRunId ?? null,
      place: run.place ?? null,
      created_at: run.at,
      updated_at: run.at,
      ...(run.leaseMs === undefined
        ? {}
        : { owner: this.owner, lease_expires_at: sql<Date>`now() + ${run.leaseMs} * interval '1 millisecond'` }),
    };
    const payload = toJsonText({ actor: run.requester.id, channel: run.requester.channel });
    const inserted = await db
      .with('created', (q) =>
        q
          .insertInto('runs')
          .values(row)
          .onConflict((oc) => oc.column('id').doNothing())
          .returning('id'),
      )
      .with('opened', (q) =>
        q
          .insertInto('spend_totals')
          .columns(['scope', 'key', 'period', 'starts'])
          .expression(spendLedger.newRunWindows(run))
          .onConflict((oc) => oc.columns(['scope', 'key', 'period', 'starts']).doNothing()),
      )
      .insertInto('run_events')
      .columns(['run_id', 'type', 'payload', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('created')
          .select((r) => [
            r.ref('created.id').as('run_id'),
            sql.lit('requested').as('type'),
            sql`${payload}::jsonb`.as('payload'),
            sql`${row.created_at}::timestamptz`.as('created_at'),
          ]),
      )
      .returning('run_id')
      .executeTakeFirst();
    if (inserted !== undefined) return;
    // The id is taken: fine if by this very write, repeated after its answer was lost; refused otherwise.
    const same = await db
      .selectFrom('runs')
      .select('id')
      .where('id', '=', row.id)
      .where('channel', '=', row.channel)
      .where('conversation_key', '=', row.conversation_key)
      .where('requester_id', '=', row.requester_id)
      .where('request', '=', row.request)
      .where('created_at', '=', row.created_at)
      .executeTakeFirst();
    if (same === undefined) throw new StewardError('store_failed', `a run with id ${row.id} already exists`);
  }

  /** One statement: the revision (never overwritten; a repeat of this very save is fine) and the run's pointer. */
  async saveRevision(
    runId: string,
    revision: number,
    plan: Plan,
    reason: string,
    at: Date,
    settle?: TokenSettlement & { op: string },
  ): Promise<StoredRun> {
    const planText = toJsonText(plan);
    return this.attempt('saveRevision', async () => {
      const saved = sql`(EXISTS (SELECT 1 FROM inserted) OR EXISTS (SELECT 1 FROM same))`;
      // The run's row is written once: its counters move by the settlement whatever becomes of the revision.
      const counters = settle ? sql`${safety.settledCounters(settle)},` : sql``;
      const run = sql`
          UPDATE runs SET ${counters}
            revision = CASE WHEN ${saved} THEN ${revision}::integer ELSE runs.revision END,
            updated_at = CASE WHEN ${saved} THEN ${at}::timestamptz ELSE runs.updated_at END
          WHERE id = ${runId} AND (${settle !== undefined} OR ${saved})
          RETURNING runs.*, ${saved} AS saved`;
      const ctes = settle ? safety.settlement(settle.op, settle, run) : sql`run AS (${run})`;
      // The run's row as the move left it (a data-modifying CTE's rows are seen only through its RETURNING), with
      // the plan just saved, which is its current revision's, and its requester's review preference.
      const { rows } = await sql<RunRow & { requester_review: string | null }>`
        WITH inserted AS (
          INSERT INTO plan_revisions (run_id, revision, plan, reason, created_at)
          VALUES (${runId}, ${revision}, ${planText}::jsonb, ${toStorableText(reason)}, ${at})
          ON CONFLICT (run_id, revision) DO NOTHING
          RETURNING id
        ), same AS (
          SELECT id FROM plan_revisions WHERE run_id = ${runId} AND revision = ${revision} AND plan = ${planText}::jsonb
        ), ${ctes}
        SELECT run.*, ${planText}::jsonb AS plan, p.review AS requester_review
        FROM run LEFT JOIN user_preferences p ON p.channel = run.channel AND p.user_id = run.requester_id
        WHERE run.saved`.execute(this.db);
      const row = rows[0];
      // A revision is never overwritten: a second save of it is refused unless it is this write, repeated.
      if (!row) throw new StewardError('store_failed', `revision ${revision} of run ${runId} is already stored`);
      return fromRunRowWithPreference(row);
    });
  }

  /**
   * One statement in the usual case: the conditional move, with what goes with it (the approved risk, the note that
   * a report is owed, an event). Only a move that did not apply looks at the lease, to tell a lost race from a lost run.
   */
  async transition(
    runId: string,
    from: readonly RunStatus[],
    to: RunStatus,
    options: TransitionOptions = {},
  ): Promise<boolean> {
    if (from.length === 0) return false;
    const op = randomUUID();
    const { fence, revision, event } = options;
    const at = options.at ?? null;
    const pins = toJsonText(options.pins ?? []);
    const report = options.report === undefined ? null : toStorableText(options.report);
    return this.attempt('transition', async () => {
      const { rows } = await sql<{ moved: number }>`
        WITH moved AS (
          UPDATE runs SET status = ${to}, status_op = ${op}, updated_at = coalesce(${at}::timestamptz, now()),
            approved_risk = coalesce(${options.approvedRisk ?? null}, approved_risk),
            report_due = report_due OR ${options.reportDue ?? false},
            spend_exempt = spend_exempt OR ${options.spendExempt ?? false},
            report = coalesce(${report}, report)
          WHERE id = ${runId} AND (${fence ?? null}::integer IS NULL OR (owner = ${this.owner} AND fence = ${fence ?? null}::integer))
            -- A repeat of a transition that did apply finds its own operation id, not a lost race.
            AND ((status = ANY(${[...from]}::text[]) AND (${revision ?? null}::integer IS NULL OR revision = ${revision ?? null}::integer))
              OR status_op = ${op})
          RETURNING id
        ), owed AS (
          -- The report is owed even when the move lost its race: whoever ended the run must still report it.
          UPDATE runs SET report_due = true WHERE id = ${runId} AND ${options.reportDue ?? false} AND NOT EXISTS (SELECT 1 FROM moved)
        ), pinned AS (
          INSERT INTO tool_pins (run_id, tool, fingerprint, definition, created_at)
          SELECT moved.id, p.tool, p.fingerprint, p.definition, coalesce(${at}::timestamptz, now())
          FROM moved, jsonb_to_recordset(${pins}::jsonb) AS p(tool text, fingerprint text, definition jsonb)
          ON CONFLICT (run_id, tool) DO UPDATE SET fingerprint = excluded.fingerprint, definition = excluded.definition
        ), noted AS (
          INSERT INTO run_events (run_id, type, payload, op, created_at)
          SELECT id, ${event?.type ?? null}, ${event === undefined ? null : toJsonText(event.payload)}::jsonb, ${op},
            coalesce(${at}::timestamptz, now())
          FROM moved WHERE ${event !== undefined}
          ON CONFLICT (op) WHERE op IS NOT NULL DO NOTHING
        )
        SELECT count(*)::integer AS moved FROM moved`.execute(this.db);
      if ((rows[0]?.moved ?? 0) > 0) return true;
      if (fence !== undefined) await this.checkFence(runId, fence);
      return false;
    });
  }

  async takeAmendmentRound(runId: string, cap: number): Promise<number | null> {
    const op = randomUUID();
    return this.attempt('takeAmendmentRound', async () => {
      // Concurrent callers queue on the row lock and re-check the WHERE against the winner's row.
      const row = await this.db
        .updateTable('runs')
        .set({
          // A repeat of a round that was taken counts it once.
          amendment_rounds: sql`case when amendment_op = ${op} then amendment_rounds else amendment_rounds + 1 end`,
          amendment_op: op,
        })
        .where('id', '=', runId)
        .where((eb) => eb.or([eb('amendment_rounds', '<', cap), eb('amendment_op', '=', op)]))
        .returning('amendment_rounds')
        .executeTakeFirst();
      return row?.amendment_rounds ?? null;
    });
  }

  async recordDecision(d: Port<'recordDecision'>[0]): Promise<void> {
    const op = randomUUID();
    await this.attempt('recordDecision', () =>
      this.db
        .insertInto('decisions')
        .values({
          run_id: d.runId,
          revision: d.revision,
          actor_id: d.actor.id,
          actor_name: d.actor.name ?? null,
          channel: d.actor.channel,
          action: d.action,
          accepted: d.accepted,
          note: d.note === undefined ? null : toStorableText(d.note),
          op,
          created_at: d.at,
        })
        .onConflict((oc) => oc.column('op').where('op', 'is not', null).doNothing())
        .execute(),
    );
  }

  /** One statement: the attempt row and its `stepStarted` event, under the run's lease when `fence` is given. */
  recordStepStarted(a: Port<'recordStepStarted'>[0]): Promise<void> {
    const { fence, runId, ...start } = a;
    return this.recordSteps({ runId, fence, ended: [], started: [start] }).then(() => undefined);
  }

  /** One statement: the attempt's end and its `stepEnded` event, under the run's lease when `fence` is given. */
  recordStepEnded(a: Port<'recordStepEnded'>[0]): Promise<void> {
    const { fence, runId, ...end } = a;
    return this.recordSteps({ runId, fence, ended: [end], started: [] }).then(() => undefined);
  }

  /**
   * Ends and starts in one statement. With a fence it first locks the run's row (FOR SHARE) under this owner and
   * fence, so a claim by another process is ordered before or after it: either this write finds the run claimed
   * away and writes nothing, or the claimer sees these attempts when it restores the run.
   */
  recordSteps(w: StepAttemptWrite): Promise<StepsRecorded> {
    return this.attempt('recordSteps', () => steps.recordSteps(this.db, this.owner, w));
  }

  async recordLlmUsage(u: Port<'recordLlmUsage'>[0]): Promise<void> {
    const op = randomUUID();
    await this.attempt('recordLlmUsage', () =>
      this.db
        .insertInto('llm_usage')
        .values({
          run_id: u.runId,
          role: u.role,
          model: u.model,
          input_tokens: u.inputTokens,
          output_tokens: u.outputTokens,
          cached_input_tokens: u.cachedInputTokens ?? 0,
          cost_micro_usd: u.costMicroUsd ?? null,
          op,
          created_at: u.at,
        })
        .onConflict((oc) => oc.column('op').where('op', 'is not', null).doNothing())
        .execute(),
    );
  }

  async setRoute(runId: string, route: Port<'setRoute'>[1], at: Date): Promise<void> {
    await this.attempt('setRoute', () =>
      this.db.updateTable('runs').set({ route, updated_at: at }).where('id', '=', runId).execute(),
    );
  }

  async appendEvent(runId: string, type: string, payload: Port<'appendEvent'>[2], at: Date): Promise<void> {
    const op = randomUUID();
    await this.attempt('appendEvent', () =>
      this.db
        .insertInto('run_events')
        .values({ run_id: runId, type, payload: toJsonText(payload), op, created_at: at })
        .onConflict((oc) => oc.column('op').where('op', 'is not', null).doNothing())
        .execute(),
    );
  }

  async setReport(runId: string, report: string, at: Date): Promise<void> {
    await this.attempt('setReport', () =>
      this.db
        .updateTable('runs')
        .set({ report: toStorableText(report), updated_at: at })
        .where('id', '=', runId)
        .execute(),
    );
  }

  /** The run, with its requester's review preference read in the same statement (so no flow reads it again). */
  async getRun(runId: string): Promise<StoredRun | null> {
    const row = await this.attempt('getRun', () =>
      this.selectRuns()
        .leftJoin('user_preferences', (join) =>
          join
            .onRef('user_preferences.channel', '=', 'runs.channel')
            .onRef('user_preferences.user_id', '=', 'runs.requester_id'),
        )
        .select('user_preferences.review as requester_review')
        .where('runs.id', '=', runId)
        .executeTakeFirst(),
    );
    if (!row) return null;
    return fromRunRowWithPreference(row);
  }

  async recordProgress(a: Port<'recordProgress'>[0]): Promise<void> {
    const progress = toJsonText({
      progress: a.progress.progress,
      ...(a.progress.total !== undefined && { total: a.progress.total }),
      ...(a.progress.message !== undefined && { message: a.progress.message.slice(0, 500) }),
    });
    await this.attempt('recordProgress', () =>
      this.db
        .updateTable('step_attempts')
        .set({ progress, progress_at: a.at })
        .where('run_id', '=', a.runId)
        .where('step_id', '=', a.stepId)
        .where('attempt', '=', a.attempt)
        .where('ended_at', 'is', null)
        .execute(),
    );
  }

  async listStepAttempts(runId: string): Promise<StoredStepAttempt[]> {
    const rows = await this.attempt('listStepAttempts', () =>
      this.db.selectFrom('step_attempts').selectAll().where('run_id', '=', runId).orderBy('id').execute(),
    );
    return rows.map(fromStepAttemptRow);
  }

  /** Runs not finished yet, oldest first (for inspection and tests; takeovers use `claimOrphanedRuns`). */
  async listUnfinishedRuns(): Promise<StoredRun[]> {
    const rows = await this.attempt('listUnfinishedRuns', () =>
      this.selectRuns()
        .where('runs.status', 'in', ACTIVE_STATUSES)
        .orderBy('runs.created_at')
        .orderBy('runs.id')
        .execute(),
    );
    return rows.map(fromRunRow);
  }

  markReportDue(runId: string, at: Date): Promise<void> {
    return this.attempt('markReportDue', () => reports.setReportDue(this.db, runId, true, at));
  }

  /** One statement: the report stored (or the one that stands) and, with `fence`, whether this process still holds the run. */
  /** With `settle`, the model call that wrote the report is settled by the same statement. */
  async storeReport(
    runId: string,
    report: string,
    status: RunStatus,
    at: Date,
    fence?: number,
    settle?: Port<'storeReport'>[5],
  ): Promise<string> {
    const stored = await this.attempt('storeReport', () =>
      settle
        ? reports.storeReportSettling(this.db, runId, report, status, at, settle.op, settle)
        : reports.storeReport(this.db, runId, report, status, at),
    );
    // Once, after the write held (fenced out or not: the call was made, and is settled either way).
    if (settle?.usage) this.onSettled?.(settle.usage);
    if (fence !== undefined && (stored.owner !== this.owner || stored.fence !== fence)) throw steps.fencedOut(runId);
    return stored.report;
  }

  markReportSent(runId: string, at: Date): Promise<void> {
    return this.attempt('markReportSent', () => reports.setReportDue(this.db, runId, false, at));
  }

  /**
   * Runs that ended still owing their report, found through the partial index on `report_due` (for inspection and
   * tests; takeovers use `claimOrphanedRuns`).
   */
  async listUnreportedRuns(): Promise<UnreportedRun[]> {
    const rows = await this.attempt('listUnreportedRuns', () =>
      this.selectRuns()
        .where('runs.report_due', '=', true)
        .where('runs.status', 'in', TERMINAL_STATUSES)
        .orderBy('runs.created_at')
        .orderBy('runs.id')
        .execute(),
    );
    return rows.map((row) => ({ ...fromRunRow(row), report: row.report }));
  }

  /** Every plan revision of a run, oldest first. */
  listRevisions(runId: string): Promise<history.StoredRevision[]> {
    return this.attempt('listRevisions', () => history.listRevisions(this.db, runId));
  }

  /** Every decision on a run, in the order recorded. */
  listDecisions(runId: string): Promise<history.StoredDecision[]> {
    return this.attempt('listDecisions', () => history.listDecisions(this.db, runId));
  }

  /** A run's event log in append order; with `types`, only the events of those types. */
  listEvents(runId: string, types?: readonly string[]): Promise<history.StoredEvent[]> {
    return this.attempt('listEvents', () => history.listEvents(this.db, runId, types));
  }

  /** Calls and tokens a run used, in total and per model role. */
  llmUsageForRun(runId: string): Promise<history.LlmUsageTotals> {
    return this.attempt('llmUsageForRun', () => history.llmUsageForRun(this.db, runId));
  }

  async findActiveRun(conversation: Conversation): Promise<StoredRun | null> {
    const row = await this.attempt('findActiveRun', () =>
      this.selectRuns()
        .where('runs.channel', '=', conversation.channel)
        .where('runs.conversation_key', '=', conversation.key)
        .where('runs.status', 'in', ACTIVE_STATUSES)
        // A run a plan delegated to shares its parent's thread. A reply goes to the run whose card waits for the person,
        // else to the run the person started (not to a child working out of sight).
        .orderBy(sql`runs.parent_run_id is not null and runs.status = 'awaiting_review'`, 'desc')
        .orderBy(sql`runs.parent_run_id is null`, 'desc')
        .orderBy('runs.created_at', 'desc')
        .executeTakeFirst(),
    );
    return row ? fromRunRow(row) : null;
  }

  setApprovedRisk(runId: string, risk: RiskLevel, at: Date): Promise<void> {
    return this.attempt('setApprovedRisk', () => steering.setApprovedRisk(this.db, runId, risk, at));
  }

  setReviewDue(runId: string, dueAt: Date): Promise<void> {
    return this.attempt('setReviewDue', async () => {
      await this.db.updateTable('runs').set({ review_due_at: dueAt }).where('id', '=', runId).execute();
    });
  }

  setBreakpoints(runId: string, breakpoints: readonly Breakpoint[], at: Date): Promise<void> {
    return this.attempt('setBreakpoints', () => steering.setBreakpoints(this.db, runId, breakpoints, at));
  }

  getReviewPreference(actor: Actor): Promise<ReviewPreference | null> {
    return this.attempt('getReviewPreference', () => steering.getReviewPreference(this.db, actor));
  }

  setReviewPreference(actor: Actor, preference: ReviewPreference, at: Date): Promise<void> {
    return this.attempt('setReviewPreference', () => steering.setReviewPreference(this.db, actor, preference, at));
  }

  listRunsOf(actor: Actor, options: { activeOnly: boolean; limit: number }): Promise<StoredRun[]> {
    return this.attempt('listRunsOf', () => listRunsOf(this.db, actor, options));
  }

  interventionSignals(actor: Actor, tools: string[], since: Date): Promise<Record<string, InterventionSignal>> {
    return this.attempt('interventionSignals', () => steering.interventionSignals(this.db, actor, tools, since));
  }

  getBreakpointSuggestions(actor: Actor): Promise<boolean> {
    return this.attempt('getBreakpointSuggestions', () => steering.getBreakpointSuggestions(this.db, actor));
  }

  setBreakpointSuggestions(actor: Actor, on: boolean, at: Date): Promise<void> {
    return this.attempt('setBreakpointSuggestions', () => steering.setBreakpointSuggestions(this.db, actor, on, at));
  }

  earlierTurns(runId: string, limit: number): Promise<EarlierTurn[]> {
    return this.attempt('earlierTurns', () => turns.earlierTurns(this.db, runId, limit));
  }

  earlierOutput(runId: string, turn: number, stepId: string): Promise<EarlierOutput | null> {
    return this.attempt('earlierOutput', () => turns.earlierOutput(this.db, runId, turn, stepId));
  }

  pinTools(runId: string, pins: readonly PinnedTool[], at: Date): Promise<void> {
    return this.attempt('pinTools', () => safety.pinTools(this.db, runId, pins, at));
  }

  listPins(runId: string): Promise<PinnedTool[]> {
    return this.attempt('listPins', () => safety.listPins(this.db, runId));
  }

  async reserveTokens(
    runId: string,
    actor: Actor,
    request: TokenRequest,
    caps: TokenBudgets,
    day: string,
    spend?: SpendRequest,
  ): Promise<GrantedCap> {
    const op = randomUUID();
    return this.attempt('reserveTokens', async () => {
      // Asked again only when another call created the person's row for the day at the same moment: then it exists.
      for (let tries = 0; tries < 3; tries++) {
        const granted = await safety.reserveTokens(this.db, op, runId, actor, request, caps, day, spend);
        if (granted !== null) return granted;
      }
      throw new StewardError('store_failed', `the token reservation for run ${runId} kept racing another one`);
    });
  }

  async settleTokens(s: Port<'settleTokens'>[0]): Promise<void> {
    const op = randomUUID();
    await this.attempt('settleTokens', () => safety.settleTokens(this.db, op, s));
    // Once, after the write held: a repeat of the statement under the same op settles nothing twice either.
    if (s.usage) this.onSettled?.(s.usage);
  }

  /** Runs by status, every status present; not retried (a scrape asks again soon enough). */
  runsByStatus(): Promise<Record<RunStatus, number>> {
    return countRunsByStatus(this.db);
  }

  /** Runs that need a process and have none (their lease lapsed, or none); not retried, as `runsByStatus`. */
  runsAwaitingOwner(): Promise<number> {
    return countRunsAwaitingOwner(this.db);
  }

  runSpend(runId: string, requester: Actor, windows: SpendWindows): Promise<RunSpend> {
    return this.attempt('runSpend', () => spendLedger.runSpend(this.db, runId, requester, windows));
  }

  spendReport(windows: SpendWindows, who: Port<'spendReport'>[1]): ReturnType<RunStore['spendReport']> {
    return this.attempt('spendReport', () => spendLedger.spendReport(this.db, windows, who));
  }

  claimInbound(key: string, at: Date): Promise<boolean> {
    const op = randomUUID();
    return this.attempt('claimInbound', () => safety.claimInbound(this.db, op, key, at));
  }

  pruneLedgers(olderThanMs: number): Promise<PrunedLedgers> {
    return this.attempt('pruneLedgers', () => safety.pruneLedgers(this.db, olderThanMs));
  }

  claimRun(runId: string, ttlMs: number): Promise<number | null> {
    return this.attempt('claimRun', () => leases.claimRun(this.db, this.owner, runId, ttlMs));
  }

  renewLeases(runIds: readonly string[], ttlMs: number): Promise<string[]> {
    if (runIds.length === 0) return Promise.resolve([]);
    return this.attempt('renewLeases', () => leases.renewLeases(this.db, this.owner, runIds, ttlMs));
  }

  releaseRun(runId: string): Promise<void> {
    return this.attempt('releaseRun', () => leases.releaseRun(this.db, this.owner, runId));
  }

  /** Orphans: runs whose holder let the lease lapse, or died on this machine (its pid is gone: no need to wait). */
  async claimOrphanedRuns(ttlMs: number, limit: number, held: readonly string[]): Promise<ClaimedRun[]> {
    const op = randomUUID();
    let tried = false;
    const claimed = await this.attempt('claimOrphanedRuns', async () => {
      // Tried again after an error: the first try may have taken runs before its answer was lost.
      if (tried) {
        const earlier = await leases.claimedBy(this.db, this.owner, op);
        if (earlier.length > 0) return earlier;
      }
      tried = true;
      const dead = deadLocalOwners(await leases.listHolders(this.db, this.owner), this.owner);
      return leases.claimOrphans(this.db, this.owner, ttlMs, limit, dead, held, op);
    });
    if (claimed.length === 0) return [];
    const rows = await this.attempt('claimOrphanedRuns', () =>
      this.selectRuns()
        .where(
          'runs.id',
          'in',
          claimed.map((c) => c.id),
        )
        .execute(),
    );
    const byId = new Map(rows.map((row) => [row.id, { ...fromRunRow(row), report: row.report }]));
    return claimed.flatMap((c) => {
      const run = byId.get(c.id);
      return run ? [{ run, fence: c.fence }] : [];
    });
  }

  forwardDecision(runId: string, decision: Json): Promise<void> {
    const command = toJsonText(decision);
    return this.attempt('forwardDecision', () => leases.forwardCommand(this.db, runId, command));
  }

  async takeDecisions(runId: string): Promise<{ op: string; decisions: Json[] }> {
    const op = randomUUID();
    const taken = await this.attempt('takeDecisions', () => leases.takeCommands(this.db, this.owner, runId, op));
    return { op, decisions: taken as Json[] };
  }

  settleDecisions(runId: string, op: string): Promise<void> {
    return this.attempt('settleDecisions', () => leases.settleCommands(this.db, runId, op));
  }

  runsWithDecisions(): Promise<string[]> {
    return this.attempt('runsWithDecisions', () => leases.runsWithCommands(this.db, this.owner));
  }

  assertHeld(runId: string, fence: number): Promise<void> {
    return this.attempt('assertHeld', () => this.checkFence(runId, fence));
  }

  /** Throws `fenced` unless this process holds the run under `fence`. */
  private async checkFence(runId: string, fence: number): Promise<void> {
    const row = await this.db.selectFrom('runs').select(['owner', 'fence']).where('id', '=', runId).executeTakeFirst();
    if (row?.owner !== this.owner || row.fence !== fence) throw steps.fencedOut(runId);
  }

  /** Runs joined with the plan of their current revision. */
  private selectRuns() {
    return this.db
      .selectFrom('runs')
      .leftJoin('plan_revisions', (join) =>
        join.onRef('plan_revisions.run_id', '=', 'runs.id').onRef('plan_revisions.revision', '=', 'runs.revision'),
      )
      .selectAll('runs')
      .select('plan_revisions.plan');
  }
}
