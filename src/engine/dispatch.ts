/**
 * The dispatcher as a pure transition: `(state, event) -> { state, effects }`. No I/O, no clock, no LLM.
 * A step starts as soon as all it depends on has ended (not when its layer ends), within `maxParallel`.
 */
import { evaluateCondition, parseCondition } from './condition.ts';
import type { Plan, Step } from './plan-schema.ts';
import { resolveRefs } from './refs.ts';
import type { Json, StepError, StepStatus } from './types.ts';

/** Per-step facts the dispatcher needs from the tool catalog. */
export interface StepPolicy {
  idempotent: boolean;
  timeoutMs: number;
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
  | { type: 'stopRequested' };

export type DispatchEffect =
  | { type: 'startStep'; step: Step; attempt: number; args: Json; timeoutMs: number }
  | { type: 'abortStep'; stepId: string; attempt: number }
  | { type: 'stepChanged'; stepId: string; attempt: number; status: StepStatus; detail: string; output?: Json; error?: StepError }
  | { type: 'finished'; outcome: 'completed' | 'failed' | 'stopped' };

export interface Transition {
  state: DispatchState;
  effects: DispatchEffect[];
}

/** A fresh dispatch state for an approved plan; feed it to `startDispatch`. */
export function createDispatchState(
  plan: Plan,
  policies: Record<string, StepPolicy>,
  options: { maxParallel: number; maxAttempts: number },
): DispatchState {
  const steps: Record<string, StepRuntime> = {};
  for (const s of plan.steps) steps[s.id] = { status: 'pending', attempt: 0 };
  return { phase: 'running', outcome: null, plan, policies, steps, haltedBy: null, ...options };
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
      if (state.phase === 'running') state.phase = 'paused';
      return { state, effects };
    case 'resumeRequested':
      if (state.phase === 'paused') state.phase = 'running';
      return schedule(state, effects);
    case 'stopRequested':
      if (state.phase === 'stopping') return { state, effects };
      state.phase = 'stopping';
      for (const [id, rt] of Object.entries(state.steps)) {
        if (rt.status === 'running') effects.push({ type: 'abortStep', stepId: id, attempt: rt.attempt });
      }
      return schedule(state, effects);
    case 'stepSucceeded': {
      const rt = state.steps[event.stepId];
      if (!rt || rt.status !== 'running' || rt.attempt !== event.attempt) return { state: prev, effects: [] };
      state.steps[event.stepId] = { status: 'succeeded', attempt: rt.attempt, output: event.output };
      effects.push({ type: 'stepChanged', stepId: event.stepId, attempt: rt.attempt, status: 'succeeded', detail: 'done', output: event.output });
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

function failStep(state: DispatchState, stepId: string, error: StepError, effects: DispatchEffect[]): void {
  const rt = state.steps[stepId] as StepRuntime;
  const step = stepById(state.plan, stepId);
  const policy = state.policies[stepId];
  if (error.code === 'cancelled' || state.phase === 'stopping') {
    state.steps[stepId] = { ...rt, status: 'cancelled', error };
    effects.push({ type: 'stepChanged', stepId, attempt: rt.attempt, status: 'cancelled', detail: error.message, error });
    return;
  }
  if (error.retryable && policy?.idempotent && rt.attempt < state.maxAttempts && state.phase === 'running') {
    effects.push({ type: 'stepChanged', stepId, attempt: rt.attempt, status: 'failed', detail: `${error.message}; retrying`, error });
    state.steps[stepId] = { status: 'pending', attempt: rt.attempt, error };
    return;
  }
  state.steps[stepId] = { ...rt, status: 'failed', error };
  effects.push({ type: 'stepChanged', stepId, attempt: rt.attempt, status: 'failed', detail: error.message, error });
  if (!step.optional && state.phase !== 'halting') {
    state.phase = 'halting';
    state.haltedBy = stepId;
  }
}

/** Starts every ready step it may, evaluates ready conditions, skips what cannot run, and detects the end. */
function schedule(state: DispatchState, effects: DispatchEffect[]): Transition {
  let changed = true;
  while (changed) {
    changed = false;
    for (const step of state.plan.steps) {
      const rt = state.steps[step.id] as StepRuntime;
      if (rt.status !== 'pending' || !isReady(state, step)) continue;
      const blocker = blockedBy(state, step);
      if (blocker) {
        state.steps[step.id] = { ...rt, status: 'skipped', note: blocker };
        effects.push({ type: 'stepChanged', stepId: step.id, attempt: rt.attempt, status: 'skipped', detail: blocker });
        changed = true;
        continue;
      }
      if (state.phase !== 'running') continue;
      if (step.kind === 'condition') {
        evaluate(state, step, effects);
        changed = true;
        continue;
      }
      if (runningCount(state) >= state.maxParallel) continue;
      const args = resolveRefs(step.args as Json, outputsOf(state));
      const attempt = rt.attempt + 1;
      if (!args.ok) {
        state.steps[step.id] = { status: 'running', attempt };
        failStep(state, step.id, { code: 'reference_failed', message: args.error, retryable: false }, effects);
        changed = true;
        continue;
      }
      state.steps[step.id] = { status: 'running', attempt };
      const timeoutMs = state.policies[step.id]?.timeoutMs ?? 60_000;
      effects.push({ type: 'startStep', step, attempt, args: args.value, timeoutMs });
      changed = true;
    }
  }
  finishIfDone(state, effects);
  return { state, effects };
}

function evaluate(state: DispatchState, step: Extract<Step, { kind: 'condition' }>, effects: DispatchEffect[]): void {
  const parsed = parseCondition(step.expression);
  const result = parsed.ok ? evaluateCondition(parsed.value, outputsOf(state)) : parsed;
  const attempt = (state.steps[step.id]?.attempt ?? 0) + 1;
  state.steps[step.id] = { status: 'running', attempt };
  if (!result.ok) {
    failStep(state, step.id, { code: 'reference_failed', message: result.error, retryable: false }, effects);
    return;
  }
  const output: Json = { value: result.value };
  state.steps[step.id] = { status: 'succeeded', attempt, output };
  effects.push({ type: 'stepChanged', stepId: step.id, attempt, status: 'succeeded', detail: `${step.expression} → ${result.value}`, output });
}

function isReady(state: DispatchState, step: Step): boolean {
  return step.dependsOn.every((d) => {
    const s = state.steps[d]?.status;
    return s === 'succeeded' || s === 'skipped' || s === 'failed' || s === 'cancelled';
  });
}

/** Why a ready step cannot run: a dependency that did not succeed, or a condition that chose the other branch. */
function blockedBy(state: DispatchState, step: Step): string | null {
  for (const dep of step.dependsOn) {
    const rt = state.steps[dep] as StepRuntime;
    if (rt.status !== 'succeeded') return `skipped because ${dep} ${rt.status === 'skipped' ? 'was skipped' : rt.status}`;
    const parent = stepById(state.plan, dep);
    if (parent.kind === 'condition') {
      const value = (rt.output as { value?: boolean } | undefined)?.value === true;
      const chosen = value ? parent.ifTrue : parent.ifFalse;
      const other = value ? parent.ifFalse : parent.ifTrue;
      if (other.includes(step.id) && !chosen.includes(step.id)) return `skipped: condition ${dep} was ${value}`;
    }
  }
  return null;
}

function finishIfDone(state: DispatchState, effects: DispatchEffect[]): void {
  if (runningCount(state) > 0) return;
  const pending = Object.values(state.steps).some((s) => s.status === 'pending');
  if (pending && (state.phase === 'running' || state.phase === 'paused')) return;
  const outcome = state.phase === 'stopping' ? 'stopped' : state.phase === 'halting' ? 'failed' : 'completed';
  state.phase = 'done';
  state.outcome = outcome;
  for (const rt of Object.values(state.steps)) if (rt.status === 'pending') rt.note = 'never ran';
  effects.push({ type: 'finished', outcome });
}

function runningCount(state: DispatchState): number {
  let n = 0;
  for (const rt of Object.values(state.steps)) if (rt.status === 'running') n++;
  return n;
}

/** Outputs of succeeded steps, keyed by step id. */
export function outputsOf(state: DispatchState): Map<string, Json> {
  const map = new Map<string, Json>();
  for (const [id, rt] of Object.entries(state.steps)) if (rt.status === 'succeeded' && rt.output !== undefined) map.set(id, rt.output);
  return map;
}

function stepById(plan: Plan, id: string): Step {
  return plan.steps.find((s) => s.id === id) as Step;
}

// Shallow copies suffice: step runtimes are replaced, never mutated, except notes set on a fresh clone.
function clone(state: DispatchState): DispatchState {
  const steps: Record<string, StepRuntime> = {};
  for (const [id, rt] of Object.entries(state.steps)) steps[id] = { ...rt };
  return { ...state, steps };
}
