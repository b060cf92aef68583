/** What a person is shown when a run holds, and which tools a person's intervention concerned (pure). */
import type { BreakpointTime } from '../plan/breakpoints.ts';
import { jsonValueDepth, MAX_OUTPUT_DEPTH } from '../plan/json-depth.ts';
import type { Step } from '../plan/plan-schema.ts';
import { collectRefs, parseReference, resolveRefs } from '../plan/refs.ts';
import { describeChange } from '../plan/tool-pins.ts';
import type { PinnedTool } from '../ports.ts';
import { cut, outputText } from '../text.ts';
import type { Json, ToolInfo } from '../types.ts';
import { outputsOf } from './dispatch-schedule.ts';
import type { DispatchState, Hold } from './dispatch-state.ts';

const ARGS_SHOWN = 1500;

/**
 * Sentences telling the person why each step waits, with what they need to judge it: a step whose arguments take
 * earlier outputs shows the values it would send (never a bare `$ref`), or which steps have yet to produce them.
 */
export function describeHolds(
  state: DispatchState,
  holds: readonly Hold[],
  tools: readonly ToolInfo[],
  pins: ReadonlyMap<string, PinnedTool>,
): string[] {
  return holds.map((h) => {
    const step = state.plan.steps.find((s) => s.id === h.stepId);
    const tool = step?.kind === 'tool' ? step.tool : (step?.kind ?? '?');
    if (h.why === 'confirm') {
      const args = cut(showJson(h.args ?? null), ARGS_SHOWN);
      return `Step ${h.stepId} (${tool}) takes values from earlier steps that nobody has seen yet; it would send: ${args}`;
    }
    const why = holdReason(h, tool, tools, pins);
    const sends = step ? valuesSent(state, step) : null;
    return sends ? `${why} ${sends}` : why;
  });
}

function holdReason(h: Hold, tool: string, tools: readonly ToolInfo[], pins: ReadonlyMap<string, PinnedTool>): string {
  if (h.why === 'risk') return `Step ${h.stepId} (${tool}) is riskier than what was approved.`;
  if (h.why === 'review') return `Step ${h.stepId} (${tool}) waits for your review of the whole plan.`;
  if (h.why === 'amended') {
    return `Step ${h.stepId} (${tool}) was added or changed by an amendment written after seeing tool outputs.`;
  }
  const now = tools.find((t) => t.name === tool);
  const pin = pins.get(tool);
  const changes = pin && now ? describeChange(pin.definition, now.definition) : ['the definition changed'];
  return `The definition of ${tool} changed since approval, so step ${h.stepId} waits: ${changes.join('; ')}.`;
}

/** For a step whose arguments refer to earlier outputs: what it would send with them filled in, or why not yet. */
function valuesSent(state: DispatchState, step: Step): string | null {
  if (step.kind === 'condition') return null;
  const refs = collectRefs(step.args);
  if (refs.length === 0) return null;
  const outputs = outputsOf(state);
  const waiting = new Set<string>();
  for (const ref of refs) {
    const parsed = parseReference(ref.text);
    const status = parsed.ok ? state.steps[parsed.value.stepId]?.status : undefined;
    if (parsed.ok && (status === 'pending' || status === 'running')) waiting.add(parsed.value.stepId);
  }
  if (waiting.size > 0) {
    const ids = [...waiting].join(', ');
    return `It takes values from ${waiting.size === 1 ? 'step' : 'steps'} ${ids}, not run yet.`;
  }
  const args = resolveRefs(step.args, outputs);
  return args.ok
    ? `It would send: ${cut(showJson(args.value), ARGS_SHOWN)}`
    : `Its arguments cannot be filled in: ${args.error}`;
}

/** At a breakpoint: before a step, the arguments it is about to send; after it, what it returned. */
export function breakpointView(state: DispatchState, stepId: string, when: BreakpointTime): string {
  const step = state.plan.steps.find((s) => s.id === stepId);
  if (when === 'before' && step && step.kind !== 'condition') {
    const args = resolveRefs(step.args, outputsOf(state));
    return args.ok ? showJson(args.value) : args.error;
  }
  return outputText(state.steps[stepId]?.output);
}

function showJson(value: Json): string {
  if (jsonValueDepth(value, MAX_OUTPUT_DEPTH) > MAX_OUTPUT_DEPTH)
    return `(a value nested more than ${MAX_OUTPUT_DEPTH} levels deep)`;
  return JSON.stringify(value);
}

/** Tools of the steps held because their definition changed: approving pins them as they are now. */
export function changedTools(state: DispatchState): Set<string> {
  return new Set(
    state.holds
      .filter((h) => h.why === 'changed')
      .flatMap((h) => {
        const step = state.plan.steps.find((s) => s.id === h.stepId);
        return step?.kind === 'tool' ? [step.tool] : [];
      }),
  );
}

/**
 * The tools a person intervened on: those running (or just cancelled by their Stop, which may have ended them a
 * moment before this is read), else the next one to start (for suggested breakpoints).
 */
export function interventionTools(state: DispatchState): string[] {
  const running = state.plan.steps.filter((s) => ['running', 'cancelled'].includes(state.steps[s.id]?.status ?? ''));
  const next =
    running.length > 0 ? running : state.plan.steps.filter((s) => state.steps[s.id]?.status === 'pending').slice(0, 1);
  return next.flatMap((s) => (s.kind === 'tool' ? [s.tool] : []));
}
