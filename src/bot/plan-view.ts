/**
 * A stored plan read back step by step for a reviewer (pure): what a card had to shorten, whole. Each step gives its
 * number, id, what it calls, what it waits for, its description and its arguments as the plan wrote them (pretty
 * JSON). A platform wraps and escapes the texts; nothing here is trusted markup.
 */
import type { Json } from '../engine/types.ts';

/** One step of a plan as a reviewer reads it. */
export interface PlanViewStep {
  number: number;
  id: string;
  /** The tool (`server.tool`), `llm`, a condition's expression, or what the step's kind is. */
  target: string;
  description: string;
  dependsOn: string[];
  /** The arguments as the plan wrote them (references unresolved), pretty-printed; empty when it has none. */
  args: string;
}

/** The steps of a stored plan; an empty list for anything that is not a plan with steps. */
export function planViewSteps(plan: Json): PlanViewStep[] {
  const steps = isRecord(plan) && Array.isArray(plan.steps) ? plan.steps : [];
  return steps.filter(isRecord).map((s, i) => ({
    number: i + 1,
    id: text(s.id) || `#${i + 1}`,
    target: text(s.tool) || text(s.expression) || (s.kind === 'llm' ? 'llm' : text(s.kind)),
    description: text(s.description),
    dependsOn: Array.isArray(s.dependsOn) ? s.dependsOn.map(text).filter(Boolean) : [],
    args: s.args === undefined ? '' : JSON.stringify(s.args, null, 2),
  }));
}

function isRecord(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
