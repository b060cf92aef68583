/**
 * After a restart, or when the process that drove a run died: the run is picked up from the database. Finished steps are never run again;
 * a step that was in flight runs again only if its tool is idempotent (and it has attempts left), otherwise the run
 * waits for a person. A run that ended without its report being sent gets it now.
 */
import type { Plan } from '../plan/plan-schema.ts';
import { planWarnings } from '../plan/tool-warnings.ts';
import { validatePlan, type ValidatedPlan } from '../plan/validate-plan.ts';
import { isQuickRevision } from '../run/quick-loop.ts';
import type { RunRecords, RunSteering, StepLog, StoredRun, UnreportedRun } from '../ports.ts';
import { toPlanCard } from '../run/plan-card.ts';
import { endedDispatch, restoreDispatch, restoreFirstReview } from '../run/restore.ts';
import { atFirstReview } from '../run/run-actions.ts';
import { policiesFor } from '../run/step-policies.ts';
import { breakpointOffers } from './breakpoint-offers.ts';
import { endInterrupted } from './interrupted-steps.ts';
import type { StewardDeps } from './deps.ts';
import type { PlanEstimates } from './plan-estimates.ts';
import type { ReviewTimers } from './review-timers.ts';
import type { RunLifecycle } from './run-lifecycle.ts';
import type { RunMessages } from './run-messages.ts';

/** Resumes the unfinished runs of a database. */
export class Recovery {
  constructor(
    private readonly deps: Pick<StewardDeps, 'tools' | 'clock' | 'settings'> & {
      store: RunRecords & StepLog & RunSteering;
      estimates?: PlanEstimates;
    },
    private readonly timers: ReviewTimers,
    private readonly messages: RunMessages,
    private readonly lifecycle: RunLifecycle,
  ) {}

  /** Resumes one unfinished run past planning that this process just claimed under `fence`. */
  async recover(run: StoredRun, fence: number): Promise<void> {
    const { store, clock, settings, tools } = this.deps;
    if (!run.plan) return;
    const v = validatePlan(run.plan, tools.listTools());
    if (!v.ok) {
      await store.transition(run.id, [run.status], 'failed', { at: clock() });
      await this.messages.notice(run, 'error', `After a restart the plan is no longer valid: ${v.error.join('; ')}`);
      return;
    }
    // The quick path's calls (their own revision) are no steps of the plan.
    const attempts = (await store.listStepAttempts(run.id)).filter((a) => !isQuickRevision(a.revision));
    const cardOptions = {
      amendmentsLeft: this.messages.amendmentsLeft(run),
      requester: run.requester,
      breakpoints: run.breakpoints,
      warnings: planWarnings(v.value.plan, tools.listTools()),
    };
    if (run.status === 'awaiting_review' && attempts.length === 0) {
      // The card shown again carries an estimate as the first one did (remembered for its approval).
      const estimate = await this.deps.estimates?.forCard(run.id, run.revision, v.value);
      // The same offers as the first card, so the card shown again reads the same.
      const offers = await breakpointOffers(this.deps, run.requester, v.value.plan, { set: run.breakpoints });
      const card = toPlanCard(run.id, run.revision, v.value, {
        ...cardOptions,
        needsReview: true,
        suggestedBreakpoints: offers,
        ...(estimate && { estimate }),
      });
      await this.messages.send(run.conversation, card);
      this.timers.arm(run, run.revision, v.value.risk === 'high', run.reviewDueAt ?? undefined);
      return;
    }
    // Nobody approved this plan yet (steps started early while it was written): its review card comes back as it was,
    // shown by the dispatcher's hold (`RunLifecycle.onHold`), with the same deadline.
    if (atFirstReview(run)) return this.recoverFirstReview(run, v.value, fence);
    const restored = restoreDispatch(v.value.plan, policiesFor(v.value.plan, tools.listTools()), attempts, run.status, {
      ...settings,
      approvedRisk: run.approvedRisk ?? v.value.risk,
      breakpoints: run.breakpoints,
    });
    // Only what this takeover found in flight is news: a step an earlier takeover already found interrupted (and
    // told of, the run paused since) is told of again by no one, however often the run changes hands while it waits.
    const inFlight = new Set(attempts.filter((a) => a.status === 'running').map((a) => a.stepId));
    const news = (steps: readonly string[]) => steps.filter((id) => inFlight.has(id));
    for (const a of attempts.filter((x) => x.status === 'running')) {
      // A step whose last attempt this was keeps the restored error, which says its attempts are used up.
      const used = restored.exhausted.includes(a.stepId) ? restored.state.steps[a.stepId]?.error : undefined;
      const error = used ?? {
        code: 'interrupted' as const,
        message: 'Steward stopped while this step was running',
        retryable: false,
      };
      const end = { status: 'failed' as const, output: null, error, at: clock(), durationMs: 0, fence };
      await store.recordStepEnded({ runId: run.id, stepId: a.stepId, attempt: a.attempt, ...end });
    }
    // On record before anything is said of it: a process killed after telling the thread has stored the takeover.
    const event = { interrupted: restored.interrupted, retried: restored.retried, exhausted: restored.exhausted };
    await store.appendEvent(run.id, 'recovered', event, clock());
    const paused = restored.state.phase === 'paused';
    const actions = paused ? (['resume', 'stop'] as const) : (['pause', 'stop'] as const);
    // What is left of it: the steps that ended are left out.
    const estimate = await this.deps.estimates?.forCard(run.id, run.revision, v.value, restored.state.steps);
    const card = toPlanCard(run.id, run.revision, v.value, {
      ...cardOptions,
      needsReview: false,
      actions: [...actions],
      progress: restored.state.steps,
      ...(estimate && { estimate }),
    });
    await this.messages.send(run.conversation, card);
    if (restored.interrupted.length > 0) await store.transition(run.id, ['running'], 'paused', { at: clock() });
    // Only what changed is said: a takeover between steps carries on with nothing to tell (the card shows it).
    if (news(restored.interrupted).length > 0) {
      await this.messages.notice(run, 'warning', interruptedNotice(news(restored.interrupted), v.value.plan));
    } else if (news(restored.retried).length > 0) {
      await this.messages.notice(run, 'info', retriedNotice(news(restored.retried)));
    }
    if (news(restored.exhausted).length > 0) {
      await this.messages.notice(run, 'warning', exhaustedNotice(news(restored.exhausted), settings.maxAttempts));
    }
    this.lifecycle.start(run, v.value, await store.listPins(run.id), restored.state);
  }

  /** A first review after steps started early: steps in flight are marked interrupted, and the review goes on. */
  private async recoverFirstReview(run: StoredRun, v: ValidatedPlan, fence: number): Promise<void> {
    const { store, clock, settings, tools } = this.deps;
    const attempts = (await store.listStepAttempts(run.id)).filter((a) => !isQuickRevision(a.revision));
    const options = { ...settings, breakpoints: run.breakpoints };
    const restored = restoreFirstReview(v.plan, policiesFor(v.plan, tools.listTools()), attempts, options);
    await endInterrupted(this.deps, run.id, attempts, fence);
    const event = { interrupted: [], retried: restored.retried, exhausted: restored.exhausted, firstReview: true };
    await store.appendEvent(run.id, 'recovered', event, clock());
    this.lifecycle.start(run, v, await store.listPins(run.id), restored.state);
  }

  /**
   * Reports a run that ended without its report being sent: the report stored before is sent as it is; otherwise
   * one is written from the step results rebuilt from its stored attempts, stored, and sent.
   */
  async report(run: UnreportedRun): Promise<void> {
    const { tools, settings } = this.deps;
    const status = run.status;
    if (status !== 'completed' && status !== 'failed' && status !== 'stopped') return;
    if (run.report !== null) return this.lifecycle.report(run, status, { stored: run.report });
    // Only a run that was driven owes a report, and it has a plan; without one the report says only how it ended.
    const plan: Plan = run.plan ?? {
      summary: run.request,
      rationale: '',
      needsTools: true,
      answer: null,
      risks: [],
      steps: [],
    };
    const attempts = await this.deps.store.listStepAttempts(run.id);
    const final = endedDispatch(plan, policiesFor(plan, tools.listTools()), attempts, status, settings);
    // The card may not have learned that the run ended: the kill can have come before that message too.
    await this.messages.status(run, status);
    await this.lifecycle.report(run, status, { final });
  }
}

/**
 * Why the run waits after a restart: steps that may have acted already and are not safe to repeat blindly. An `llm`
 * step has no tool: it is said to have asked the model, which running it again does once more.
 */
/** Steps in flight at a restart that are safe to repeat, and run again. */
function retriedNotice(steps: readonly string[]): string {
  const which = steps.join(', ');
  return steps.length > 1
    ? `Steward restarted while ${which} were running; running them again (their tools are safe to repeat).`
    : `Steward restarted while ${which} was running; running it again (its tool is safe to repeat).`;
}

function interruptedNotice(steps: readonly string[], plan: Plan): string {
  const many = steps.length > 1;
  const asksModel = new Set(plan.steps.filter((s) => s.kind === 'llm').map((s) => s.id));
  const tools = steps.filter((id) => !asksModel.has(id));
  const models = steps.filter((id) => asksModel.has(id));
  const toolWords = (they: string) =>
    `${they} may have acted already and ${tools.length > 1 ? 'are' : 'is'} not safe to repeat blindly`;
  const modelWords = (they: string) =>
    `${they} may have been answered already; running ${models.length > 1 ? 'them' : 'it'} again asks the model again`;
  const why =
    models.length === 0
      ? toolWords(many ? 'Their tools' : 'Its tool')
      : tools.length === 0
        ? modelWords(many ? 'Their model calls' : 'Its model call')
        : `${toolWords(`The ${tools.length > 1 ? 'tools' : 'tool'} of ${tools.join(', ')}`)}; ` +
          modelWords(`the model ${models.length > 1 ? 'calls' : 'call'} of ${models.join(', ')}`);
  return (
    `Steward restarted while ${steps.join(', ')} ${many ? 'were' : 'was'} running. ${why}: ` +
    `resume to run ${many ? 'them' : 'it'} again, or stop.`
  );
}

/** Why a step failed after a restart: its last allowed attempt was the one interrupted. */
function exhaustedNotice(steps: readonly string[], maxAttempts: number): string {
  const many = steps.length > 1;
  return (
    `Steward restarted while ${steps.join(', ')} ${many ? 'were' : 'was'} running ${many ? 'their' : 'its'} last ` +
    `attempt (${maxAttempts} of ${maxAttempts}). ${many ? 'They are' : 'It is'} not run again and ` +
    `${many ? 'count' : 'counts'} as failed.`
  );
}
