/**
 * Delegation and its brakes: the vocabulary, the limits and the port.
 *
 * - delegation: one task handed to a named Assistant; it becomes a child run, linked to the run that asked (its
 *   parent) or to no run when a person addressed the Assistant directly.
 * - depth: how far a child is from the person: a child of a top-level run (or of nobody) is at depth 1, its own
 *   child at 2, and so on.
 * - round: one delegation from a conversation to one Assistant; rounds are numbered from 1 per (conversation,
 *   Assistant) and never given back.
 * - brake: a limit kept in the database and judged there by one conditional statement per counter, so no model
 *   and no race between processes can get past it; each time one refuses (a trip), a row records it.
 */
import type { Conversation } from '../ports.ts';
import type { Actor, RunStatus } from '../types.ts';

/** The four brakes: spawn depth, child runs active per person, rounds per conversation and Assistant, and messages
 * between a child and its parent. */
export type Brake = 'depth' | 'concurrency' | 'rounds' | 'messages';

/** The limits a brake judges against (settings; `depth` is the default depth, lowered to `DEPTH_CEILING`). */
export interface DelegationLimits {
  depth: number;
  concurrency: number;
  rounds: number;
  messages: number;
}

/** Steward's own tool a plan step delegates with (`run/delegate-tool.ts`); named here, where grants can see it. */
export const DELEGATE_TOOL = 'steward.delegate';

/** No chain of delegations goes deeper than this, whatever is asked or configured. */
export const DEPTH_CEILING = 5;

/** The defaults of the brakes. */
export const DEFAULT_DELEGATION_LIMITS: DelegationLimits = { depth: 2, concurrency: 10, rounds: 3, messages: 5 };

/**
 * The depth limit of a new delegation: the configured depth, or a lower one the plan asked for; never above the
 * setting (a plan is model-written text, and text injected into it must not loosen a brake) unless an approver raised
 * it on the card (`raised`: recorded on the run whose step delegates, or carried down a chain an approver raised), and
 * never above the ceiling, nor above the limit its parent's chain was given (a child cannot ask for more room than
 * its root had).
 */
export function depthLimit(
  requested: number | undefined,
  configured: number,
  inherited: number | null,
  raised: number | null = null,
): number {
  const allowed = Math.max(configured, raised ?? 0);
  const wanted = Math.floor(Math.min(requested ?? allowed, allowed));
  return Math.max(0, Math.min(wanted, DEPTH_CEILING, inherited ?? DEPTH_CEILING));
}

/**
 * The depth a plan's delegate steps ask for above the setting (the highest, at most the ceiling), or null when none
 * asks for more: what an approver may raise the run's depth brake to on its card.
 */
export function depthAskedAbove(
  steps: readonly { kind?: string; tool?: string; args?: unknown }[],
  configured: number,
): number | null {
  let asked: number | null = null;
  for (const s of steps) {
    if (s.tool !== DELEGATE_TOOL || typeof s.args !== 'object' || s.args === null) continue;
    const depth = (s.args as Record<string, unknown>)['depth'];
    if (typeof depth === 'number' && Number.isInteger(depth) && depth > configured)
      asked = Math.min(DEPTH_CEILING, Math.max(asked ?? 0, depth));
  }
  return asked !== null && asked > configured ? asked : null;
}

/** An approver's raise of a run's depth brake, as recorded. */
export interface DepthRaise {
  depth: number;
  approver: Actor;
  at: Date;
}

/** A delegation to record: its child run's id is made by the caller first, so its own children find its depth. */
export interface NewDelegation {
  /** The delegation's id; a repeat of `spawn` with the same id returns the first answer and counts nothing more. */
  id: string;
  /** The run the child run will be created as (`RunStore.createRun` with this id, after a successful spawn). */
  childRunId: string;
  /** The run that delegates, or null when a person addressed the Assistant directly. */
  parentRunId: string | null;
  conversation: Conversation;
  /** The Assistant's name. */
  assistant: string;
  /** Whose child run it is: counted against this person's concurrent children. */
  requester: Actor;
  /** The depth the plan asked for (it only lowers the setting); unset: the configured depth. */
  requestedDepth?: number;
  /** The instruction the Assistant is given (kept as the round's instruction for an escalation). */
  task: string;
}

/** A brake that refused: which, its limit, and the count it found (at or past the limit). */
export interface Tripped {
  ok: false;
  brake: Brake;
  limit: number;
  count: number;
}

/** What `spawn` answers: the delegation recorded with its depth and round, or the brake that refused it. */
export type SpawnResult =
  { ok: true; delegationId: string; childRunId: string; depth: number; depthLimit: number; round: number } | Tripped;

/** How a child run ended, as its parent's delegate step reads it: its status and its report (null: none). */
export interface ChildEnd {
  status: RunStatus;
  report: string | null;
}

/** What `countMessage` answers: the message counted (`count` so far), or the brake that refused it. */
export type MessageResult = { ok: true; count: number } | Tripped;

/** One round between a conversation and an Assistant, for an escalation. */
export interface DelegationRound {
  round: number;
  delegationId: string;
  childRunId: string;
  instruction: string;
  /** The child's reply as `endChild` stored it; null while it runs (or if it never ended). */
  reply: string | null;
  createdAt: Date;
  endedAt: Date | null;
}

/** A delegation as stored (for the parent's Pause/Stop reaching its children, and a child finding its parent). */
export interface StoredDelegation {
  id: string;
  childRunId: string;
  parentRunId: string | null;
  conversation: Conversation;
  assistant: string;
  requester: Actor;
  depth: number;
  depthLimit: number;
  round: number;
  task: string;
  reply: string | null;
  messages: number;
  createdAt: Date;
  endedAt: Date | null;
}

/** One recorded trip. `subject` names what was limited: a run, a person, a conversation and Assistant, a delegation. */
export interface BrakeTrip {
  brake: Brake;
  subject: string;
  limit: number;
  count: number;
  at: Date;
}

/**
 * Durable state of delegations and their brakes. Every brake is checked and counted by one conditional statement on
 * its own counter row (never a count followed by a write); the brakes of one spawn run in one transaction, so a
 * later refusal un-counts the earlier ones; every refusal is recorded with the refusal, in the same transaction.
 *
 * How the delegation flow uses it:
 * 1. `spawn` before creating the child run. Refused (`ok: false`): tell the parent `brakeSentence(trip)`; for
 *    `rounds`, give the parent `escalationText(assistant, await rounds(conversation, assistant), limit)` instead of
 *    calling the Assistant. Accepted: create the child run with `childRunId`, and run it.
 * 2. `countMessage` before each message passes between the child and its parent, either way; refused: the message
 *    is not passed, and the sender gets the sentence.
 * 3. `endChild` when the child run ends, however it ends (its report, or a sentence saying it failed or was
 *    stopped): it frees the person's slot once and keeps the reply as the round's reply.
 * 4. `releaseOrphans` at start (and now and then): frees the slots of children whose step 3 was lost to a crash.
 */
export interface DelegationStore {
  /**
   * Judges the depth (parent's depth + 1 within `depthLimit`), then the rounds of this conversation with this
   * Assistant, then the person's active child runs, counting each; records the delegation, or the trip.
   */
  spawn(d: NewDelegation, limits: DelegationLimits, at: Date): Promise<SpawnResult>;
  /** Ends a delegation: frees its slot in the person's concurrent children and stores the reply. False when it had
   * ended already, or never existed (nothing changes then: the first reply stands). */
  endChild(delegationId: string, reply: string, at: Date): Promise<boolean>;
  /**
   * Frees the slots whose `endChild` was lost (a crash between the child's end and the call): ends every delegation
   * not ended whose child run has ended (its report kept as the reply), or was never created although the
   * delegation is older than `unstartedBefore`. Returns how many it ended; for `Recovery` at start and now and then.
   */
  releaseOrphans(unstartedBefore: Date, at: Date): Promise<number>;
  /** Counts one message between a child and its parent, against `limits.messages`. Throws `StewardError`
   * (`internal`) for a delegation that does not exist. */
  countMessage(delegationId: string, limits: DelegationLimits, at: Date): Promise<MessageResult>;
  /**
   * Records an approver's raise of the run's depth brake to `depth` (at most the ceiling; a later raise stands only
   * if higher), with who and when; resolves with the raise that stands.
   */
  raiseDepth(runId: string, depth: number, approver: Actor, at: Date): Promise<DepthRaise>;
  /** The raise recorded on a run, or null. */
  depthRaise(runId: string): Promise<DepthRaise | null>;
  /**
   * Records an approver's decision that the runs `runId` hands out are bound by their own Assistant's grants only,
   * not narrowed by those up the chain (who and when; a repeat keeps the first).
   */
  widenGrants(runId: string, approver: Actor, at: Date): Promise<void>;
  /** Who widened the grants of the runs `runId` hands out, and when; null when nobody did. */
  grantsWidened(runId: string): Promise<Omit<DepthRaise, 'depth'> | null>;
  /** Each round between a conversation and an Assistant, first first. */
  rounds(conversation: Conversation, assistant: string): Promise<DelegationRound[]>;
  /** The delegations a run made, oldest first (its children, for Pause and Stop to reach). */
  childrenOf(parentRunId: string): Promise<StoredDelegation[]>;
  /**
   * How a child run ended, once it has ended and its report is sent (or it ended owing none); null while it is
   * active, owes its report, or does not exist.
   */
  childEnd(childRunId: string): Promise<ChildEnd | null>;
}
