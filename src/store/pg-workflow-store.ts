/**
 * `WorkflowStore` over Kysely, for PostgreSQL and PGlite alike. As in `PgRunStore`, the database judges every race
 * (a name taken twice, a version added twice, a fire claimed twice) and every write is safe to repeat, since
 * transient failures are retried.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type {
  DueSchedule,
  FireClaim,
  FireReview,
  NewSchedule,
  ScheduleCapHit,
  ScheduleCaps,
  NewVersion,
  NewWorkflow,
  StoredFire,
  StoredSchedule,
  StoredWorkflow,
  WorkflowStore,
  WorkflowVersion,
} from '../engine/workflows.ts';
import { addScheduleWithinCaps, resumeScheduleWithinCaps } from './schedule-caps.ts';
import type { DatabaseSchema } from './schema.ts';
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from './store-retry.ts';
import { claimChunk, CLAIM_CHUNK, inLockOrder } from './workflow-claims.ts';
import * as reads from './workflow-reads.ts';
import { fromScheduleRow, fromVersionRow, fromWorkflowRow } from './workflow-rows.ts';
import * as writes from './workflow-writes.ts';

/**
 * Durable workflow state in PostgreSQL or PGlite; failures surface as `StewardError` (`store_failed`). `owner` must
 * be this process's `PgRunStore.owner`: the runs its fires create are leased to it, and only it renews them.
 */
export class PgWorkflowStore implements WorkflowStore {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly retry: RetryPolicy;
  /** This process, as named in the leases of the runs its fires create. */
  readonly owner: string;

  constructor(db: Kysely<DatabaseSchema>, options: { owner: string; retry?: Partial<RetryPolicy> }) {
    this.db = db;
    this.owner = options.owner;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  /** Runs one operation, translating failures and retrying the transient ones. */
  private attempt<T>(action: string, work: () => Promise<T>): Promise<T> {
    return withRetries(action, work, this.retry);
  }

  createWorkflow(w: NewWorkflow, at: Date): Promise<boolean> {
    return this.attempt('createWorkflow', () => writes.createWorkflow(this.db, w, at));
  }

  addVersion(workflowId: string, expectedVersion: number, v: NewVersion, at: Date): Promise<number | null> {
    const op = randomUUID();
    return this.attempt('addVersion', () => writes.addVersion(this.db, op, workflowId, expectedVersion, v, at));
  }

  async getWorkflow(name: string): Promise<StoredWorkflow | null> {
    const row = await this.attempt('getWorkflow', () =>
      this.db
        .selectFrom('workflows')
        .selectAll()
        .where('name', '=', name)
        .where('deleted_at', 'is', null)
        .executeTakeFirst(),
    );
    return row ? fromWorkflowRow(row) : null;
  }

  async getVersion(workflowId: string, version: number): Promise<WorkflowVersion | null> {
    const row = await this.attempt('getVersion', () =>
      this.db
        .selectFrom('workflow_versions')
        .selectAll()
        .where('workflow_id', '=', workflowId)
        .where('version', '=', version)
        .executeTakeFirst(),
    );
    return row ? fromVersionRow(row) : null;
  }

  async listVersions(workflowId: string): Promise<WorkflowVersion[]> {
    const rows = await this.attempt('listVersions', () =>
      this.db
        .selectFrom('workflow_versions')
        .selectAll()
        .where('workflow_id', '=', workflowId)
        .orderBy('version')
        .execute(),
    );
    return rows.map(fromVersionRow);
  }

  async listWorkflows(): Promise<StoredWorkflow[]> {
    const rows = await this.attempt('listWorkflows', () =>
      this.db.selectFrom('workflows').selectAll().where('deleted_at', 'is', null).orderBy('name').execute(),
    );
    return rows.map(fromWorkflowRow);
  }

  async setReview(workflowId: string, review: FireReview, at: Date): Promise<void> {
    await this.attempt('setReview', () =>
      this.db
        .updateTable('workflows')
        .set({ review, updated_at: at })
        .where('id', '=', workflowId)
        .where('deleted_at', 'is', null)
        .execute(),
    );
  }

  deleteWorkflow(workflowId: string, at: Date): Promise<void> {
    return this.attempt('deleteWorkflow', () => writes.deleteWorkflow(this.db, workflowId, at));
  }

  /** Idempotent by the schedule's id: a repeat leaves the first write. */
  addSchedule(s: NewSchedule, at: Date, caps: ScheduleCaps): Promise<ScheduleCapHit | null> {
    return this.attempt('addSchedule', () => addScheduleWithinCaps(this.db, s, at, caps));
  }

  async listSchedules(workflowId: string): Promise<StoredSchedule[]> {
    const rows = await this.attempt('listSchedules', () =>
      this.db
        .selectFrom('workflow_schedules')
        .selectAll()
        .where('workflow_id', '=', workflowId)
        .where('deleted_at', 'is', null)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
    );
    return rows.map(fromScheduleRow);
  }

  /** A pause keeps the stored `nextFireAt` (for display); a resume sets it to the one given. */
  async pauseSchedule(scheduleId: string, at: Date): Promise<void> {
    await this.attempt('pauseSchedule', () =>
      this.db
        .updateTable('workflow_schedules')
        .set({ paused: true, updated_at: at })
        .where('id', '=', scheduleId)
        .where('deleted_at', 'is', null)
        .execute(),
    );
  }

  resumeSchedule(
    scheduleId: string,
    nextFireAt: Date | null,
    at: Date,
    caps: ScheduleCaps,
  ): Promise<ScheduleCapHit | null> {
    return this.attempt('resumeSchedule', () => resumeScheduleWithinCaps(this.db, scheduleId, nextFireAt, at, caps));
  }

  async deleteSchedule(scheduleId: string, at: Date): Promise<void> {
    await this.attempt('deleteSchedule', () =>
      this.db
        .updateTable('workflow_schedules')
        .set({ deleted_at: at, updated_at: at })
        .where('id', '=', scheduleId)
        .where('deleted_at', 'is', null)
        .execute(),
    );
  }

  dueSchedules(now: Date, limit: number): Promise<DueSchedule[]> {
    return this.attempt('dueSchedules', () => reads.dueSchedules(this.db, now, limit));
  }

  async nextDue(): Promise<Date | null> {
    const row = await this.attempt('nextDue', () =>
      this.db
        .selectFrom('workflow_schedules')
        .select(sql<Date | null>`min(next_fire_at)`.as('next'))
        .where('paused', '=', false)
        .where('deleted_at', 'is', null)
        .executeTakeFirst(),
    );
    return row?.next ?? null;
  }

  /**
   * One transaction, one statement per chunk of claims. A retry after a lost answer re-runs it: the schedules have
   * moved on, and the fires this process recorded under the same ids are found and counted as won again.
   */
  async claimFires(claims: readonly FireClaim[], at: Date, leaseMs: number): Promise<string[]> {
    if (claims.length === 0) return [];
    const ordered = inLockOrder(claims);
    const won = await this.attempt('claimFires', () =>
      this.db.transaction().execute(async (trx) => {
        const ids: string[] = [];
        for (let i = 0; i < ordered.length; i += CLAIM_CHUNK) {
          ids.push(...(await claimChunk(trx, this.owner, ordered.slice(i, i + CLAIM_CHUNK), at, leaseMs)));
        }
        return new Set(ids);
      }),
    );
    return claims.map((c) => c.fire.id).filter((id) => won.has(id));
  }

  fireOfRun(runId: string): Promise<StoredFire | null> {
    return this.attempt('fireOfRun', () => reads.fireOfRun(this.db, runId));
  }

  listFires(workflowId: string, limit: number): Promise<StoredFire[]> {
    return this.attempt('listFires', () => reads.listFires(this.db, workflowId, limit));
  }

  async recordAmendment(a: { runId: string; workflowId: string; version: number }, at: Date): Promise<void> {
    const row = { run_id: a.runId, workflow_id: a.workflowId, version: a.version, created_at: at };
    await this.attempt('recordAmendment', () =>
      this.db
        .insertInto('workflow_amendments')
        .values(row)
        .onConflict((oc) => oc.column('run_id').doNothing())
        .execute(),
    );
  }

  async amendmentOf(runId: string): Promise<{ workflow: StoredWorkflow; version: number } | null> {
    const row = await this.attempt('amendmentOf', () =>
      this.db
        .selectFrom('workflow_amendments as a')
        .innerJoin('workflows as w', 'w.id', 'a.workflow_id')
        .selectAll('w')
        .select('a.version as amended')
        .where('a.run_id', '=', runId)
        .where('w.deleted_at', 'is', null)
        .executeTakeFirst(),
    );
    return row ? { workflow: fromWorkflowRow(row), version: row.amended } : null;
  }
}
