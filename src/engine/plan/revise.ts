/**
 * Rules for changing a plan after it started: steps that started (or ended) are history and cannot change.
 */
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
  return canonical(a) === canonical(b);
}

/** JSON with sorted keys, so key order (which jsonb does not keep) does not count as a change. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
