/**
 * The early-start gate (pure): while the planner is still writing a plan, which of its steps may start, as LLMCompiler's
 * task-fetching unit starts a task once its inputs are ready. Only when the person's review preference lets a plan run
 * unreviewed; only tool steps valid on their own whose tool is read-only and closed-world; and only through the run's
 * own dispatcher (the gate hands it `stepsArrived`), so a step starts once its dependencies have succeeded, within
 * `maxParallel`, with its ends (`stepSucceeded`, `stepFailed`) going to the dispatcher as for any step.
 *
 * When the whole answer has been read, `planFinished` decides: the plan is invalid (what started is stopped and the
 * reason said), it needs review (what ran stays done, everything else waits), or the run goes on as if auto-approved.
 */
import { canonicalJson } from '../plan/canonical-json.ts';
import type { Plan, Step } from '../plan/plan-schema.ts';
import { collectRefs, parseReference } from '../plan/refs.ts';
import { toolForStep, toolRisk } from '../plan/risk.ts';
import { checkToolArgs } from '../plan/tool-args-schema.ts';
import type { ValidatedPlan } from '../plan/validate-plan.ts';
import type { Result } from '../result.ts';
import type { ReviewPreference, RiskLevel, ToolInfo } from '../types.ts';
import { createDispatchState, type DispatchEvent, type DispatchState } from './dispatch-state.ts';
import { policiesFor } from './step-policies.ts';

/** What the gate knows of a plan being written. */
export interface EarlyStartState {
  /** False when the preference reviews every plan, or once the plan cannot be valid: nothing more is let in. */
  open: boolean;
  preference: ReviewPreference;
  /** Steps in the order they arrived, until the gate closed. */
  received: Step[];
  /** Steps let in to the dispatcher, each with the ids upstream of it (what its references may read). */
  admitted: Record<string, string[]>;
  /** Why each step that was not let in waits for the whole plan. */
  waiting: Record<string, string>;
  finished: boolean;
}

/** A step of the plan arrived complete (expanded to a full `Step`), or the answer ended with the plan checked whole. */
export type EarlyStartEvent =
  { type: 'stepArrived'; step: Step } | { type: 'planFinished'; plan: Result<ValidatedPlan> };

/** What the flow that owns the run must do at the end of the answer (the dispatcher's own effects aside). */
export type EarlyStartEffect =
  /** Show the whole plan for review: `ran` are done (show them done), `running` go on, `waiting` wait for a person. */
  | { type: 'holdForReview'; ran: string[]; running: string[]; waiting: string[] }
  /** The plan is invalid: what started is being stopped (`started` may be empty: then nothing was called). */
  | { type: 'stopStarted'; reason: string; started: string[] }
  /** The plan needs no review: the run goes on as an auto-approved one, `started` already under way or done. */
  | { type: 'continueRun'; started: string[] };

/** The gate's next state, the events its dispatcher must take (in order), and the effects for the flow. */
export interface EarlyStartTransition {
  gate: EarlyStartState;
  dispatch: DispatchEvent[];
  effects: EarlyStartEffect[];
}

const MAX_STEPS = 100;

/** The plan a run has while its planner is still writing: its steps are those let in so far. */
const BEING_WRITTEN: Plan = {
  summary: 'The plan is being written.',
  rationale: '',
  needsTools: true,
  answer: null,
  risks: [],
  steps: [],
};

/** Whether a plan must wait for a person: high risk always, `all` always, `risky` for medium too, or when forced. */
export function reviewNeeded(preference: ReviewPreference, risk: RiskLevel, forceReview = false): boolean {
  return forceReview || risk === 'high' || preference === 'all' || (preference === 'risky' && risk !== 'low');
}

/**
 * Whether a tool may be called before anyone has seen the whole plan: allowed, read-only and closed-world by its
 * annotations (absent hints fail; mcp.json's `readOnly` / `openWorld` on that one tool are the operator's word over
 * them, a server-wide one only narrows), and not made riskier or sensitive by the operator.
 */
export function startsEarly(tool: ToolInfo): boolean {
  const a = tool.annotations;
  return (
    tool.policy.allowed &&
    a.readOnlyHint === true &&
    a.openWorldHint === false &&
    toolRisk(tool) === 'low' &&
    tool.policy.sensitive !== true
  );
}

/** A gate for one planner answer; with review `all` it lets nothing in. */
export function createEarlyStart(preference: ReviewPreference): EarlyStartState {
  return { open: preference !== 'all', preference, received: [], admitted: {}, waiting: {}, finished: false };
}

/** The dispatcher of a run whose plan is still being written: no steps yet, low risk approved, and it cannot end. */
export function createStreamingDispatch(options: { maxParallel: number; maxAttempts: number }): DispatchState {
  return createDispatchState(BEING_WRITTEN, {}, { ...options, approvedRisk: 'low', streaming: true });
}

/**
 * Applies one event; `context` is the tool catalog now and the dispatcher's state now, and whether the whole plan must
 * wait for a person whatever its risk (it would pass a spend cap).
 */
export function earlyStartTransition(
  gate: EarlyStartState,
  event: EarlyStartEvent,
  context: { tools: readonly ToolInfo[]; dispatch: DispatchState; forceReview?: boolean },
): EarlyStartTransition {
  if (gate.finished) return { gate, dispatch: [], effects: [] };
  if (event.type === 'planFinished') return finish(gate, event.plan, context);
  return arrive(gate, event.step, context.tools);
}

function arrive(prev: EarlyStartState, step: Step, tools: readonly ToolInfo[]): EarlyStartTransition {
  // Closed, the gate keeps nothing more, so a flood of steps costs nothing here.
  if (!prev.open) return { gate: prev, dispatch: [], effects: [] };
  const duplicate = prev.received.some((s) => s.id === step.id);
  const received = [...prev.received, step];
  const gate = { ...prev, received, admitted: { ...prev.admitted }, waiting: { ...prev.waiting } };
  // An id used twice, or one step too many, makes the plan invalid whatever follows: let nothing more in.
  if (duplicate || received.length > MAX_STEPS) {
    if (duplicate) gate.waiting[step.id] = 'its id is used twice';
    return { gate: { ...gate, open: false }, dispatch: [], effects: [] };
  }
  const letIn: Step[] = [];
  // A step let in may be what an earlier one was waiting for: look again until nothing changes.
  for (let changed = true; changed;) {
    changed = false;
    for (const s of gate.received) {
      if (gate.admitted[s.id]) continue;
      const why = whyNotEarly(s, gate, tools);
      if (why) gate.waiting[s.id] = why;
      else {
        gate.admitted[s.id] = upstreamOf(s, gate);
        delete gate.waiting[s.id];
        letIn.push(s);
        changed = true;
      }
    }
  }
  if (letIn.length === 0) return { gate, dispatch: [], effects: [] };
  const policies = policiesFor({ ...BEING_WRITTEN, steps: letIn }, tools);
  return { gate, dispatch: [{ type: 'stepsArrived', steps: letIn, policies }], effects: [] };
}

/** Why a step may not start before the plan is whole, or null when it may. */
export function whyNotEarly(step: Step, gate: EarlyStartState, tools: readonly ToolInfo[]): string | null {
  // An llm step spends the run's and the person's tokens, and its output is text for later steps: it waits.
  if (step.kind === 'llm') return 'an llm step spends tokens, so it waits for the whole plan';
  // A condition's branches name steps that may not have arrived, and evaluating it skips steps nobody has seen.
  if (step.kind === 'condition') return 'a condition chooses between later steps, so it waits for the whole plan';
  const tool = toolForStep(
    tools.find((t) => t.name === step.tool),
    step.args,
  );
  if (!tool || !tool.policy.allowed) return `its tool ${step.tool} is not connected or not allowed`;
  if (!startsEarly(tool)) return `its tool ${step.tool} is not read-only and closed-world`;
  const problems = checkToolArgs(tool.inputSchema, step.args);
  if (problems.length > 0) return `its arguments do not fit its tool: ${problems[0]}`;
  for (const dep of step.dependsOn) {
    if (!gate.admitted[dep]) return `it depends on ${dep}, which has not arrived or cannot start early`;
  }
  const upstream = new Set(upstreamOf(step, gate));
  for (const ref of collectRefs(step.args)) {
    const parsed = parseReference(ref.text);
    if (!parsed.ok) return `a reference cannot be read: ${parsed.error}`;
    if (!upstream.has(parsed.value.stepId)) return `it refers to ${parsed.value.stepId}, which is not upstream of it`;
  }
  return null;
}

/** The steps upstream of a step whose dependencies were all let in. */
function upstreamOf(step: Step, gate: EarlyStartState): string[] {
  return [...new Set(step.dependsOn.flatMap((d) => [d, ...(gate.admitted[d] ?? [])]))];
}

function finish(
  prev: EarlyStartState,
  plan: Result<ValidatedPlan>,
  context: { tools: readonly ToolInfo[]; dispatch: DispatchState; forceReview?: boolean },
): EarlyStartTransition {
  const gate = { ...prev, open: false, finished: true };
  const runtime = (id: string) => context.dispatch.steps[id]?.status ?? 'pending';
  // A step skipped because its dependency failed never started.
  const started = Object.keys(prev.admitted).filter((id) => !['pending', 'skipped'].includes(runtime(id)));
  const reason = plan.ok ? changedSince(prev, plan.value.plan) : plan.error;
  if (reason !== null || !plan.ok) {
    const stop = { type: 'stopStarted' as const, reason: reason ?? '', started };
    return { gate, dispatch: [{ type: 'stopRequested' }], effects: [stop] };
  }
  const v = plan.value;
  const review = reviewNeeded(prev.preference, v.risk, context.forceReview);
  const completed: DispatchEvent = {
    type: 'planCompleted',
    plan: v.plan,
    policies: policiesFor(v.plan, context.tools),
    approvedRisk: review ? 'low' : v.risk,
    review,
  };
  if (!review) return { gate, dispatch: [completed], effects: [{ type: 'continueRun', started }] };
  const ran = started.filter((id) => runtime(id) !== 'running');
  const running = started.filter((id) => runtime(id) === 'running');
  const waiting = v.plan.steps.map((s) => s.id).filter((id) => runtime(id) === 'pending');
  return { gate, dispatch: [completed], effects: [{ type: 'holdForReview', ran, running, waiting }] };
}

/** Every step let in must be in the whole plan exactly as it arrived: a started step never changes under the run. */
function changedSince(gate: EarlyStartState, plan: Plan): string | null {
  for (const id of Object.keys(gate.admitted)) {
    const before = gate.received.find((s) => s.id === id);
    const now = plan.steps.filter((s) => s.id === id);
    if (now.length !== 1 || canonicalJson(now[0]) !== canonicalJson(before))
      return `step ${id} started before the plan was complete, and the complete plan does not hold it as it started`;
  }
  return null;
}
