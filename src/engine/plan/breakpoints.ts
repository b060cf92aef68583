/**
 * Breakpoints hold a run at a step of its plan: `after` the step ends (set by a person, who then sees its output),
 * or `before` it starts (offered by Steward where this person intervened before, set once they take the offer; shows
 * what it would send).
 */

/** When a breakpoint holds, relative to its step. */
export type BreakpointTime = 'before' | 'after';

/** One breakpoint on one step. */
export interface Breakpoint {
  stepId: string;
  when: BreakpointTime;
}

/** Whether the list holds the run at `stepId` at time `when`. */
export function hasBreakpoint(list: readonly Breakpoint[], stepId: string, when: BreakpointTime): boolean {
  return list.some((b) => b.stepId === stepId && b.when === when);
}

/** The list without any breakpoint on the given steps (clearing a step drops both kinds). */
export function withoutSteps(list: readonly Breakpoint[], stepIds: readonly string[]): Breakpoint[] {
  return list.filter((b) => !stepIds.includes(b.stepId));
}

/** The list with `after` breakpoints set (or, with `on` false, every breakpoint cleared) on the given steps. */
export function setAfter(list: readonly Breakpoint[], stepIds: readonly string[], on: boolean): Breakpoint[] {
  const others = withoutSteps(list, stepIds);
  return on ? [...others, ...stepIds.map((stepId) => ({ stepId, when: 'after' as const }))] : others;
}

/** The list with `before` breakpoints added on the given steps (their `after` ones kept). */
export function setBefore(list: readonly Breakpoint[], stepIds: readonly string[]): Breakpoint[] {
  const fresh = stepIds.filter((stepId) => !hasBreakpoint(list, stepId, 'before'));
  return [...list, ...fresh.map((stepId) => ({ stepId, when: 'before' as const }))];
}

/** Ids of the steps that hold the run at time `when`, in list order. */
export function stepsHeld(list: readonly Breakpoint[], when: BreakpointTime): string[] {
  return list.filter((b) => b.when === when).map((b) => b.stepId);
}

/** The list as people read it: `before s1, after s3`, or `none`. */
export function describeBreakpoints(list: readonly Breakpoint[]): string {
  return list.length === 0 ? 'none' : list.map((b) => `${b.when} ${b.stepId}`).join(', ');
}
