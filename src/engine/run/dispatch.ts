/**
 * The dispatcher as a pure transition: `(state, event) -> { state, effects }`. No I/O, no clock, no LLM.
 * A step starts as soon as all it depends on has ended (not when its layer ends), within `maxParallel`.
 * Pause, breakpoints, amendments and approvals only ever stop new steps from starting; Stop also aborts.
 */
import { clone, failStep, schedule } from './dispatch-schedule.ts';
import type { Plan, Step } from '../plan/plan-schema.ts';
import type { Json, RiskLevel, StepError, StepStatus } from '../types.ts';

export { outputsOf } from './dispatch-schedule.ts';

/** Per-step facts the dispatcher needs from the tool catalog. */
export interface StepPolicy {
  idempotent: boolean;
  timeoutMs: number;
  risk: RiskLevel;
  /** Arguments filled from earlier outputs need the person's confirmation (destructive, open-world or sensitive tools). */
  guardRefs: boolean;
  /** Top-level argument fields exempt from that confirmation. */
  trustedRefFields: string[];
}

/** Why a ready step waits for a person: riskier than approved, unseen arguments, or a changed tool definition. */
export interface Hold {
  stepId: string;
  why: 'risk' | 'confirm' | 'changed' | 'amended';
  /** For `confirm`: the arguments as they would be sent. */
  args?: Json;
}

/** Runtime of one step. */
export interface StepRuntime {
  status: StepStatus;
  attempt: number;
  output?: Json;
  error?: StepError;
  /** Why a step was skipped or never ran, in words. */
  note?: string;
}

/** The dispatcher's state for one run. `phase` `done` is final. */
export interface DispatchState {
  phase: 'running' | 'paused' | 'stopping' | 'halting' | 'done';
  /** Why the run is paused: a person's Pause, or a breakpoint (then `heldAt` names the step). */
  pausedBy: 'user' | 'breakpoint' | null;
  heldAt: string | null;
  /** True while the planner rewrites the steps not yet run: nothing new starts. */
  amending: boolean;
  /** The highest risk a person approved (or auto-approval allowed); riskier steps wait. */
  approvedRisk: RiskLevel;
  /** Steps waiting for a person, those the person was already told about, and those whose arguments they confirmed. */
  holds: Hold[];
  announced: string[];
  confirmed: string[];
  /** `<id>` holds the run after that step ends; `before:<id>` holds it before that step starts. */
  breakpoints: string[];
  outcome: 'completed' | 'failed' | 'stopped' | null;
  plan: Plan;
  policies: Record<string, StepPolicy>;
  steps: Record<string, StepRuntime>;
  maxParallel: number;
  maxAttempts: number;
  /** The step whose failure halted the run. */
  haltedBy: string | null;
}

export type DispatchEvent =
  | { type: 'stepSucceeded'; stepId: string; attempt: number; output: Json }
  | { type: 'stepFailed'; stepId: string; attempt: number; error: StepError }
  | { type: 'pauseRequested' }
  | { type: 'resumeRequested' }
  | { type: 'stopRequested' }
  | { type: 'breakpointsSet'; stepIds: string[]; on: boolean }
  | { type: 'amendStarted' }
  | { type: 'amendEnded' }
  | { type: 'planRevised'; plan: Plan; policies: Record<string, StepPolicy>; approvalNeeded?: string[] }
  | { type: 'holdsApproved'; risk: RiskLevel; policies?: Record<string, StepPolicy> }
  | { type: 'definitionChanged'; stepId: string; attempt: number };

export type DispatchEffect =
  | { type: 'startStep'; step: Step; attempt: number; args: Json; timeoutMs: number }
  | { type: 'abortStep'; stepId: string; attempt: number }
  | {
      type: 'stepChanged';
      stepId: string;
      attempt: number;
      status: StepStatus;
      detail: string;
      output?: Json;
      error?: StepError;
    }
  | { type: 'held'; reason: 'breakpoint' | 'approval'; stepIds: string[]; holds?: Hold[]; before?: boolean }
  | { type: 'finished'; outcome: 'completed' | 'failed' | 'stopped' };

export interface Transition {
  state: DispatchState;
  effects: DispatchEffect[];
}

/** A fresh dispatch state for an approved plan; feed it to `startDispatch`. */
export function createDispatchState(
  plan: Plan,
  policies: Record<string, StepPolicy>,
  options: { maxParallel: number; maxAttempts: number; approvedRisk?: RiskLevel; breakpoints?: string[] },
): DispatchState {
  const steps: Record<string, StepRuntime> = {};
  for (const s of plan.steps) steps[s.id] = { status: 'pending', attempt: 0 };
  return {
    phase: 'running',
    pausedBy: null,
    heldAt: null,
    amending: false,
    approvedRisk: options.approvedRisk ?? 'high',
    holds: [],
    announced: [],
    confirmed: [],
    breakpoints: options.breakpoints ?? [],
    outcome: null,
    plan,
    policies,
    steps,
    haltedBy: null,
    maxParallel: options.maxParallel,
    maxAttempts: options.maxAttempts,
  };
}

/** Starts (or, after a restart, continues) dispatching. */
export function startDispatch(state: DispatchState): Transition {
  return schedule(clone(state), []);
}

/** Applies one event. Events for attempts that are no longer current are ignored. */
export function dispatchTransition(prev: DispatchState, event: DispatchEvent): Transition {
  if (prev.phase === 'done') return { state: prev, effects: [] };
  const state = clone(prev);
  const effects: DispatchEffect[] = [];
  switch (event.type) {
    case 'pauseRequested':
      if (state.phase === 'running') Object.assign(state, { phase: 'paused', pausedBy: 'user', heldAt: null });
      return { state, effects };
    case 'resumeRequested':
      if (state.phase === 'paused') Object.assign(state, { phase: 'running', pausedBy: null, heldAt: null });
      return schedule(state, effects);
    case 'stopRequested':
      if (state.phase === 'stopping') return { state, effects };
      Object.assign(state, { phase: 'stopping', amending: false });
      for (const [id, rt] of Object.entries(state.steps)) {
        if (rt.status === 'running') effects.push({ type: 'abortStep', stepId: id, attempt: rt.attempt });
      }
      return schedule(state, effects);
    case 'breakpointsSet': {
      // Clearing a step drops both kinds of breakpoint on it; setting one holds after the step ends.
      const others = state.breakpoints.filter((b) => !event.stepIds.includes(breakpointStep(b)));
      const settable = event.stepIds.filter((id) => state.steps[id]?.status === 'pending');
      state.breakpoints = event.on ? [...others, ...settable] : others;
      return { state, effects };
    }
    case 'amendStarted':
      state.amending = true;
      return { state, effects };
    case 'amendEnded':
      state.amending = false;
      return schedule(state, effects);
    case 'planRevised':
      return schedule(revise(state, event.plan, event.policies, event.approvalNeeded ?? []), effects);
    case 'holdsApproved': {
      const confirmed = state.holds.filter((h) => h.why === 'confirm').map((h) => h.stepId);
      Object.assign(state, {
        approvedRisk: event.risk,
        holds: [],
        announced: [],
        confirmed: [...state.confirmed, ...confirmed],
      });
      if (event.policies) state.policies = event.policies;
      return schedule(state, effects);
    }
    case 'definitionChanged': {
      // The call was never sent: the step goes back to waiting, now for a person to approve the new definition.
      const rt = state.steps[event.stepId];
      if (!rt || rt.status !== 'running' || rt.attempt !== event.attempt) return { state: prev, effects: [] };
      state.steps[event.stepId] = { status: 'pending', attempt: rt.attempt - 1 };
      state.holds.push({ stepId: event.stepId, why: 'changed' });
      return schedule(state, effects);
    }
    case 'stepSucceeded': {
      const rt = state.steps[event.stepId];
      if (!rt || rt.status !== 'running' || rt.attempt !== event.attempt) return { state: prev, effects: [] };
      state.steps[event.stepId] = { status: 'succeeded', attempt: rt.attempt, output: event.output };
      effects.push({
        type: 'stepChanged',
        stepId: event.stepId,
        attempt: rt.attempt,
        status: 'succeeded',
        detail: 'done',
        output: event.output,
      });
      if (state.breakpoints.includes(event.stepId) && state.phase === 'running') {
        Object.assign(state, { phase: 'paused', pausedBy: 'breakpoint', heldAt: event.stepId });
        effects.push({ type: 'held', reason: 'breakpoint', stepIds: [event.stepId] });
      }
      return schedule(state, effects);
    }
    case 'stepFailed': {
      const rt = state.steps[event.stepId];
      if (!rt || rt.status !== 'running' || rt.attempt !== event.attempt) return { state: prev, effects: [] };
      failStep(state, event.stepId, event.error, effects);
      return schedule(state, effects);
    }
  }
}

/**
 * Takes a revised plan: steps that started keep their runtime; new or rewritten pending steps start fresh, lose
 * any earlier confirmation of their arguments, and wait for approval when listed in `approvalNeeded`.
 */
function revise(
  state: DispatchState,
  plan: Plan,
  policies: Record<string, StepPolicy>,
  approvalNeeded: string[],
): DispatchState {
  const steps: Record<string, StepRuntime> = {};
  const before = new Map(state.plan.steps.map((s) => [s.id, JSON.stringify(s)]));
  const unchanged = (s: Plan['steps'][number]) => before.get(s.id) === JSON.stringify(s);
  for (const s of plan.steps) {
    const old = state.steps[s.id];
    steps[s.id] = old && old.status !== 'pending' ? old : { status: 'pending', attempt: old?.attempt ?? 0 };
  }
  const holds: Hold[] = state.holds.filter((h) => h.why === 'changed' && steps[h.stepId]?.status === 'pending');
  for (const id of approvalNeeded) if (steps[id]?.status === 'pending') holds.push({ stepId: id, why: 'amended' });
  return {
    ...state,
    plan,
    policies,
    steps,
    amending: false,
    holds,
    announced: [],
    confirmed: state.confirmed.filter((id) => plan.steps.some((s) => s.id === id && unchanged(s))),
    breakpoints: state.breakpoints.filter((b) => steps[breakpointStep(b)]?.status === 'pending'),
  };
}

/** The step a breakpoint entry names (`s2` or `before:s2`). */
export function breakpointStep(entry: string): string {
  return entry.startsWith('before:') ? entry.slice('before:'.length) : entry;
}
