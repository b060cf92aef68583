/**
 * Fire parameters: built-in values a workflow's plan may use wherever a plan may use a reference, written like one:
 * `{"$ref": "fire.date"}` in a tool's or an llm step's arguments (at any depth), or a bare `fire.date` operand in a
 * condition. A fire binds them to its scheduled time before the plan is validated and run; references to steps are
 * left for the dispatcher.
 *
 * - `fire.time`, `fire.previousTime`: the fire's scheduled time and the schedule's time before it, ISO 8601 in the
 *   schedule's zone with its offset (`2026-12-07T09:00:00+01:00`); null when there is none.
 * - `fire.date`, `fire.previousDate`: their calendar dates in that zone (`2026-12-07`); null when there is none.
 */
import { splitCondition } from '../plan/condition.ts';
import { jsonValueDepth, MAX_PLAN_DEPTH, TOO_DEEP } from '../plan/json-depth.ts';
import type { Plan, Step } from '../plan/plan-schema.ts';
import { FIRE_PARAMS } from '../plan/fire-refs.ts';
import { collectRefs, isRefObject } from '../plan/refs.ts';
import type { Json } from '../types.ts';
import { zoneDate, zoneIso } from './zone-time.ts';

/** The values a fire binds, for `workflow show` and the card. */
export { FIRE_PARAMS } from '../plan/fire-refs.ts';

/** What one fire's parameters are bound from. */
export interface FireValues {
  /** The fire's scheduled time. */
  time: Date;
  /** The schedule's time before it, or null. */
  previous: Date | null;
  timeZone: string;
}

const PREFIX = 'fire.';
const KNOWN = new Set(FIRE_PARAMS);
const USE = `use ${FIRE_PARAMS.slice(0, -1).join(', ')} or ${FIRE_PARAMS.at(-1)}`;

/** The fire parameters a plan uses, in `FIRE_PARAMS` order (none for a plan nested too deeply to walk). */
export function fireParamsUsed(plan: Plan): string[] {
  if (tooDeep(plan)) return [];
  const used = new Set(plan.steps.flatMap((step) => namesIn(step).map((n) => n.name)));
  return FIRE_PARAMS.filter((name) => used.has(name));
}

/** Every `fire.…` name the plan uses that is not a fire parameter, one sentence each naming its step. */
export function checkFireParams(plan: Plan): string[] {
  if (tooDeep(plan)) return [TOO_DEEP];
  return plan.steps.flatMap((step) =>
    namesIn(step)
      .filter((n) => !KNOWN.has(n.name))
      .map((n) => `step ${step.id}: ${n.where}: unknown parameter "${short(n.name)}"; ${USE}`),
  );
}

/**
 * The plan with every fire parameter replaced by its value; nothing else is evaluated, and unknown `fire.…` names
 * are left as they are (validation refuses them). A plan nested too deeply comes back as it is, for validation to
 * refuse.
 */
export function bindFireParams(plan: Plan, values: FireValues): Plan {
  if (tooDeep(plan)) return plan;
  const bound = valuesOf(values);
  return { ...plan, steps: plan.steps.map((step) => bindStep(step, bound)) };
}

function bindStep(step: Step, bound: ReadonlyMap<string, Json>): Step {
  if (step.kind === 'condition') return { ...step, expression: bindCondition(step.expression, bound) };
  if (step.kind === 'llm') return { ...step, args: { prompt: bindValue(step.args.prompt, bound) } };
  return { ...step, args: bindValue(step.args, bound) as Record<string, Json> };
}

function bindValue(value: Json, bound: ReadonlyMap<string, Json>): Json {
  if (isRefObject(value)) return bound.has(value.$ref) ? (bound.get(value.$ref) as Json) : value;
  if (Array.isArray(value)) return value.map((v) => bindValue(v, bound));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(value)) {
    // defineProperty: an own "__proto__" key stays a key instead of setting the prototype.
    Object.defineProperty(out, k, { value: bindValue(v, bound), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The condition with each fire-parameter operand written as a literal (a quoted string, or null). */
function bindCondition(expression: string, bound: ReadonlyMap<string, Json>): string {
  const tokens = splitCondition(expression);
  if (!tokens.ok) return expression;
  let text = expression;
  // From the right, so the earlier token's offset still holds.
  for (const token of [tokens.value[2], tokens.value[0]]) {
    const value = bound.get(token.text);
    if (value === undefined) continue;
    text = text.slice(0, token.start) + JSON.stringify(value) + text.slice(token.start + token.text.length);
  }
  return text;
}

function valuesOf({ time, previous, timeZone }: FireValues): Map<string, Json> {
  return new Map<string, Json>([
    ['fire.time', zoneIso(time, timeZone)],
    ['fire.date', zoneDate(time, timeZone)],
    ['fire.previousTime', previous ? zoneIso(previous, timeZone) : null],
    ['fire.previousDate', previous ? zoneDate(previous, timeZone) : null],
  ]);
}

/** The `fire.…` names a step uses, with where each sits. */
function namesIn(step: Step): { name: string; where: string }[] {
  if (step.kind === 'condition') {
    const tokens = splitCondition(step.expression);
    if (!tokens.ok) return [];
    return [tokens.value[0], tokens.value[2]]
      .filter((t) => t.text.startsWith(PREFIX))
      .map((t) => ({ name: t.text, where: 'condition' }));
  }
  return collectRefs(step.args)
    .filter((r) => r.text.startsWith(PREFIX))
    .map((r) => ({ name: r.text, where: `argument ${r.at.slice(1).replace(/\//g, '.') || '(root)'}` }));
}

function tooDeep(plan: Plan): boolean {
  return jsonValueDepth(plan, MAX_PLAN_DEPTH) > MAX_PLAN_DEPTH;
}

function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
