/**
 * Suggested breakpoints: Steward offers a `before` breakpoint where this person stepped in before; it is never set
 * until they take it. The rule, kept simple enough to say on the card:
 * - a tool is suggested when this person paused, stopped or edited a run while it was running or next, in the last
 *   `SUGGESTION_WINDOW_DAYS` days, and no run of theirs using it has completed since (one uneventful run retires it);
 * - at most one suggestion per tool per plan: before the first step (in plan order) that uses it.
 */
import type { Breakpoint } from './breakpoints.ts';
import type { Plan } from './plan-schema.ts';

/** How far back an intervention still counts. */
export const SUGGESTION_WINDOW_DAYS = 30;

/** The latest intervention on a tool within the window, and whether a run using the tool completed after it. */
export interface InterventionSignal {
  /** The decision that intervened: `pause`, `stop` or `edit`. */
  action: string;
  at: Date;
  completedSince: boolean;
}

/** A breakpoint Steward offers before a step, and why, in words. */
export interface SuggestedBreakpoint {
  stepId: string;
  tool: string;
  why: string;
}

const DONE: Record<string, string> = { pause: 'paused', stop: 'stopped', edit: 'edited' };

/**
 * The breakpoints to offer on `plan`: one per tool with a live signal, before its first step not yet started; none
 * for a tool whose first such step already holds before it (the suggestion was taken).
 */
export function suggestBreakpoints(
  plan: Plan,
  signals: Readonly<Record<string, InterventionSignal>>,
  options: { set?: readonly Breakpoint[]; started?: readonly string[] } = {},
): SuggestedBreakpoint[] {
  const seen = new Set<string>();
  const suggestions: SuggestedBreakpoint[] = [];
  for (const step of plan.steps) {
    if (step.kind !== 'tool' || seen.has(step.tool) || options.started?.includes(step.id)) continue;
    seen.add(step.tool);
    const signal = signals[step.tool];
    if (!signal || signal.completedSince) continue;
    if (options.set?.some((b) => b.stepId === step.id && b.when === 'before')) continue;
    const did = DONE[signal.action] ?? 'stepped into';
    suggestions.push({ stepId: step.id, tool: step.tool, why: `you ${did} a run using ${step.tool} before` });
  }
  return suggestions;
}

/** The tools a plan calls, each once. */
export function planTools(plan: Plan): string[] {
  return [...new Set(plan.steps.flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])))];
}
