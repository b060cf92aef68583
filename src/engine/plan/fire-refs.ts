/**
 * The built-in values a workflow's plan may read where a plan reads references (`{"$ref": "fire.time"}`), bound
 * when a workflow fires (`workflow/fire-params.ts`). Named here, in the plan layer, so the compact form leaves them
 * as they are instead of reading them as a step called `fire`.
 */

/** This fire's scheduled time and date in the schedule's zone, and the previous scheduled time and date. */
export const FIRE_PARAMS: readonly string[] = ['fire.time', 'fire.date', 'fire.previousTime', 'fire.previousDate'];

const KNOWN = new Set(FIRE_PARAMS);

/** Whether a reference's text names a built-in fire value rather than a step. */
export function isFireParam(text: string): boolean {
  return KNOWN.has(text);
}
