/**
 * `RunStore` over Kysely, for PostgreSQL and PGlite alike. The database judges every race: state changes and
 * limits are single conditional UPDATEs, and the caller learns from the returned row whether it won.
 */
import { sql, type Kysely } from 'kysely';
import { StewardError } from '../engine/errors.ts';
import type { Plan } from '../engine/plan/plan-schema.ts';
import type {
  Conversation,
  PinnedTool,
  RunStore,
  StoredRun,
  StoredStepAttempt,
  TokenBudgets,
} from '../engine/ports.ts';
import { ACTIVE_STATUSES, type Actor, type ReviewPreference, type RiskLevel, type RunStatus } from '../engine/types.ts';
import type { Breakpoint } from '../engine/plan/breakpoints.ts';
import { toJsonText, toStorableText } from './json-text.ts';
import * as history from './run-history.ts';
import * as safety from './run-safety.ts';
import * as steering from './run-steering.ts';
import { fromRunRow, fromStepAttemptRow } from './run-rows.ts';
import type { DatabaseSchema } from './schema.ts';
import { withStoreErrors } from './store-errors.ts';

type Port<K extends keyof RunStore> = Parameters<RunStore[K]>;

/** Durable run state in PostgreSQL or PGlite; failures surface as `StewardError` (`store_failed`, or `config`). */
export class PgRunStore implements RunStore {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async createRun(run: Port<'createRun'>[0]): Promise<void> {
    await withStoreErrors('createRun', () =>
      this.db
        .insertInto('runs')
        .values({
          id: run.id,
          status: 'planning',
          channel: run.conversation.channel,
          conversation_key: run.conversation.key,
          requester_id: run.requester.id,
          requester_name: run.requester.name ?? null,
          request: toStorableText(run.request),
          created_at: run.at,
          updated_at: run.at,
        })
        .execute(),
    );
  }

  async saveRevision(runId: string, revision: number, plan: Plan, reason: string, at: Date): Promise<void> {
    await withStoreErrors('saveRevision', () =>
      this.db.transaction().execute(async (tx) => {
        // The unique (run_id, revision) key makes a second save of the same revision fail, never overwrite.
        await tx
          .insertInto('plan_revisions')
          .values({ run_id: runId, revision, plan: toJsonText(plan), reason: toStorableText(reason), created_at: at })
          .execute();
        await tx.updateTable('runs').set({ revision, updated_at: at }).where('id', '=', runId).execute();
      }),
    );
  }

  async transition(
    runId: string,
    from: readonly RunStatus[],
    to: RunStatus,
    options: { revision?: number; at?: Date } = {},
  ): Promise<boolean> {
    if (from.length === 0) return false;
    return withStoreErrors('transition', async () => {
      let update = this.db
        .updateTable('runs')
        .set({ status: to, updated_at: options.at ?? sql<Date>`now()` })
        .where('id', '=', runId)
        .where('status', 'in', from);
      if (options.revision !== undefined) update = update.where('revision', '=', options.revision);
      return (await update.returning('id').executeTakeFirst()) !== undefined;
    });
  }

  async takeAmendmentRound(runId: string, cap: number): Promise<number | null> {
    return withStoreErrors('takeAmendmentRound', async () => {
      // Concurrent callers queue on the row lock and re-check the WHERE against the winner's row.
      const row = await this.db
        .updateTable('runs')
        .set((eb) => ({ amendment_rounds: eb('amendment_rounds', '+', 1) }))
        .where('id', '=', runId)
        .where('amendment_rounds', '<', cap)
        .returning('amendment_rounds')
        .executeTakeFirst();
      return row?.amendment_rounds ?? null;
    });
  }

  async recordDecision(d: Port<'recordDecision'>[0]): Promise<void> {
    await withStoreErrors('recordDecision', () =>
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
          created_at: d.at,
        })
        .execute(),
    );
  }

  /** One round trip: the attempt row and its `stepStarted` event, written by one statement. */
  async recordStepStarted(a: Port<'recordStepStarted'>[0]): Promise<void> {
    const payload = toJsonText({ stepId: a.stepId, attempt: a.attempt });
    await withStoreErrors('recordStepStarted', () =>
      this.db
        .with('started', (db) =>
          db
            .insertInto('step_attempts')
            .values({
              run_id: a.runId,
              step_id: a.stepId,
              attempt: a.attempt,
              revision: a.revision,
              status: 'running',
              args: toJsonText(a.args),
              started_at: a.at,
              created_at: a.at,
            })
            // A replay after a crash re-announces the same attempt; the first record stands.
            .onConflict((oc) => oc.columns(['run_id', 'step_id', 'attempt']).doNothing())
            .returning('run_id'),
        )
        .insertInto('run_events')
        .columns(['run_id', 'type', 'payload', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom('started')
            .select((r) => [
              r.ref('started.run_id').as('run_id'),
              sql.lit('stepStarted').as('type'),
              sql`${payload}::jsonb`.as('payload'),
              sql`${a.at}::timestamptz`.as('created_at'),
            ]),
        )
        .execute(),
    );
  }

  /** One round trip in the usual case: the attempt's end and its `stepEnded` event, written by one statement. */
  async recordStepEnded(a: Port<'recordStepEnded'>[0]): Promise<void> {
    const payload = toJsonText({ stepId: a.stepId, attempt: a.attempt, status: a.status });
    const ended = await withStoreErrors('recordStepEnded', async () => {
      const written = await this.db
        .with('ended', (db) =>
          db
            .updateTable('step_attempts')
            .set({
              status: a.status,
              output: a.output === null ? null : toJsonText(a.output),
              error: a.error === null ? null : toJsonText(a.error),
              ended_at: a.at,
              duration_ms: Math.round(a.durationMs),
            })
            .where('run_id', '=', a.runId)
            .where('step_id', '=', a.stepId)
            .where('attempt', '=', a.attempt)
            // An attempt ends once: a late duplicate (say, "interrupted" after a real result) must not rewrite it.
            .where('status', '=', 'running')
            .returning('run_id'),
        )
        .insertInto('run_events')
        .columns(['run_id', 'type', 'payload', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom('ended')
            .select((r) => [
              r.ref('ended.run_id').as('run_id'),
              sql.lit('stepEnded').as('type'),
              sql`${payload}::jsonb`.as('payload'),
              sql`${a.at}::timestamptz`.as('created_at'),
            ]),
        )
        .returning('id')
        .executeTakeFirst();
      if (written !== undefined) return true;
      const known = await this.db
        .selectFrom('step_attempts')
        .select('id')
        .where('run_id', '=', a.runId)
        .where('step_id', '=', a.stepId)
        .where('attempt', '=', a.attempt)
        .executeTakeFirst();
      return known !== undefined;
    });
    if (!ended) {
      throw new StewardError('store_failed', `step ${a.stepId} attempt ${a.attempt} of run ${a.runId} never started`);
    }
  }

  async recordLlmUsage(u: Port<'recordLlmUsage'>[0]): Promise<void> {
    await withStoreErrors('recordLlmUsage', () =>
      this.db
        .insertInto('llm_usage')
        .values({
          run_id: u.runId,
          role: u.role,
          model: u.model,
          input_tokens: u.inputTokens,
          output_tokens: u.outputTokens,
          created_at: u.at,
        })
        .execute(),
    );
  }

  async appendEvent(runId: string, type: string, payload: Port<'appendEvent'>[2], at: Date): Promise<void> {
    await withStoreErrors('appendEvent', () =>
      this.db
        .insertInto('run_events')
        .values({ run_id: runId, type, payload: toJsonText(payload), created_at: at })
        .execute(),
    );
  }

  async setReport(runId: string, report: string, at: Date): Promise<void> {
    await withStoreErrors('setReport', () =>
      this.db
        .updateTable('runs')
        .set({ report: toStorableText(report), updated_at: at })
        .where('id', '=', runId)
        .execute(),
    );
  }

  async getRun(runId: string): Promise<StoredRun | null> {
    const row = await withStoreErrors('getRun', () =>
      this.selectRuns().where('runs.id', '=', runId).executeTakeFirst(),
    );
    return row ? fromRunRow(row) : null;
  }

  async listStepAttempts(runId: string): Promise<StoredStepAttempt[]> {
    const rows = await withStoreErrors('listStepAttempts', () =>
      this.db.selectFrom('step_attempts').selectAll().where('run_id', '=', runId).orderBy('id').execute(),
    );
    return rows.map(fromStepAttemptRow);
  }

  async listUnfinishedRuns(): Promise<StoredRun[]> {
    const rows = await withStoreErrors('listUnfinishedRuns', () =>
      this.selectRuns()
        .where('runs.status', 'in', ACTIVE_STATUSES)
        .orderBy('runs.created_at')
        .orderBy('runs.id')
        .execute(),
    );
    return rows.map(fromRunRow);
  }

  /** Every plan revision of a run, oldest first. */
  listRevisions(runId: string): Promise<history.StoredRevision[]> {
    return withStoreErrors('listRevisions', () => history.listRevisions(this.db, runId));
  }

  /** Every decision on a run, in the order recorded. */
  listDecisions(runId: string): Promise<history.StoredDecision[]> {
    return withStoreErrors('listDecisions', () => history.listDecisions(this.db, runId));
  }

  /** A run's event log in append order. */
  listEvents(runId: string): Promise<history.StoredEvent[]> {
    return withStoreErrors('listEvents', () => history.listEvents(this.db, runId));
  }

  /** Calls and tokens a run used, in total and per model role. */
  llmUsageForRun(runId: string): Promise<history.LlmUsageTotals> {
    return withStoreErrors('llmUsageForRun', () => history.llmUsageForRun(this.db, runId));
  }

  /** Runs joined with the plan of their current revision. */
  async findActiveRun(conversation: Conversation): Promise<StoredRun | null> {
    const row = await withStoreErrors('findActiveRun', () =>
      this.selectRuns()
        .where('runs.channel', '=', conversation.channel)
        .where('runs.conversation_key', '=', conversation.key)
        .where('runs.status', 'in', ACTIVE_STATUSES)
        .orderBy('runs.created_at', 'desc')
        .executeTakeFirst(),
    );
    return row ? fromRunRow(row) : null;
  }

  setApprovedRisk(runId: string, risk: RiskLevel, at: Date): Promise<void> {
    return withStoreErrors('setApprovedRisk', () => steering.setApprovedRisk(this.db, runId, risk, at));
  }

  setBreakpoints(runId: string, breakpoints: readonly Breakpoint[], at: Date): Promise<void> {
    return withStoreErrors('setBreakpoints', () => steering.setBreakpoints(this.db, runId, breakpoints, at));
  }

  getReviewPreference(actor: Actor): Promise<ReviewPreference | null> {
    return withStoreErrors('getReviewPreference', () => steering.getReviewPreference(this.db, actor));
  }

  setReviewPreference(actor: Actor, preference: ReviewPreference, at: Date): Promise<void> {
    return withStoreErrors('setReviewPreference', () => steering.setReviewPreference(this.db, actor, preference, at));
  }

  countInterventions(actor: Actor, tools: string[]): Promise<Record<string, number>> {
    return withStoreErrors('countInterventions', () => steering.countInterventions(this.db, actor, tools));
  }

  pinTools(runId: string, pins: readonly PinnedTool[], at: Date): Promise<void> {
    return withStoreErrors('pinTools', () => safety.pinTools(this.db, runId, pins, at));
  }

  listPins(runId: string): Promise<PinnedTool[]> {
    return withStoreErrors('listPins', () => safety.listPins(this.db, runId));
  }

  reserveTokens(
    runId: string,
    actor: Actor,
    tokens: number,
    caps: TokenBudgets,
    day: string,
  ): Promise<'ok' | 'run' | 'user'> {
    return withStoreErrors('reserveTokens', () => safety.reserveTokens(this.db, runId, actor, tokens, caps, day));
  }

  adjustTokens(runId: string, actor: Actor, delta: number, day: string): Promise<void> {
    return withStoreErrors('adjustTokens', () => safety.adjustTokens(this.db, runId, actor, delta, day));
  }

  claimInbound(key: string, at: Date): Promise<boolean> {
    return withStoreErrors('claimInbound', () => safety.claimInbound(this.db, key, at));
  }

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
