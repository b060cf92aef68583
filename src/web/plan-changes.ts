/** What a plan revision changed against the one before it, in words: steps added, removed and changed. */
import type { Plan } from '../engine/plan/plan-schema.ts';
import { canonicalJson } from '../engine/plan/canonical-json.ts';

/** The changes from `before` (null for the first revision) to `after`, one short phrase each. */
export function planChanges(before: Plan | null, after: Plan): string[] {
  if (!before) return [`first plan: ${after.steps.length} step${after.steps.length === 1 ? '' : 's'}`];
  const old = new Map(before.steps.map((s) => [s.id, canonicalJson(s)]));
  const now = new Map(after.steps.map((s) => [s.id, canonicalJson(s)]));
  const added = [...now.keys()].filter((id) => !old.has(id));
  const removed = [...old.keys()].filter((id) => !now.has(id));
  const changed = [...now.keys()].filter((id) => old.has(id) && old.get(id) !== now.get(id));
  const out = [
    ...(added.length ? [`added ${added.join(', ')}`] : []),
    ...(removed.length ? [`removed ${removed.join(', ')}`] : []),
    ...(changed.length ? [`changed ${changed.join(', ')}`] : []),
  ];
  if (before.summary !== after.summary) out.push('new summary');
  return out.length ? out : ['no step changed'];
}
