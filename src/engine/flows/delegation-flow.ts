/**
 * Delegation: a plan's `delegate` step (the built-in tool `steward.delegate`) hands a task to a named Assistant. The
 * task becomes a child run of that Assistant in the same thread, with its own plan, card and the requester's review
 * preference; the parent's step waits for it, and the child's report becomes the step's output. The brakes are
 * judged in the database (`DelegationStore`): depth, the person's concurrent child runs and the rounds between the
 * conversation and the Assistant when the child is spawned, the messages between child and parent as they pass.
 *
 * Pause, Resume and Stop on a parent reach its active children (`propagate`); a child that starts while its parent is
 * paused starts paused (`started`). A parent let go of (shutdown, a
 * crash) leaves its child running: whoever takes the parent over retries the step, which finds the same delegation
 * and child run (the delegation's id is the parent's run and step) and waits for it again.
 */
import type { AssistantStore } from '../assistant/assistants.ts';
import { brakeSentence, escalationText } from '../assistant/brake-text.ts';
import type { InboundDecision } from '../channel.ts';
import type { ChildEnd, DelegationLimits, DelegationStore } from '../assistant/delegations.ts';
import type { Conversation, RunRecords, StoredRun, ToolCallOutcome } from '../ports.ts';
import { delegationIdOf, parseDelegateArgs, type DelegateArgs } from '../assistant/delegate-tool.ts';
import { cut, shortRunId } from '../text.ts';
import { isTerminal, type Actor, type Json, type StepError } from '../types.ts';
import type { Log } from './deps.ts';

/** How often a waiting delegate step looks at its child run when nothing in this process tells it sooner. */
export const DEFAULT_DELEGATION_POLL_MS = 1_000;
/** A delegation the child run of which was never created is let go of after this long (its slot freed). */
const UNSTARTED_GRACE_MS = 60 * 60_000;

/** What delegation needs from the world. */
export interface DelegationFlowDeps {
  store: Pick<RunRecords, 'getRun'>;
  delegations: DelegationStore;
  assistants: AssistantStore;
  clock: () => Date;
  newId: () => string;
  log: Log;
  limits: DelegationLimits;
  pollMs?: number;
}

/** A child run to create and plan (Steward creates it under this process's lease and plans it like any request). */
export interface ChildRun {
  id: string;
  parentRunId: string;
  conversation: Conversation;
  requester: Actor;
  assistant: string;
  request: string;
}

/** What delegation asks of Steward. */
export interface DelegationHooks {
  /** Creates the child run and starts planning it; resolves once it is stored (planning goes on). */
  startChild(child: ChildRun): Promise<void>;
  /** A decision on a child run, taken as a person's (recorded, forwarded to the child's holder if need be). */
  decide(d: InboundDecision): Promise<void>;
}

/** The call options a delegate step brings: the calling run and step, its signal and what is left of its timeout. */
export interface DelegateCall {
  signal: AbortSignal;
  timeoutMs: number;
  runId?: string;
  stepId?: string;
}

/** Runs delegate steps and carries parents' decisions to their children. */
export class DelegationFlow {
  /** Delegate steps waiting here, by child run: told when the child ends in this process. */
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly closing = new AbortController();

  constructor(
    private readonly deps: DelegationFlowDeps,
    private readonly hooks: DelegationHooks,
  ) {}

  /** A `steward.delegate` call: the child's report, an escalation when the rounds ran out, or why not. */
  async call(args: Record<string, Json>, call: DelegateCall): Promise<ToolCallOutcome> {
    const parsed = parseDelegateArgs(args);
    if (typeof parsed === 'string') return failed(parsed);
    if (!call.runId || !call.stepId) return failed('a delegation is made by a step of a running plan');
    try {
      return await this.delegate(parsed, call.runId, call.stepId, call);
    } catch (err) {
      // The database failed under the brakes (after the store's own retries): the step may be tried again.
      if (call.signal.aborted) return cancelled(parsed.assistant);
      return { ok: false, error: { code: 'tool_error', message: (err as Error).message, retryable: true } };
    }
  }

  private async delegate(a: DelegateArgs, runId: string, stepId: string, call: DelegateCall): Promise<ToolCallOutcome> {
    const { store, delegations, assistants, clock, limits, newId } = this.deps;
    const deadline = clock().getTime() + call.timeoutMs;
    const parent = await store.getRun(runId);
    if (!parent) return failed(`run ${shortRunId(runId)} does not exist`);
    if (!(await assistants.getAssistant(a.assistant))) {
      const names = (await assistants.listAssistants()).map((x) => x.name);
      const there = names.length === 0 ? 'there are none' : `there are: ${names.join(', ')}`;
      return failed(`There is no Assistant named "${a.assistant}"; ${there}.`);
    }
    const id = delegationIdOf(runId, stepId);
    // Stopped before anything was handed out: nothing is spawned (the parent's Stop found no child to stop).
    if (call.signal.aborted) return cancelled(a.assistant);
    const spawned = await delegations.spawn(
      {
        id,
        childRunId: newId(),
        parentRunId: runId,
        conversation: parent.conversation,
        assistant: a.assistant,
        requester: parent.requester,
        task: a.task,
        ...(a.depth !== undefined && { requestedDepth: a.depth }),
      },
      limits,
      clock(),
    );
    if (!spawned.ok) {
      if (spawned.brake !== 'rounds') return failed(brakeSentence(spawned, a.assistant));
      // The Assistant is not called again: the parent takes over, with every round it had in front of it.
      const rounds = await delegations.rounds(parent.conversation, a.assistant);
      const text = escalationText(a.assistant, rounds, spawned.limit);
      return {
        ok: true,
        value: { content: [{ type: 'text', text }], structuredContent: { escalated: true, rounds: rounds.length } },
      } satisfies ToolCallOutcome;
    }
    const childRunId = spawned.childRunId;
    // A retried step (after a restart) finds its child run and waits for it again rather than starting another.
    if (!(await store.getRun(childRunId))) {
      // Stopped while the delegation was recorded: the child is never created, and its slot is freed.
      if (call.signal.aborted) {
        await delegations.endChild(id, `Stopped before ${a.assistant} was asked.`, clock());
        return cancelled(a.assistant);
      }
      const told = await delegations.countMessage(id, limits, clock());
      if (!told.ok) return this.refuse(id, brakeSentence(told, a.assistant));
      const child = {
        id: childRunId,
        parentRunId: runId,
        conversation: parent.conversation,
        requester: parent.requester,
      };
      await this.hooks.startChild({ ...child, assistant: a.assistant, request: a.task });
    }
    const end = await this.untilEnded(childRunId, call.signal, deadline);
    if (end === 'aborted') {
      // Stopped with its parent (the child is stopped too), or let go of at shutdown (the child goes on, and whoever
      // takes the parent over waits for it again): either way the delegation ends when the child does.
      void this.endWhenEnded(id, a.assistant, childRunId);
      return cancelled(a.assistant);
    }
    if (end === 'late') {
      // The child is stopped (its finished results kept, its own report in the thread); the slot is freed then.
      const child = await store.getRun(childRunId);
      if (child && !isTerminal(child.status)) await this.stopChild(child, parent.requester);
      return failed(`${a.assistant} did not finish in time, so its run was stopped.`);
    }
    const reply = replyOf(a.assistant, end);
    const answered = await delegations.countMessage(id, limits, clock());
    if (!answered.ok) return this.refuse(id, brakeSentence(answered, a.assistant));
    await delegations.endChild(id, reply, clock());
    if (end.status !== 'completed') return failed(reply);
    return {
      ok: true,
      value: {
        content: [{ type: 'text', text: reply }],
        structuredContent: { assistant: a.assistant, run: childRunId, status: end.status },
      },
    } satisfies ToolCallOutcome;
  }

  /** Ends the delegation (freeing its slot) once its child has ended, while this process lives; else the sweep does. */
  private async endWhenEnded(id: string, assistant: string, childRunId: string): Promise<void> {
    const { delegations, clock, log } = this.deps;
    try {
      const end = await this.untilEnded(childRunId, this.closing.signal, Number.POSITIVE_INFINITY);
      if (typeof end === 'object') await delegations.endChild(id, replyOf(assistant, end), clock());
    } catch (err) {
      if (!this.closing.signal.aborted) log('warn', `delegation ${id}: not ended yet: ${(err as Error).message}`);
    }
  }

  /** Shutdown: waits in the background end (the sweep of whichever process runs next frees what they would have). */
  close(): void {
    this.closing.abort();
  }

  /** A brake refused a message: the delegation ends with the refusal as its reply, and the step fails with it. */
  private async refuse(id: string, sentence: string): Promise<ToolCallOutcome> {
    await this.deps.delegations.endChild(id, sentence, this.deps.clock());
    return failed(sentence);
  }

  /** Waits until the child has ended and reported: looks now and then, and at once when this process ends it. */
  private async untilEnded(
    childRunId: string,
    signal: AbortSignal,
    deadline: number,
  ): Promise<ChildEnd | 'aborted' | 'late'> {
    const { delegations, clock } = this.deps;
    const pollMs = this.deps.pollMs ?? DEFAULT_DELEGATION_POLL_MS;
    for (;;) {
      if (signal.aborted) return 'aborted';
      const end = await delegations.childEnd(childRunId);
      if (end) return end;
      const left = deadline - clock().getTime();
      if (left <= 0) return 'late';
      await this.wake(childRunId, Math.min(pollMs, left), signal);
    }
  }

  private wake(childRunId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const set = this.waiting.get(childRunId) ?? new Set();
      this.waiting.set(childRunId, set);
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0) this.waiting.delete(childRunId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }

  /**
   * A run ended and reported in this process: a delegate step waiting for it looks again at once, and its own children
   * still active are stopped (however it ended: Stop, Cancel of held steps, a review that ran out, a failure), so no
   * child outlives its parent.
   */
  ended(runId: string, requester: Actor): void {
    for (const wake of [...(this.waiting.get(runId) ?? [])]) wake();
    this.propagate(runId, 'stop', requester).catch((err: unknown) => {
      this.deps.log('warn', `run ${runId}: its delegated runs were not stopped: ${(err as Error).message}`);
    });
  }

  /**
   * A run started in this process: a delegated run whose parent is paused (it was paused while this one was planned or
   * waited for review) is paused before its first call, as its requester's decision; the parent's Resume resumes it.
   */
  async started(run: StoredRun): Promise<void> {
    if (run.parentRunId === undefined) return;
    const parent = await this.deps.store.getRun(run.parentRunId);
    if (parent?.status !== 'paused') return;
    // As it is now: restored after a restart, it may be paused already.
    const now = await this.deps.store.getRun(run.id);
    if (now?.status !== 'running') return;
    await this.hooks.decide({ runId: run.id, revision: now.revision, action: 'pause', actor: run.requester });
    // A Resume of the parent between the first read and that pause found this child running and let it be: look
    // again, so the child never stays paused under a running parent (its Resume writes, then reads the children).
    const after = await this.deps.store.getRun(run.parentRunId);
    if (after?.status === 'paused') return;
    const paused = await this.deps.store.getRun(run.id);
    if (paused?.status !== 'paused') return;
    await this.hooks.decide({ runId: run.id, revision: paused.revision, action: 'resume', actor: run.requester });
  }

  /**
   * A person paused, resumed or stopped a parent (the decision was accepted): its active children follow, as that
   * person's decision, so each is recorded on the child and reaches the process that drives it.
   */
  async propagate(parentRunId: string, action: 'pause' | 'resume' | 'stop', actor: Actor): Promise<void> {
    const { delegations, store } = this.deps;
    for (const d of await delegations.childrenOf(parentRunId)) {
      if (d.endedAt !== null) continue;
      const child = await store.getRun(d.childRunId);
      // Ended, or already stopping (a Stop carried here twice, by the parent's decision and by its end).
      if (!child || isTerminal(child.status) || child.status === 'stopping') continue;
      // Only children in a state the action applies to: a child waiting for review is not paused, but stopped.
      if (action === 'pause' && child.status !== 'running') continue;
      if (action === 'resume' && child.status !== 'paused') continue;
      if (action === 'stop') await this.stopChild(child, actor);
      else await this.hooks.decide({ runId: child.id, revision: child.revision, action, actor });
    }
  }

  private async stopChild(child: StoredRun, actor: Actor): Promise<void> {
    // A child still being planned or waiting for review ends cancelled; a running one stops.
    const action = child.status === 'planning' || child.status === 'awaiting_review' ? 'cancel' : 'stop';
    await this.hooks.decide({ runId: child.id, revision: child.revision, action, actor });
  }

  /**
   * Frees the slots whose delegation's end was lost (the parent's step let go of before its child ended): for the
   * watch round. Returns how many it freed.
   */
  async sweep(): Promise<number> {
    const now = this.deps.clock();
    return this.deps.delegations.releaseOrphans(new Date(now.getTime() - UNSTARTED_GRACE_MS), now);
  }
}

/** What a child's end says to its parent: its report, or a sentence when it has none. */
function replyOf(assistant: string, end: ChildEnd): string {
  if (end.report !== null && end.report.trim() !== '') {
    return end.status === 'completed' ? end.report : `${assistant}'s run ${end.status}: ${cut(end.report, 2_000)}`;
  }
  return `${assistant}'s run ${end.status} with no report.`;
}

function failed(message: string): ToolCallOutcome {
  return { ok: true, value: { content: [{ type: 'text', text: message }], isError: true } };
}

function cancelled(assistant: string): ToolCallOutcome {
  const error: StepError = {
    code: 'cancelled',
    message: `stopped while waiting for ${assistant}`,
    retryable: false,
  };
  return { ok: false, error };
}
