/**
 * A run's first plan being written: the planner call (abandoned by Cancel or shutdown), the answer without tools,
 * the plan offered, steps that start while it streams (`early-run.ts`), and a run taken over while it was planned.
 */
import type { InboundDecision } from '../channel.ts';
import type { StoredRun, StoredStepAttempt } from '../ports.ts';
import { validatePlan } from '../plan/validate-plan.ts';
import { sentence } from '../run/run-actions.ts';
import type { DecisionAction, RunStatus } from '../types.ts';
import type { StewardDeps } from './deps.ts';
import { startedSteps } from './early-run.ts';
import type { PlanWriter } from './planner.ts';
import type { ReviewFlow } from './review-flow.ts';
import type { RunDrivers } from './run-drivers.ts';
import type { RunLifecycle } from './run-lifecycle.ts';
import type { RunMessages } from './run-messages.ts';

/** Writes first plans and answers Cancel while they are written. */
export class PlanningFlow {
  /** First plans being written, so Cancel (or shutdown) can abandon the planner call at once. */
  private readonly planning = new Map<string, AbortController>();

  constructor(
    private readonly deps: Pick<StewardDeps, 'tools' | 'store' | 'clock' | 'log'>,
    private readonly writePlan: PlanWriter,
    private readonly drivers: RunDrivers,
    private readonly messages: RunMessages,
    private readonly lifecycle: RunLifecycle,
    private readonly review: ReviewFlow,
  ) {}

  /** Plans a request and answers it; planning that throws fails the run, and the requester hears why. */
  async plan(run: Pick<StoredRun, 'id' | 'conversation' | 'requester'>, request: string): Promise<void> {
    await this.planNow(run, request).catch((err: unknown) => this.planningBroke(run, err));
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
  private async planNow(run: Pick<StoredRun, 'id' | 'conversation' | 'requester'>, request: string): Promise<void> {
    const { store, clock } = this.deps;
    await this.planningStatus(run, 'planning', ['cancel']);
    const planning = new AbortController();
    this.planning.set(run.id, planning);
    // Unless every plan is reviewed, steps may start while the plan streams, on a driver of their own.
    const stored = await store.getRun(run.id);
    const early = stored ? await this.lifecycle.startStreaming(stored) : undefined;
    const planned = await this.writePlan(run, request, undefined, planning.signal, early).finally(() =>
      this.planning.delete(run.id),
    );
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
    await store.saveRevision(run.id, 0, v.plan, 'planned', clock());
    if (!v.plan.needsTools) {
      const answer = v.plan.answer ?? v.plan.summary;
      await store.transition(run.id, ['planning'], 'completed', { at: clock() });
      await store.setReport(run.id, answer, clock());
      // An answer the conversation refused still reaches the person who asked, privately.
      await this.messages
        .send(run.conversation, { kind: 'answer', text: answer })
        .catch(() => this.messages.notice(run, 'info', answer, run.requester));
      await this.planningStatus(run, 'completed', []);
      return;
    }
    await this.review.offer(run.id, 0, v, 'planning');
  }

  /** Tells channels where a run being planned stands (no card shows it yet): planning, or how planning ended. */
  private async planningStatus(
    run: Pick<StoredRun, 'id' | 'conversation'>,
    status: RunStatus,
    actions: DecisionAction[],
  ) {
    await this.messages.send(run.conversation, { kind: 'runStatus', runId: run.id, status, actions });
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
    driver?.send({ type: 'stopRequested' });
    // Stored as they ran, so the history, a restart and the report see the steps that started.
    if (driver) await store.saveRevision(run.id, 0, driver.current.plan, 'stopped while it was being written', clock());
    const text = sentence`Stopped by ${d.actor} while it was being planned: the read-only steps that had started (${started.join(', ')}) are stopped; finished results are kept.`;
    await this.messages.notice(run, 'info', text);
    await this.messages.status(run, 'stopping');
    return null;
  }

  /**
   * A run taken over while it was being planned: planning has no side effects, so a first plan is simply written
   * again; an amendment in progress is dropped and the plan as it stood is shown for review again.
   */
  async replan(run: StoredRun, fence: number): Promise<void> {
    const { store, clock, tools } = this.deps;
    const attempts = await store.listStepAttempts(run.id);
    // Steps started while the plan streamed: a plan written again could reuse their ids for other work.
    if (attempts.length > 0) return this.failEarlyPlanning(run, fence, attempts);
    if (run.plan === null) {
      await this.messages.notice(run, 'info', 'Steward restarted while planning this request; planning it again.');
      return this.plan(run, run.request);
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
    await this.review.offer(run.id, run.revision, v.value, 'planning', true);
  }

  /** A run that restarted while its plan was written after steps had started early: it fails, and says why. */
  private async failEarlyPlanning(run: StoredRun, fence: number, attempts: StoredStepAttempt[]): Promise<void> {
    const { store, clock } = this.deps;
    const error = {
      code: 'interrupted' as const,
      message: 'Steward stopped while this step was running',
      retryable: false,
    };
    for (const a of attempts.filter((x) => x.status === 'running')) {
      const end = { status: 'failed' as const, output: null, error, at: clock(), durationMs: 0, fence };
      await store.recordStepEnded({ runId: run.id, stepId: a.stepId, attempt: a.attempt, ...end });
    }
    if (!(await store.transition(run.id, ['planning'], 'failed', { at: clock(), fence }))) return;
    await this.planningStatus(run, 'failed', []);
    const steps = [...new Set(attempts.map((a) => a.stepId))].join(', ');
    const text = `Steward restarted while writing the plan after read-only steps had started (${steps}); nothing more was run. Please ask again.`;
    await this.messages.tellRequester(run, 'error', text);
  }
}
