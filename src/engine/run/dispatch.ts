/**
 * The dispatcher as a pure transition: `(state, event) -> { state, effects }`. No I/O, no clock, no LLM.
 * A step starts as soon as all it depends on has ended (not when its layer ends), within `maxParallel`.
 * Pause, breakpoints, amendments and approvals only ever stop new steps from starting; Stop also aborts.
 */
import { hasBreakpoint, setAfter, setBefore, withoutSteps } from '../plan/breakpoints.ts';
import type { Plan } from '../plan/plan-schema.ts';
import { awaitConnection, clone, failStep, schedule } from './dispatch-schedule.ts';
import type { DispatchEffect, DispatchEvent, DispatchState, Hold, StepRuntime, Transition } from './dispatch-state.ts';
import type { StepPolicy } from './step-policies.ts';

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
      // Stop ends a plan still streaming too: nothing more is let in, and the run ends once its calls have.
      Object.assign(state, { phase: 'stopping', amending: false, streaming: false });
      for (const [id, rt] of Object.entries(state.steps)) {
        if (rt.status === 'running') effects.push({ type: 'abortStep', stepId: id, attempt: rt.attempt });
      }
      return schedule(state, effects);
    case 'breakpointsSet': {
      // Only steps not yet started take a breakpoint; clearing drops any kind. `before` ones are taken suggestions.
      const settable = event.stepIds.filter((id) => state.steps[id]?.status === 'pending');
      state.breakpoints =
        event.on && event.when === 'before'
          ? setBefore(state.breakpoints, settable)
          : setAfter(withoutSteps(state.breakpoints, event.stepIds), settable, event.on);
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
    case 'stepsArrived':
      if (!state.streaming) return { state: prev, effects: [] };
      for (const step of event.steps.filter((s) => !state.steps[s.id])) {
        state.plan = { ...state.plan, steps: [...state.plan.steps, step] };
        state.policies = { ...state.policies, [step.id]: event.policies[step.id] as StepPolicy };
        state.steps[step.id] = { status: 'pending', attempt: 0 };
      }
      return schedule(state, effects);
    case 'planCompleted':
      if (!state.streaming) return { state: prev, effects: [] };
      return schedule(complete(state, event), effects);
    case 'holdsApproved': {
      // Holds shown with the values their steps would send confirm those values (a data-flow guard's question).
      const confirmed = state.holds.filter((h) => h.args !== undefined).map((h) => h.stepId);
      Object.assign(state, {
        approvedRisk: event.risk,
        holds: [],
        announced: [],
        confirmed: [...state.confirmed, ...confirmed],
      });
      if (event.policies) state.policies = event.policies;
      return schedule(state, effects);
    }
    case 'connectionNeeded': {
      // The call was never sent: the step goes back to waiting, now for the requester to connect its server.
      const rt = state.steps[event.stepId];
      if (!rt || rt.status !== 'running' || rt.attempt !== event.attempt) return { state: prev, effects: [] };
      state.steps[event.stepId] = { status: 'pending', attempt: rt.attempt - 1 };
      awaitConnection(state, event.stepId, event.server, effects);
      return schedule(state, effects);
    }
    case 'connected': {
      const waiting = Object.entries(state.connecting ?? {}).filter(([, server]) => server === event.server);
      if (waiting.length === 0) return { state: prev, effects: [] };
      state.connecting = Object.fromEntries(
        Object.entries(state.connecting ?? {}).filter(([, server]) => server !== event.server),
      );
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
    case 'startHeld': {
      // The call was never sent: the step waits again, and starts when the run's phase lets it (the Pause or Stop
      // that held it reaches the dispatcher as its own event).
      const rt = state.steps[event.stepId];
      if (!rt || rt.status !== 'running' || rt.attempt !== event.attempt) return { state: prev, effects: [] };
      state.steps[event.stepId] = { status: 'pending', attempt: rt.attempt - 1 };
      return schedule(state, effects);
    }
    case 'stepSucceeded': {
      const rt = state.steps[event.stepId];
      if (!rt || rt.status !== 'running' || rt.attempt !== event.attempt) return { state: prev, effects: [] };
      state.steps[event.stepId] = { status: 'succeeded', attempt: rt.attempt, output: event.output };
      effects.push({
        type: 'recordStepEnd',
        stepId: event.stepId,
        attempt: rt.attempt,
        status: 'succeeded',
        detail: 'done',
        output: event.output,
      });
      if (hasBreakpoint(state.breakpoints, event.stepId, 'after') && state.phase === 'running') {
        Object.assign(state, { phase: 'paused', pausedBy: 'breakpoint', heldAt: event.stepId });
        effects.push({ type: 'showBreakpoint', stepId: event.stepId, when: 'after' });
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

/** The whole plan in place of the steps let in early; with `review`, steps not started wait for a person. */
function complete(state: DispatchState, event: Extract<DispatchEvent, { type: 'planCompleted' }>): DispatchState {
  const next = revise(state, event.plan, event.policies, []);
  // A run that halted (an early step failed) ends as it is: there is nothing left to review.
  if (event.review && (state.phase === 'running' || state.phase === 'paused')) {
    for (const s of event.plan.steps)
      if (next.steps[s.id]?.status === 'pending' && !next.holds.some((h) => h.stepId === s.id))
        next.holds.push({ stepId: s.id, why: 'review' });
  }
  return { ...next, streaming: false, approvedRisk: event.approvedRisk };
}

/**
 * Takes a revised plan: steps that started keep their runtime; new or rewritten pending steps start fresh, lose
 * any earlier confirmation of their arguments, and wait for approval when listed in `approvalNeeded` (every pending
 * step waits while the plan is still under its first review).
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
  // A plan nobody has approved yet (its review after steps started early) stays under review as it is revised: every
  // step not started waits for the approval of the revision, whatever its risk.
  const underReview = state.holds.some((h) => h.why === 'review');
  for (const s of plan.steps) {
    const why = underReview ? 'review' : approvalNeeded.includes(s.id) ? 'amended' : null;
    if (why && steps[s.id]?.status === 'pending' && !holds.some((h) => h.stepId === s.id))
      holds.push({ stepId: s.id, why });
  }
  const connecting = Object.entries(state.connecting ?? {}).filter(([id]) => steps[id]?.status === 'pending');
  return {
    ...state,
    plan,
    policies,
    steps,
    ...(state.connecting ? { connecting: Object.fromEntries(connecting) } : {}),
    amending: false,
    holds,
    announced: [],
    confirmed: state.confirmed.filter((id) => plan.steps.some((s) => s.id === id && unchanged(s))),
    breakpoints: state.breakpoints.filter((b) => steps[b.stepId]?.status === 'pending'),
  };
}
