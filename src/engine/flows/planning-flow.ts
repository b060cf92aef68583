/**
 * A run's first plan being written: the quick answer tried first (`quick-answer.ts`) with the planner asked beside it
 * (`speculative-plan.ts`; its steps wait for the hand-over), or the planner alone (both abandoned by Cancel or
 * shutdown), the answer without tools, the plan offered, steps that start while it streams (`early-run.ts`), and a
 * run taken over while it was planned.
 */
import type { InboundDecision } from '../channel.ts';
import type { Ledgers, RunRecords, RunRoute, RunSteering, StepLog, StoredRun, StoredStepAttempt } from '../ports.ts';
import { isQuickRevision } from '../run/quick-loop.ts';
import { validatePlan } from '../plan/validate-plan.ts';
import { sentence } from '../run/run-actions.ts';
import type { DecisionAction, RunStatus } from '../types.ts';
import type { StewardDeps } from './deps.ts';
import { startedSteps } from './early-run.ts';
import { endInterrupted } from './interrupted-steps.ts';
import type { PlanStreaming, PlanWriter } from './planner.ts';
import type { QuickAnswers } from './quick-answer.ts';
import type { ReviewFlow } from './review-flow.ts';
import type { RunDrivers } from './run-drivers.ts';
import { reviewPreferenceOf, type RunLifecycle } from './run-lifecycle.ts';
import type { RunMessages } from './run-messages.ts';
import { HeldSettlement } from './metered-llm.ts';
import { SpeculativePlan } from './speculative-plan.ts';

/** Writes first plans and answers Cancel while they are written. */
export class PlanningFlow {
  /** First plans being written, so Cancel (or shutdown) can abandon the planner call at once. */
  private readonly planning = new Map<string, AbortController>();

  constructor(
    private readonly deps: Pick<StewardDeps, 'tools' | 'clock' | 'log' | 'newId'> & {
      store: RunRecords & StepLog & RunSteering & Ledgers;
    },
    private readonly writePlan: PlanWriter,
    private readonly drivers: RunDrivers,
    private readonly messages: RunMessages,
    private readonly lifecycle: RunLifecycle,
    private readonly review: ReviewFlow,
    /** Quick answers, when they are on: tried before the planner on every new request. */
    private readonly quick?: QuickAnswers,
    /**
     * Whether the planner is asked beside the front desk (the default) or only once it hands the request over
     * (`after`: no planner call is wasted on a request the front desk answers).
     */
    private readonly frontDesk: 'beside' | 'after' = 'beside',
  ) {}

  /**
   * Plans a request and answers it; planning that throws fails the run, and the requester hears why. `quick: false`
   * goes straight to the planner (the quick path already handed this request over).
   */
  async plan(
    run: Pick<StoredRun, 'id' | 'conversation' | 'requester' | 'assistant' | 'parentRunId'>,
    request: string,
    options: { quick?: boolean; stored?: StoredRun } = {},
  ): Promise<void> {
    // The planner's call is settled by the write that saves its plan; one whose plan is not saved settles on its own.
    const held = new HeldSettlement(this.deps.store, this.deps.newId);
    await this.planNow(run, request, options.quick ?? true, held, options.stored)
      .catch((err: unknown) => this.planningBroke(run, err))
      .finally(() =>
        held
          .flush()
          .catch((err: unknown) =>
            this.deps.log('warn', `run ${run.id}: the planner's call not settled: ${(err as Error).message}`),
          ),
      );
  }

  /** Whether a tool may be called for this person before they saw a plan: not when they review every plan. */
  private async mayCallUnreviewed(run: Pick<StoredRun, 'requester' | 'reviewPreference'>): Promise<boolean> {
    // The run as its creating write stored it carries the preference: no statement of its own then.
    return (await reviewPreferenceOf(this.deps.store, run)) !== 'all';
  }

  /** Whether this process is writing the run's first plan now. */
  isPlanning(runId: string): boolean {
    return this.planning.has(runId);
  }

  /** Shutdown: every planner call is abandoned; the runs stay in `planning` for whoever takes them over. */
  abandonAll(): void {
    for (const planning of this.planning.values()) planning.abort();
  }

  /** Planning threw (the database or the channel failed): the run fails if it can, and the requester hears why. */
  private async planningBroke(run: Pick<StoredRun, 'id' | 'conversation' | 'requester'>, err: unknown) {
    const { store, clock, log } = this.deps;
    const reason = err instanceof Error ? err.message : String(err);
    log('error', `run ${run.id}: planning failed: ${reason}`);
    const failed = await store.transition(run.id, ['planning'], 'failed', { at: clock() }).catch(() => false);
    const text = failed
      ? `I could not finish planning this request (${reason.slice(0, 200)}); nothing was run. Please ask again.`
      : `Something went wrong while planning this request (${reason.slice(0, 200)}).`;
    await this.messages
      .tellRequester(run, 'error', text)
      .catch((e: unknown) => log('error', `run ${run.id}: the requester could not be told: ${(e as Error).message}`));
  }

  /** Plans a request and answers it: directly when it needs no tools, else with a plan card (or the run starts). */
  private async planNow(
    run: Pick<StoredRun, 'id' | 'conversation' | 'requester' | 'assistant' | 'parentRunId'>,
    request: string,
    quick: boolean,
    held: HeldSettlement,
    /** The run as its creating write stored it, when that write just happened here. */
    created?: StoredRun,
  ): Promise<void> {
    const { store, clock } = this.deps;
    // An Assistant's run is planned with only its granted tools: the quick loop, which knows no grants, is not for it;
    // nor is a person who reviews every plan: they see a card before any tool is called (as with early start).
    const tryQuick =
      quick && !run.assistant && this.quick?.hasTools() === true && (await this.mayCallUnreviewed(created ?? run));
    // A request the quick path may answer is not said to be planned until it is handed to the planner.
    await this.planningStatus(run, 'planning', ['cancel'], tryQuick);
    const planning = new AbortController();
    this.planning.set(run.id, planning);
    let speculative: SpeculativePlan | undefined;
    if (tryQuick) {
      // The planner is asked now too, so a request the front desk hands over has its plan under way; one it answers
      // drops it. Its steps wait for the hand-over: nothing starts for a request the front desk answers.
      // It is asked once the front desk's first call is under way, so its prompt's making does not hold that call up
      // (a request the front desk hands over without a call gets it then).
      const askPlanner = () => {
        if (this.frontDesk !== 'beside' || speculative) return;
        const catalog = this.deps.tools.listTools();
        const write = (signal: AbortSignal, streaming: PlanStreaming) =>
          this.writePlan(run, request, undefined, signal, streaming, held.settle);
        speculative = new SpeculativePlan(write, planning.signal, catalog);
      };
      // Cancel aborts the quick loop as it aborts the planner: the run stays `planning` meanwhile.
      // The run as created here, when it was: its revision says no earlier round of the quick path can be stored.
      const q = await this.quickAnswer(created ?? run, request, planning.signal, askPlanner).catch((err: unknown) => {
        speculative?.drop();
        this.planning.delete(run.id);
        throw err;
      });
      if (planning.signal.aborted) return void this.planning.delete(run.id);
      if (q.route === 'quick') {
        speculative?.drop();
        this.planning.delete(run.id);
        return this.answerDirectly(run, q.text, 'quick');
      }
      askPlanner();
      await store.setRoute(run.id, 'plan', clock());
      await this.planningStatus(run, 'planning', ['cancel']);
    }
    // Unless every plan is reviewed, steps may start while the plan streams, on a driver of their own. The run as
    // created will do when nothing happened since (the quick path, tried first, may take seconds).
    const stored = (!tryQuick && created) || (await store.getRun(run.id));
    const early = stored ? await this.lifecycle.startStreaming(stored, speculative?.catalog) : undefined;
    const planned = await (
      speculative
        ? speculative.handOver(early)
        : this.writePlan(run, request, undefined, planning.signal, early, held.settle)
    ).finally(() => this.planning.delete(run.id));
    // Cancelled (the person was told) or shut down (the next start plans it again): nothing more to say.
    if (planning.signal.aborted) return;
    if (early && (await this.review.offerEarly(early, planned))) return;
    if (!planned.ok) {
      if (!(await store.transition(run.id, ['planning'], 'failed', { at: clock() }))) return;
      await this.planningStatus(run, 'failed', []);
      const text = 'callFailed' in planned ? 'I could not plan this request' : 'I could not make a valid plan';
      await this.messages.tellRequester(run, 'error', `${text}: ${planned.error}`);
      return;
    }
    const v = planned.value;
    const saved = await store.saveRevision(run.id, 0, v.plan, 'planned', clock(), held.take());
    if (!v.plan.needsTools) return this.answerDirectly(run, v.plan.answer ?? v.plan.summary, 'answer');
    await this.review.offer(saved, 0, v, 'planning');
  }

  /** A request answered without a plan (by the planner, or by the quick path): the run ends with the answer. */
  private async answerDirectly(
    run: Pick<StoredRun, 'id' | 'conversation' | 'requester'>,
    answer: string,
    route: RunRoute,
  ): Promise<void> {
    const { store, clock } = this.deps;
    // The answer is stored by the move that ends its run (one statement, and only when the move applies).
    const completed = await store.transition(run.id, ['planning'], 'completed', { at: clock(), report: answer });
    // Cancelled meanwhile (the person was told): the answer is not sent.
    if (!completed && route === 'quick') return;
    // A quick answer's route was stored when its loop started; a planned run's is the default.
    if (route === 'answer') await store.setRoute(run.id, route, clock());
    // The planner's answer of a run that moved on meanwhile (taken over) is still stored and sent, as it always was.
    if (!completed) await store.setReport(run.id, answer, clock());
    // An answer the conversation refused still reaches the person who asked, privately.
    await this.messages
      .send(run.conversation, { kind: 'answer', text: answer })
      .catch(() => this.messages.notice(run, 'info', answer, run.requester));
    await this.planningStatus(run, 'completed', []);
  }

  /** The quick loop, which notes the run's route `quick` while it works (a restart then tries it again). */
  private async quickAnswer(
    run: Pick<StoredRun, 'id' | 'requester'> & Partial<Pick<StoredRun, 'revision'>>,
    request: string,
    signal: AbortSignal,
    firstCallSent: () => void,
  ) {
    if (!this.quick) return { route: 'plan' as const };
    return this.quick.answer(run, request, signal, firstCallSent);
  }

  /** Tells channels where a run being planned stands (no card shows it yet): planning, or how planning ended. */
  private async planningStatus(
    run: Pick<StoredRun, 'id' | 'conversation' | 'parentRunId'>,
    status: RunStatus,
    actions: DecisionAction[],
    quick = false,
  ) {
    // A delegated run says whose step it is from its first message, so a channel can keep it apart from its parent.
    const delegatedBy = run.parentRunId ? { delegatedBy: run.parentRunId } : {};
    const change = { kind: 'runStatus' as const, runId: run.id, status, actions, ...delegatedBy };
    await this.messages.send(run.conversation, quick ? { ...change, quick: true } : change);
  }

  /** Cancel (or Stop) while a first plan is being written: the run ends and the planner call is abandoned. */
  async cancel(run: StoredRun, d: InboundDecision): Promise<string | null> {
    const { store, clock } = this.deps;
    const driver = this.drivers.get(run.id);
    const started = driver ? startedSteps(driver.current) : [];
    if (driver && started.length > 0) return this.stopPlanning(run, d, started);
    if (!(await store.transition(run.id, ['planning'], 'cancelled', { at: clock() }))) {
      return 'This request is no longer being planned.';
    }
    // Nothing started early: the streaming driver goes with the planner call.
    if (driver) this.drivers.letGo(run.id);
    this.planning.get(run.id)?.abort();
    await this.messages.notice(
      run,
      'info',
      sentence`Cancelled by ${d.actor} while it was being planned. Nothing was run.`,
    );
    await this.planningStatus(run, 'cancelled', []);
    return null;
  }

  /** Stop while the plan is written after steps started early: they are stopped and the run ends with a report. */
  private async stopPlanning(run: StoredRun, d: InboundDecision, started: string[]): Promise<string | null> {
    const { store, clock } = this.deps;
    if (!(await store.transition(run.id, ['planning'], 'stopping', { at: clock() }))) {
      return 'This request is no longer being planned.';
    }
    this.planning.get(run.id)?.abort();
    const driver = this.drivers.get(run.id);
    // The Stop is said before the steps it cancels are shown.
    const release = driver?.holdMessages();
    try {
      driver?.send({ type: 'stopRequested' });
      // Stored as they ran, so the history, a restart and the report see the steps that started.
      if (driver)
        await store.saveRevision(run.id, 0, driver.current.plan, 'stopped while it was being written', clock());
      const text = sentence`Stopped by ${d.actor} while it was being planned: the read-only steps that had started (${started.join(', ')}) are stopped; finished results are kept.`;
      await this.messages.notice(run, 'info', text);
      await this.messages.status(run, 'stopping');
    } finally {
      release?.();
    }
    return null;
  }

  /**
   * A run taken over while it was being planned: planning has no side effects, so a first plan is simply written
   * again; an amendment in progress is dropped and the plan as it stood is shown for review again.
   */
  async replan(run: StoredRun, fence: number): Promise<void> {
    const { store, clock, tools } = this.deps;
    const all = await store.listStepAttempts(run.id);
    // The quick path's calls only read, and are kept apart from any plan's steps (their own revision).
    await endInterrupted(
      this.deps,
      run.id,
      all.filter((a) => isQuickRevision(a.revision)),
      fence,
      'call',
    );
    const attempts = all.filter((a) => !isQuickRevision(a.revision));
    // Steps started while the plan streamed: a plan written again could reuse their ids for other work.
    if (attempts.length > 0) return this.failEarlyPlanning(run, fence, attempts);
    // No plan yet, or only the quick path's record of calls: the quick answer (if it was working, not handed over)
    // and the planner start again; both only read.
    if (run.plan === null || isQuickRevision(run.revision)) {
      await this.messages.notice(run, 'info', 'Steward restarted while planning this request; planning it again.');
      return this.plan(run, run.request, { quick: run.route === 'quick' });
    }
    const v = validatePlan(run.plan, tools.listTools());
    if (!v.ok) {
      await store.transition(run.id, ['planning'], 'failed', { at: clock() });
      await this.messages.tellRequester(
        run,
        'error',
        `After a restart the plan is no longer valid: ${v.error.join('; ')}`,
      );
      return;
    }
    const text =
      'Steward restarted while re-planning this request, so that amendment was not applied. ' +
      'Here is the plan as it stood: approve, amend again or cancel.';
    await this.messages.notice(run, 'warning', text);
    await this.review.offer(run.id, run.revision, v.value, 'planning', 'always');
  }

  /** A run that restarted while its plan was written after steps had started early: it fails, and says why. */
  private async failEarlyPlanning(run: StoredRun, fence: number, attempts: StoredStepAttempt[]): Promise<void> {
    const { store, clock } = this.deps;
    await endInterrupted(this.deps, run.id, attempts, fence);
    if (!(await store.transition(run.id, ['planning'], 'failed', { at: clock(), fence }))) return;
    await this.planningStatus(run, 'failed', []);
    const steps = [...new Set(attempts.map((a) => a.stepId))].join(', ');
    const text = `Steward restarted while writing the plan after read-only steps had started (${steps}); nothing more was run. Please ask again.`;
    await this.messages.tellRequester(run, 'error', text);
  }
}
