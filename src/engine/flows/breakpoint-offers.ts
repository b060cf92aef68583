/** Reads what the suggestion rule needs from the store: shared by the review card and by taking its suggestions. */
import type { RunSteering } from '../ports.ts';
import {
  planTools,
  suggestBreakpoints,
  SUGGESTION_WINDOW_DAYS,
  type SuggestedBreakpoint,
} from '../plan/breakpoint-suggestions.ts';
import type { Breakpoint } from '../plan/breakpoints.ts';
import type { Plan } from '../plan/plan-schema.ts';
import type { Actor } from '../types.ts';
import type { StewardDeps } from './deps.ts';

/** The oldest time an intervention may have happened and still count, seen from `now`. */
export function suggestionWindowStart(now: Date): Date {
  return new Date(now.getTime() - SUGGESTION_WINDOW_DAYS * 24 * 60 * 60 * 1000);
}

/**
 * The breakpoints to suggest on `plan` for `requester` now (`suggestBreakpoints` states the rule). With `asked`, the
 * person asked for them (took the card's offer), so their "suggestions off" does not hide them.
 */
export async function breakpointOffers(
  deps: Pick<StewardDeps, 'clock'> & { store: RunSteering },
  requester: Actor,
  plan: Plan,
  options: { set: readonly Breakpoint[]; started?: readonly string[]; asked?: boolean },
): Promise<SuggestedBreakpoint[]> {
  if (!options.asked && !(await deps.store.getBreakpointSuggestions(requester))) return [];
  const since = suggestionWindowStart(deps.clock());
  const signals = await deps.store.interventionSignals(requester, planTools(plan), since);
  return suggestBreakpoints(plan, signals, options);
}
