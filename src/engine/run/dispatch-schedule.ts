/**
 * Scheduling rules of the dispatcher (pure): which ready steps start, which are skipped, how failures are
 * handled, and when the run is over. Used only by `dispatch.ts`.
 */
import { hasBreakpoint } from '../plan/breakpoints.ts';
import { evaluateCondition, parseCondition } from '../plan/condition.ts';
import type { Plan, Step } from '../plan/plan-schema.ts';
import { collectRefs, resolveRefs } from '../plan/refs.ts';
import { riskAbove } from '../plan/risk.ts';
import type { Json, StepError } from '../types.ts';
import type { DispatchEffect, DispatchState, Hold, StepRuntime, Transition } from './dispatch-state.ts';
import { readServerOf } from './resource-tool.ts';
import { DEFAULT_STEP_TIMEOUT_MS } from './step-policies.ts';

/**
 * Applies the failure policy: cancel, retry (idempotent only), skip (optional) or halt; a call that may have acted
 * before its server went away (`interrupted`) holds the run for a person unless its tool is idempotent.
 */
export function failStep(state: DispatchState, stepId: string, failure: StepError, effects: DispatchEffect[]): void {
  const rt = state.steps[stepId] as StepRuntime;
  const step = stepById(state.plan, stepId);
  const policy = state.policies[stepId];
  let error = failure;
  // A model call the spend cap refused sent nothing: the step waits and the run pauses, for a person to decide.
  if (error.code === 'spend_capped' && (state.phase === 'running' || state.phase === 'paused'))
    return holdInterrupted(state, stepId, error, effects);
  // Refused for want of the requester's own connection: the call never ran, so the step waits for them to connect.
  if (
    error.code === 'not_connected' &&
    step.kind === 'tool' &&
    (state.phase === 'running' || state.phase === 'paused')
  ) {
    effects.push({
      type: 'recordStepEnd',
      stepId,
      attempt: rt.attempt,
      status: 'failed',
      // The message names who connects: the requester (their own), or an approver (the workspace's).
      detail: `${error.message} It waits for the connection.`,
      error,
    });
    state.steps[stepId] = { status: 'pending', attempt: rt.attempt };
    // A resource read waits for the server it reads from (named in its arguments), not for Steward's own.
    awaitConnection(state, stepId, readServerOf(step.tool, step.args) ?? serverOf(step.tool), effects);
    return;
  }
  if (error.code === 'interrupted' && state.phase !== 'stopping') {
    // For an idempotent tool a lost call is one more failed attempt of an unavailable server. Stored as such, since
    // restore reads a stored `interrupted` as "may have acted, ask a person".
    if (policy?.idempotent) error = { ...error, code: 'server_unavailable' };
    else if (state.phase === 'running' || state.phase === 'paused')
      return holdInterrupted(state, stepId, error, effects);
    else error = { ...error, retryable: false };
  }
  if (error.code === 'cancelled' || state.phase === 'stopping') {
    state.steps[stepId] = { ...rt, status: 'cancelled', error };
    effects.push({
      type: 'recordStepEnd',
      stepId,
      attempt: rt.attempt,
      status: 'cancelled',
      detail: error.message,
      error,
    });
    return;
  }
  if (
    error.retryable &&
    policy?.idempotent &&
    rt.attempt < state.maxAttempts &&
    (state.phase === 'running' || state.phase === 'paused')
  ) {
    effects.push({
      type: 'recordStepEnd',
      stepId,
      attempt: rt.attempt,
      status: 'failed',
      detail: `${error.message}; retrying`,
      error,
    });
    state.steps[stepId] = { status: 'pending', attempt: rt.attempt, error };
    return;
  }
  state.steps[stepId] = { ...rt, status: 'failed', error };
  effects.push({ type: 'recordStepEnd', stepId, attempt: rt.attempt, status: 'failed', detail: error.message, error });
  if (!step.optional && state.phase !== 'halting') {
    state.phase = 'halting';
    state.haltedBy = stepId;
  }
}

/** A pending step waits for the requester to connect `server`; they are asked once per wait. */
export function awaitConnection(state: DispatchState, stepId: string, server: string, effects: DispatchEffect[]): void {
  const asked = Object.values(state.connecting ?? {}).includes(server);
  state.connecting = { ...state.connecting, [stepId]: server };
  if (!asked) effects.push({ type: 'requestConnection', stepId, server });
}

/**
 * As after a crash mid-call (restore.ts): the step goes back to waiting, with its error kept and not retryable, and
 * the run pauses, so that running it again is the person's choice (resume), whatever attempts are left. The same for
 * a step whose model call a spend cap refused (nothing was sent).
 */
function holdInterrupted(state: DispatchState, stepId: string, lost: StepError, effects: DispatchEffect[]): void {
  const rt = state.steps[stepId] as StepRuntime;
  const error = { ...lost, retryable: false };
  const detail =
    error.code === 'spend_capped'
      ? `Not run: ${error.message}. The run is paused: an approver's resume lets it go past the spend caps, or stop.`
      : `${error.message} The run is paused: resume to run it again, or stop.`;
  effects.push({
    type: 'recordStepEnd',
    stepId,
    attempt: rt.attempt,
    status: 'failed',
    detail,
    error,
  });
  state.steps[stepId] = { status: 'pending', attempt: rt.attempt, error };
  if (state.phase === 'running') Object.assign(state, { phase: 'paused', pausedBy: 'user', heldAt: null });
  effects.push({ type: 'holdInterrupted', stepId, error });
}

/** Starts every ready step it may, evaluates ready conditions, skips what cannot run, and detects the end. */
export function schedule(state: DispatchState, effects: DispatchEffect[]): Transition {
  let changed = true;
  while (changed) {
    changed = false;
    for (const step of state.plan.steps) {
      const rt = state.steps[step.id] as StepRuntime;
      if (rt.status !== 'pending' || !isReady(state, step)) continue;
      const blocker = blockedBy(state, step);
      if (blocker) {
        state.steps[step.id] = { ...rt, status: 'skipped', note: blocker };
        effects.push({
          type: 'recordStepEnd',
          stepId: step.id,
          attempt: rt.attempt,
          status: 'skipped',
          detail: blocker,
        });
        changed = true;
        continue;
      }
      if (state.phase !== 'running' || state.amending) continue;
      if (step.kind === 'condition') {
        evaluate(state, step, effects);
        changed = true;
        continue;
      }
      if (state.connecting?.[step.id] !== undefined) continue;
      if (needsApproval(state, step)) continue;
      if (holdBefore(state, step, effects)) continue;
      if (runningCount(state) >= state.maxParallel || atServerLimit(state, step)) continue;
      const args = resolveRefs(step.args, outputsOf(state));
      const attempt = rt.attempt + 1;
      if (args.ok && needsConfirmation(state, step, args.value)) continue;
      if (!args.ok) {
        state.steps[step.id] = { status: 'running', attempt };
        failStep(state, step.id, { code: 'reference_failed', message: args.error, retryable: false }, effects);
        changed = true;
        continue;
      }
      state.steps[step.id] = { status: 'running', attempt };
      const timeoutMs = state.policies[step.id]?.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
      effects.push({ type: 'startStep', step, attempt, args: args.value, timeoutMs });
      changed = true;
    }
  }
  announceApprovals(state, effects);
  finishIfDone(state, effects);
  return { state, effects };
}

/** A step riskier than what was approved, or whose definition changed, waits; it is listed once so the person is asked once. */
function needsApproval(state: DispatchState, step: Step): boolean {
  if (state.holds.some((h) => h.stepId === step.id)) return true;
  const risk = state.policies[step.id]?.risk ?? 'low';
  if (!riskAbove(risk, state.approvedRisk)) return false;
  state.holds.push({ stepId: step.id, why: 'risk' });
  return true;
}

/**
 * Data flow: a risky step whose arguments come from earlier outputs was approved without its values, so it
 * waits for a person to see the values it would send (fields the config trusts excepted).
 */
function needsConfirmation(state: DispatchState, step: Step, args: Json): boolean {
  const policy = state.policies[step.id];
  if (step.kind !== 'tool' || !policy?.guardRefs || state.confirmed.includes(step.id)) return false;
  const untrusted = collectRefs(step.args).filter((r) => !policy.trustedRefFields.includes(r.at.split('/')[1] ?? ''));
  if (untrusted.length === 0) return false;
  state.holds.push({ stepId: step.id, why: 'confirm', args });
  return true;
}

/** A `before` breakpoint pauses the run as its step is about to start; it is used up, so resuming starts the step. */
function holdBefore(state: DispatchState, step: Step, effects: DispatchEffect[]): boolean {
  if (!hasBreakpoint(state.breakpoints, step.id, 'before')) return false;
  state.breakpoints = state.breakpoints.filter((b) => !(b.stepId === step.id && b.when === 'before'));
  Object.assign(state, { phase: 'paused', pausedBy: 'breakpoint', heldAt: step.id });
  effects.push({ type: 'showBreakpoint', stepId: step.id, when: 'before' });
  return true;
}

function announceApprovals(state: DispatchState, effects: DispatchEffect[]): void {
  const isFresh = (h: Hold) => !state.announced.includes(h.stepId);
  if (!state.holds.some(isFresh)) return;
  // A step whose references can be filled in now is shown to the person with the values it would send, so approving
  // it confirms them too (`holdsApproved`): an amended data-flow step is not held a second time for the same values.
  state.holds = state.holds.map((h) => (isFresh(h) ? withValues(state, h) : h));
  const fresh = state.holds.filter(isFresh);
  state.announced.push(...fresh.map((h) => h.stepId));
  effects.push({ type: 'requestApproval', holds: fresh });
}

/**
 * A hold with the arguments its step would send, when its references can be filled in now: its card says "it would
 * send …" (`describeHolds`), so approving it confirms them.
 */
function withValues(state: DispatchState, hold: Hold): Hold {
  const step = state.plan.steps.find((s) => s.id === hold.stepId);
  // A first review's card shows the plan, not each held step's values with where they came from: those still ask.
  if (hold.why === 'review' || hold.args !== undefined) return hold;
  if (step?.kind !== 'tool' || collectRefs(step.args).length === 0) return hold;
  const args = resolveRefs(step.args, outputsOf(state));
  return args.ok ? { ...hold, args: args.value } : hold;
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
  effects.push({
    type: 'recordStepEnd',
    stepId: step.id,
    attempt,
    status: 'succeeded',
    detail: `${step.expression} → ${result.value}`,
    output,
  });
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
    if (rt.status !== 'succeeded')
      return `skipped because ${dep} ${rt.status === 'skipped' ? 'was skipped' : rt.status}`;
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
  // While an amendment is being planned, or the plan is still streaming, the run may gain steps: it cannot end yet.
  if (runningCount(state) > 0 || state.amending || state.streaming) return;
  const pending = Object.values(state.steps).some((s) => s.status === 'pending');
  if (pending && (state.phase === 'running' || state.phase === 'paused')) return;
  // A breakpoint after the last step holds the run too: the person reads that output before the report; Continue ends it.
  if (state.phase === 'paused' && state.pausedBy === 'breakpoint') return;
  const outcome = state.phase === 'stopping' ? 'stopped' : state.phase === 'halting' ? 'failed' : 'completed';
  state.phase = 'done';
  state.outcome = outcome;
  for (const rt of Object.values(state.steps)) if (rt.status === 'pending') rt.note = 'never ran';
  effects.push({ type: 'finishRun', outcome });
}

/**
 * A tool step waits (pending, its timeout not started) while this run already has its server's `maxConcurrency`
 * calls in flight, or, for a step that may write to a server with no `maxConcurrency`, while another such step of
 * that server runs; the host enforces the same limits across runs, where a call waits within its timeout.
 */
function atServerLimit(state: DispatchState, step: Step): boolean {
  const policy = state.policies[step.id];
  const limit = policy?.serverMaxConcurrency ?? (policy?.serialWrite ? 1 : undefined);
  if (step.kind !== 'tool' || limit === undefined) return false;
  const server = serverOf(step.tool);
  let calls = 0;
  for (const other of state.plan.steps) {
    if (other.kind !== 'tool' || state.steps[other.id]?.status !== 'running' || serverOf(other.tool) !== server)
      continue;
    // Under the default rule only writes count: reads to the server run beside them.
    if (policy?.serverMaxConcurrency !== undefined || state.policies[other.id]?.serialWrite) calls++;
  }
  return calls >= limit;
}

// Plans name tools `<server>.<tool>`, and server names hold no dot.
function serverOf(tool: string): string {
  return tool.slice(0, tool.indexOf('.'));
}

function runningCount(state: DispatchState): number {
  let n = 0;
  for (const rt of Object.values(state.steps)) if (rt.status === 'running') n++;
  return n;
}

/** Outputs of succeeded steps, keyed by step id. */
export function outputsOf(state: DispatchState): Map<string, Json> {
  const map = new Map<string, Json>();
  for (const [id, rt] of Object.entries(state.steps))
    if (rt.status === 'succeeded' && rt.output !== undefined) map.set(id, rt.output);
  return map;
}

export function stepById(plan: Plan, id: string): Step {
  return plan.steps.find((s) => s.id === id) as Step;
}

/** Copies state for a transition. */
// Shallow copies suffice: step runtimes are replaced, never mutated, except notes set on a fresh clone.
export function clone(state: DispatchState): DispatchState {
  const steps: Record<string, StepRuntime> = {};
  for (const [id, rt] of Object.entries(state.steps)) steps[id] = { ...rt };
  return {
    ...state,
    steps,
    holds: [...state.holds],
    announced: [...state.announced],
    confirmed: [...state.confirmed],
    breakpoints: [...state.breakpoints],
    ...(state.connecting ? { connecting: { ...state.connecting } } : {}),
  };
}
