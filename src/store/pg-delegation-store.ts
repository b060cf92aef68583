/**
 * `DelegationStore` over Kysely, for PostgreSQL and PGlite alike. The brakes are judged by the statements in
 * `delegation-brakes.ts`; every write is safe to repeat (a spawn by its id, a message count by an operation id, an
 * end by the end itself), since transient failures are retried.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { StewardError } from '../engine/errors.ts';
import type { DepthRaise } from '../engine/assistant/delegations.ts';
import { depthRaiseOf, grantsWidenedOf, raiseDepth, widenGrants } from './brake-raises.ts';
import type {
  Brake,
  BrakeTrip,
  ChildEnd,
  DelegationLimits,
  DelegationRound,
  DelegationStore,
  MessageResult,
  NewDelegation,
  SpawnResult,
  StoredDelegation,
} from '../engine/assistant/delegations.ts';
import type { Conversation } from '../engine/ports.ts';
import { isTerminal, type Actor, type RunStatus } from '../engine/types.ts';
import {
  countDelegationMessage,
  endDelegation,
  releaseOrphanDelegations,
  spawnDelegation,
} from './delegation-brakes.ts';
import type { DatabaseSchema, DelegationsTable } from './schema.ts';
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from './store-retry.ts';

/** Delegations and their brakes in PostgreSQL or PGlite; failures surface as `StewardError` (`store_failed`). */
export class PgDelegationStore implements DelegationStore {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly retry: RetryPolicy;

  constructor(db: Kysely<DatabaseSchema>, options: { retry?: Partial<RetryPolicy> } = {}) {
    this.db = db;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  private attempt<T>(action: string, work: () => Promise<T>): Promise<T> {
    return withRetries(action, work, this.retry);
  }

  spawn(d: NewDelegation, limits: DelegationLimits, at: Date): Promise<SpawnResult> {
    return this.attempt('spawn', () => spawnDelegation(this.db, d, limits, at));
  }

  endChild(delegationId: string, reply: string, at: Date): Promise<boolean> {
    return this.attempt('endChild', () => endDelegation(this.db, delegationId, reply, at));
  }

  releaseOrphans(unstartedBefore: Date, at: Date): Promise<number> {
    return this.attempt('releaseOrphans', () => releaseOrphanDelegations(this.db, unstartedBefore, at));
  }

  raiseDepth(runId: string, depth: number, approver: Actor, at: Date): Promise<DepthRaise> {
    return this.attempt('raiseDepth', () => raiseDepth(this.db, runId, depth, approver, at));
  }

  depthRaise(runId: string): Promise<DepthRaise | null> {
    return this.attempt('depthRaise', () => depthRaiseOf(this.db, runId));
  }

  widenGrants(runId: string, approver: Actor, at: Date): Promise<void> {
    return this.attempt('widenGrants', () => widenGrants(this.db, runId, approver, at));
  }

  grantsWidened(runId: string): Promise<{ approver: Actor; at: Date } | null> {
    return this.attempt('grantsWidened', () => grantsWidenedOf(this.db, runId));
  }

  async countMessage(delegationId: string, limits: DelegationLimits, at: Date): Promise<MessageResult> {
    const op = randomUUID();
    const result = await this.attempt('countMessage', () =>
      countDelegationMessage(this.db, delegationId, op, limits.messages, at),
    );
    if (!result) throw new StewardError('internal', `There is no delegation ${delegationId} to count a message of.`);
    return result;
  }

  async rounds(conversation: Conversation, assistant: string): Promise<DelegationRound[]> {
    const rows = await this.attempt('rounds', () =>
      this.db
        .selectFrom('delegations')
        .select(['round', 'id', 'child_run_id', 'task', 'reply', 'created_at', 'ended_at'])
        .where('conversation_channel', '=', conversation.channel)
        .where('conversation_key', '=', conversation.key)
        .where('assistant', '=', assistant)
        .orderBy('round')
        .execute(),
    );
    return rows.map((r) => ({
      round: r.round,
      delegationId: r.id,
      childRunId: r.child_run_id,
      instruction: r.task,
      reply: r.reply,
      createdAt: r.created_at,
      endedAt: r.ended_at,
    }));
  }

  /**
   * The delegation that made a child run, or null when the run is not a child. Not part of the engine's port: for
   * operators and tests reading the table.
   */
  async delegationOfRun(childRunId: string): Promise<StoredDelegation | null> {
    const row = await this.attempt('delegationOfRun', () =>
      this.db.selectFrom('delegations').selectAll().where('child_run_id', '=', childRunId).executeTakeFirst(),
    );
    return row ? fromDelegationRow(row) : null;
  }

  async childrenOf(parentRunId: string): Promise<StoredDelegation[]> {
    const rows = await this.attempt('childrenOf', () =>
      this.db
        .selectFrom('delegations')
        .selectAll()
        .where('parent_run_id', '=', parentRunId)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
    );
    return rows.map(fromDelegationRow);
  }

  async childEnd(childRunId: string): Promise<ChildEnd | null> {
    const row = await this.attempt('childEnd', () =>
      this.db
        .selectFrom('runs')
        .select(['status', 'report', 'report_due'])
        .where('id', '=', childRunId)
        .executeTakeFirst(),
    );
    const status = row?.status as RunStatus | undefined;
    if (!row || !status || !isTerminal(status) || row.report_due) return null;
    return { status, report: row.report };
  }

  /** The latest brake trips, newest first. Not part of the engine's port: for operators and tests. */
  async trips(limit: number): Promise<BrakeTrip[]> {
    const rows = await this.attempt('trips', () =>
      this.db
        .selectFrom('brake_trips')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),
    );
    return rows.map((r) => ({
      brake: r.brake as Brake,
      subject: r.subject,
      limit: r.cap,
      count: r.count,
      at: r.created_at,
    }));
  }
}

function fromDelegationRow(r: Selectable<DelegationsTable>): StoredDelegation {
  return {
    id: r.id,
    childRunId: r.child_run_id,
    parentRunId: r.parent_run_id,
    conversation: { channel: r.conversation_channel, key: r.conversation_key },
    assistant: r.assistant,
    requester: {
      id: r.requester_id,
      ...(r.requester_name === null ? {} : { name: r.requester_name }),
      channel: r.requester_channel,
    },
    depth: r.depth,
    depthLimit: r.depth_limit,
    round: r.round,
    task: r.task,
    reply: r.reply,
    messages: r.messages,
    createdAt: r.created_at,
    endedAt: r.ended_at,
  };
}
