/**
 * Rebuilds a run's dispatch state from its stored step attempts after a restart.
 * A step that was in flight is run again only if its tool is idempotent and it has attempts left; otherwise the
 * run waits for a person (not idempotent) or the step fails (its last attempt was the one interrupted).
 * Also: the final state of a run that ended, for a report that was never written.
 */
import type { Breakpoint } from '../plan/breakpoints.ts';
import { latestAttempts } from './attempts.ts';
import { createDispatchState, type DispatchState } from './dispatch-state.ts';
import type { StepPolicy } from './step-policies.ts';
import type { Plan } from '../plan/plan-schema.ts';
import type { StoredStepAttempt } from '../ports.ts';
import type { RiskLevel, RunStatus, StepError } from '../types.ts';

export interface Restored {
  state: DispatchState;
  /** Steps that were in flight and are not safe to repeat without asking. */
  interrupted: string[];
  /** Steps that were in flight and will simply run again. */
  retried: string[];
  /** Steps that were in flight on their last allowed attempt: they end failed, as a failed last attempt would. */
  exhausted: string[];
}

/** Why a step whose last allowed attempt was interrupted is not run again. */
export function attemptsUsedUp(attempt: number, maxAttempts: number): StepError {
  return {
    code: 'interrupted',
    message:
      `Steward stopped while attempt ${attempt} of ${maxAttempts} was running; ` +
      'its attempts are used up, so it is not run again',
    retryable: false,
  };
}

/** Restores dispatch state; `status` is the run's stored status (running, paused or stopping). */
export function restoreDispatch(
  plan: Plan,
  policies: Record<string, StepPolicy>,
  attempts: readonly StoredStepAttempt[],
  status: RunStatus,
  options: { maxParallel: number; maxAttempts: number; approvedRisk: RiskLevel; breakpoints: Breakpoint[] },
): Restored {
  const state = createDispatchState(plan, policies, options);
  const latest = latestAttempts(attempts);
  const interrupted: string[] = [];
  const retried: string[] = [];
  const exhausted: string[] = [];
  for (const step of plan.steps) {
    const a = latest.get(step.id);
    if (!a) continue;
    const idempotent = policies[step.id]?.idempotent === true;
    // An attempt an earlier restart recorded as `interrupted` was in flight, and still is as far as anyone knows:
    // the rules below apply to it again (a second restart must not turn "waits for a person" into a failure).
    const inFlight = a.status === 'running' || (a.status === 'failed' && a.error?.code === 'interrupted');
    // An interrupted attempt counts: running it again past the limit would be attempt maxAttempts + 1.
    // A step that is not idempotent still waits for a person, whose resume is an explicit choice to repeat it.
    if (inFlight && idempotent && a.attempt >= options.maxAttempts) {
      state.steps[step.id] = {
        status: 'failed',
        attempt: a.attempt,
        error: attemptsUsedUp(a.attempt, options.maxAttempts),
      };
      exhausted.push(step.id);
      if (!step.optional && state.haltedBy === null) Object.assign(state, { phase: 'halting', haltedBy: step.id });
      continue;
    }
    if (inFlight) {
      state.steps[step.id] = { status: 'pending', attempt: a.attempt };
      (idempotent ? retried : interrupted).push(step.id);
      continue;
    }
    if (a.status === 'pending') continue;
    // A spend cap refused its model call (nothing was sent): it still waits, with the run paused, as before.
    if (a.status === 'failed' && a.error?.code === 'spend_capped') {
      state.steps[step.id] = { status: 'pending', attempt: a.attempt, error: a.error };
      continue;
    }
    // Refused for want of the requester's connection: the call never ran; it runs (or waits again) from here.
    if (a.status === 'failed' && a.error?.code === 'not_connected') {
      state.steps[step.id] = { status: 'pending', attempt: a.attempt };
      continue;
    }
    // The crash came between a failed attempt and its retry: the retry is still owed.
    if (a.status === 'failed' && a.error?.retryable && idempotent && a.attempt < options.maxAttempts) {
      state.steps[step.id] = { status: 'pending', attempt: a.attempt };
      continue;
    }
    state.steps[step.id] = {
      status: a.status,
      attempt: a.attempt,
      output: a.output ?? undefined,
      error: a.error ?? undefined,
    };
    if (a.status === 'failed' && !step.optional && state.haltedBy === null) {
      state.phase = 'halting';
      state.haltedBy = step.id;
    }
  }
  if (state.phase === 'running') {
    if (status === 'paused' || interrupted.length > 0) Object.assign(state, { phase: 'paused', pausedBy: 'user' });
    if (status === 'stopping') state.phase = 'stopping';
  }
  return { state, interrupted, retried, exhausted };
}

/**
 * A plan still under its first review after steps started early (nobody approved any of it): what ran stays done, a
 * step that was in flight runs again once the plan is approved (it only read), and every step not started waits for
 * that review, as before the restart.
 */
export function restoreFirstReview(
  plan: Plan,
  policies: Record<string, StepPolicy>,
  attempts: readonly StoredStepAttempt[],
  options: { maxParallel: number; maxAttempts: number; breakpoints: Breakpoint[] },
): Restored {
  const restored = restoreDispatch(plan, policies, attempts, 'awaiting_review', { ...options, approvedRisk: 'low' });
  const state = { ...restored.state, phase: 'running' as const, pausedBy: null, heldAt: null };
  state.holds = plan.steps
    .filter((s) => state.steps[s.id]?.status === 'pending')
    .map((s) => ({ stepId: s.id, why: 'review' as const }));
  if (restored.state.phase === 'halting') Object.assign(state, { phase: 'halting', holds: [] });
  return { ...restored, state, interrupted: [], retried: [...restored.retried, ...restored.interrupted] };
}

/**
 * The final state of a run that already ended (completed, failed or stopped), for writing its report: each step as
 * its latest attempt left it, nothing owed or retried. A step with no attempt never ran.
 */
export function endedDispatch(
  plan: Plan,
  policies: Record<string, StepPolicy>,
  attempts: readonly StoredStepAttempt[],
  outcome: 'completed' | 'failed' | 'stopped',
  options: { maxParallel: number; maxAttempts: number },
): DispatchState {
  const state = createDispatchState(plan, policies, options);
  const latest = latestAttempts(attempts);
  for (const step of plan.steps) {
    const a = latest.get(step.id);
    if (!a || a.status === 'pending') {
      state.steps[step.id] = { status: 'pending', attempt: a?.attempt ?? 0, note: 'never ran' };
    } else if (a.status === 'running') {
      // The run ended, yet this attempt's end was never stored: say so rather than guess.
      const error: StepError = {
        code: 'interrupted',
        message: 'its end was never recorded',
        retryable: false,
      };
      state.steps[step.id] = { status: 'failed', attempt: a.attempt, error };
    } else {
      state.steps[step.id] = {
        status: a.status,
        attempt: a.attempt,
        ...(a.output === null ? {} : { output: a.output }),
        ...(a.error === null ? {} : { error: a.error }),
      };
    }
  }
  return { ...state, phase: 'done', outcome };
}
