/**
 * Rules for changing a plan after it started: steps that started (or ended) are history and cannot change.
 */
import { canonicalJson } from './canonical-json.ts';
import type { Plan, Step } from './plan-schema.ts';

/** Problems with replacing `current` by `next` when the steps in `started` have begun; empty when allowed. */
export function checkRevision(current: Plan, next: Plan, started: ReadonlySet<string>): string[] {
  const errors: string[] = [];
  const byId = new Map(next.steps.map((s) => [s.id, s]));
  for (const step of current.steps) {
    if (!started.has(step.id)) continue;
    const replacement = byId.get(step.id);
    if (!replacement) errors.push(`step ${step.id} already ran (or is running) and cannot be removed`);
    else if (!sameStep(step, replacement))
      errors.push(`step ${step.id} already ran (or is running) and cannot be changed`);
  }
  return errors;
}

function sameStep(a: Step, b: Step): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
