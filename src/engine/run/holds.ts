/** What a person is shown when a run holds, and which tools a person's intervention concerned (pure). */
import type { BreakpointTime } from '../plan/breakpoints.ts';
import { resolveRefs } from '../plan/refs.ts';
import { describeChange } from '../plan/tool-pins.ts';
import type { PinnedTool } from '../ports.ts';
import { cut, outputText } from '../text.ts';
import type { ToolInfo } from '../types.ts';
import { outputsOf } from './dispatch-schedule.ts';
import type { DispatchState, Hold } from './dispatch-state.ts';

/** Sentences telling the person why each step waits, with what they need to judge it. */
export function describeHolds(
  state: DispatchState,
  holds: readonly Hold[],
  tools: readonly ToolInfo[],
  pins: ReadonlyMap<string, PinnedTool>,
): string[] {
  return holds.map((h) => {
    const step = state.plan.steps.find((s) => s.id === h.stepId);
    const tool = step?.kind === 'tool' ? step.tool : (step?.kind ?? '?');
    if (h.why === 'risk') return `Step ${h.stepId} (${tool}) is riskier than what was approved.`;
    if (h.why === 'amended') {
      return `Step ${h.stepId} (${tool}) was added or changed by an amendment written after seeing tool outputs.`;
    }
    if (h.why === 'confirm') {
      const args = cut(JSON.stringify(h.args ?? null), 1500);
      return `Step ${h.stepId} (${tool}) takes values from earlier steps that nobody has seen yet; it would send: ${args}`;
    }
    const now = tools.find((t) => t.name === tool);
    const pin = pins.get(tool);
    const changes = pin && now ? describeChange(pin.definition, now.definition) : ['the definition changed'];
    return `The definition of ${tool} changed since approval, so step ${h.stepId} waits: ${changes.join('; ')}.`;
  });
}

/** At a breakpoint: before a step, the arguments it is about to send; after it, what it returned. */
export function breakpointView(state: DispatchState, stepId: string, when: BreakpointTime): string {
  const step = state.plan.steps.find((s) => s.id === stepId);
  if (when === 'before' && step && step.kind !== 'condition') {
    const args = resolveRefs(step.args, outputsOf(state));
    return args.ok ? JSON.stringify(args.value) : args.error;
  }
  return outputText(state.steps[stepId]?.output);
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
