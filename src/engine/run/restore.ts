/**
 * Rebuilds a run's dispatch state from its stored step attempts after a restart.
 * A step that was in flight is run again only if its tool is idempotent; otherwise the run waits for a person.
 */
import type { Breakpoint } from '../plan/breakpoints.ts';
import { latestAttempts } from './attempts.ts';
import { createDispatchState, type DispatchState } from './dispatch-state.ts';
import type { StepPolicy } from './step-policies.ts';
import type { Plan } from '../plan/plan-schema.ts';
import type { StoredStepAttempt } from '../ports.ts';
import type { RiskLevel, RunStatus } from '../types.ts';

export interface Restored {
  state: DispatchState;
  /** Steps that were in flight and are not safe to repeat without asking. */
  interrupted: string[];
  /** Steps that were in flight and will simply run again. */
  retried: string[];
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
  for (const step of plan.steps) {
    const a = latest.get(step.id);
    if (!a) continue;
    if (a.status === 'running') {
      state.steps[step.id] = { status: 'pending', attempt: a.attempt };
      (policies[step.id]?.idempotent ? retried : interrupted).push(step.id);
      continue;
    }
    if (a.status === 'pending') continue;
    // The crash came between a failed attempt and its retry: the retry is still owed.
    if (
      a.status === 'failed' &&
      a.error?.retryable &&
      policies[step.id]?.idempotent &&
      a.attempt < options.maxAttempts
    ) {
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
  return { state, interrupted, retried };
}
