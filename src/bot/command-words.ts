/**
 * What the `/steward` command answers in words, the same on every chat platform (pure): the preferences' replies and
 * how many runs a list shows. Each platform adds its own markup around them; neither imports the other.
 */
import type { ReviewPreference } from '../engine/types.ts';

/** How many runs `/steward runs` lists. */
export const RECENT_RUNS = 10;

/** What Steward says after `/steward review <preference>`. */
export function reviewText(preference: ReviewPreference): string {
  const what: Record<ReviewPreference, string> = {
    all: 'I will show you every plan and wait for your approval before running it.',
    risky: 'plans with medium or high risk wait for your approval; low-risk plans start at once.',
    none: 'your plans start at once, except high-risk ones, which always wait for your approval.',
  };
  return `Noted. From now on ${what[preference]}`;
}

/** What Steward says after `/steward suggestions on|off` (Discord says the same). */
export function suggestionsText(on: boolean): string {
  return on
    ? 'Noted. From now on your plan cards offer breakpoints before tools you stepped in on before (never set until you add them).'
    : 'Noted. From now on your plan cards offer no breakpoints (`/steward suggestions on` brings them back).';
}
