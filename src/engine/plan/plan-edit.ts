/** A person's edit of a plan, as JSON (no model call): a whole plan, or `{"steps": [...]}` laid over the current one. */
import type { Result } from '../result.ts';
import type { Json, ToolInfo } from '../types.ts';
import { jsonValueDepth, MAX_PLAN_DEPTH } from './json-depth.ts';
import { planSchema, type Plan } from './plan-schema.ts';
import { MAX_PLAN_CHARS } from './planner-prompt.ts';
import { checkRevision } from './revise.ts';
import { validatePlan, type ValidatedPlan } from './validate-plan.ts';

/** Reads an edit against the current plan; the error is a sentence for the person. */
export function parseEdit(current: Plan | null, edit: Json | undefined): Result<Plan> {
  if (!current) return { ok: false, error: 'There is no plan to edit.' };
  if (!edit || typeof edit !== 'object' || Array.isArray(edit)) {
    return { ok: false, error: 'An edit is a JSON object: a whole plan, or {"steps": [...]}.' };
  }
  // Before anything recursive (JSON.stringify, the schema parser) walks it: a deep edit would exhaust the stack.
  if (jsonValueDepth(edit, MAX_PLAN_DEPTH) > MAX_PLAN_DEPTH) {
    return { ok: false, error: `That edit was refused: a plan nests at most ${MAX_PLAN_DEPTH} levels deep.` };
  }
  if (JSON.stringify(edit).length > MAX_PLAN_CHARS) {
    return { ok: false, error: `That edit was refused: a plan is at most ${MAX_PLAN_CHARS} characters.` };
  }
  const parsed = planSchema.safeParse({ ...current, ...edit, needsTools: true });
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    return { ok: false, error: `That edit was refused: ${issues.join('; ')}` };
  }
  return { ok: true, value: parsed.data };
}

/**
 * An edit checked as the engine would apply it: read against the current plan, validated against the tools, and
 * refused when it changes or drops a step that started. The error is one sentence for the person.
 */
export function checkEdit(
  current: Plan | null,
  edit: Json | undefined,
  tools: readonly ToolInfo[],
  started: ReadonlySet<string>,
): Result<ValidatedPlan> {
  const parsed = parseEdit(current, edit);
  if (!parsed.ok) return parsed;
  const v = validatePlan(parsed.value, tools);
  const errors = v.ok ? checkRevision(current!, parsed.value, started) : v.error;
  if (!v.ok || errors.length > 0) return { ok: false, error: `That edit was refused: ${errors.join('; ')}` };
  return v;
}
