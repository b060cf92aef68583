/**
 * The compact plan form the planner writes, expanded on arrival into the full `Plan` that is stored, shown and
 * validated, so the full form stays exactly as expressive as before. Compact:
 *   {"steps": [STEP, ...], "summary": "...", "risks": [...], "why": "..."}   or   {"answer": "..."}
 * with STEP one of {"tool": "<server>.<tool>", "args": {...}}, {"llm": <prompt>}, {"if": "<condition>",
 * "then": [ids], "else": [ids]}, each with optional "id" (default `s<position>`), "after", "note", "optional".
 * A fan-out, {"tool": "<server>.<tool>", "each": [{...}, {...}]}, is one tool step per arguments object: the calls
 * a tool-calling agent would send in one message, written without repeating the tool's name and keys for each
 * (a planner's output tokens are most of its time). Its steps take the default ids of their positions, as if each
 * were written out, so the step after a fan-out of 16 written first is s17; "after", "note" and "optional" apply
 * to every one of them.
 * A step's dependencies are "after" plus the steps its references read, in that order. References may be short
 * (`compact-refs.ts`). An object with "needsTools" is a full plan, and a step with "kind" a full step: both are
 * taken as they are, with nothing implied, so a full plan or step always survives the trip through this form.
 */
import { z } from 'zod';
import { fail, ok, type Result } from '../result.ts';
import type { Json } from '../types.ts';
import { expandConditionRefs, expandValueRefs } from './compact-refs.ts';
import { jsonValueDepth, MAX_PLAN_DEPTH, TOO_DEEP } from './json-depth.ts';
import { MAX_PLAN_STEPS, planSchema, stepSchema, type Plan, type Step } from './plan-schema.ts';

type Kind = 'tool' | 'llm' | 'if';
const KINDS: readonly Kind[] = ['tool', 'llm', 'if'];
/** The compact form's fan-out: one step per element (see the file's comment). */
const EACH = 'each';
const KEYS: Record<Kind, string[]> = { tool: ['tool', 'args', EACH], llm: ['llm'], if: ['if', 'then', 'else'] };
const COMMON_KEYS = ['id', 'after', 'note', 'optional'];
const ROOT_KEYS = ['steps', 'summary', 'risks', 'why', 'answer'];
/** The full form's names, so a complaint about a value checked in its full form names the key the model wrote. */
const COMPACT_NAMES: Record<string, string> = {
  dependsOn: 'after',
  description: 'note',
  expression: 'if',
  ifTrue: 'then',
  ifFalse: 'else',
  rationale: 'why',
};
// A step sits inside the plan object and its steps array.
const MAX_STEP_DEPTH = MAX_PLAN_DEPTH - 2;
const MAX_ERRORS = 20;

const compactRoot = z.object({
  summary: z.string().max(1000).optional(),
  risks: z.array(z.string().max(500)).optional(),
  why: z.string().max(4000).optional(),
  answer: z.string().optional(),
});

/** The id of a step written without one: `s` and its 1-based position. */
export function defaultStepId(index: number): string {
  return `s${index + 1}`;
}

/** The summary of a plan that needs no tools, when the planner gave none. */
export const NO_TOOLS_SUMMARY = 'Answer without tools';

/** A short summary from the steps, for a plan written without one: "Run fs.read_text_file ×2 and 2 model steps". */
export function deriveSummary(steps: readonly Step[]): string {
  const counts = new Map<string, number>();
  for (const s of steps) {
    const key = s.kind === 'tool' ? s.tool : s.kind;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const parts = [...counts].map(([name, n]) => {
    // Tool names always hold a dot (`<server>.<tool>`), so they never clash with the two other kinds.
    if (name === 'llm') return n === 1 ? 'a model step' : `${n} model steps`;
    if (name === 'condition') return n === 1 ? 'a condition' : `${n} conditions`;
    return n === 1 ? name : `${name} ×${n}`;
  });
  const shown = parts.length > 4 ? [...parts.slice(0, 3), `${parts.length - 3} more kinds of step`] : parts;
  const text = `Run ${shown.length > 1 ? `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}` : (shown[0] ?? 'nothing')}`;
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * How many steps an element of the answer's "steps" list stands for: the length of a fan-out's list, else 1 (also for
 * an element that is not a step at all, so the default ids of the steps after it do not depend on how it is wrong).
 */
export function compactElementWidth(raw: unknown): number {
  if (!isObject(raw) || Object.hasOwn(raw, 'kind')) return 1;
  const each = raw[EACH];
  return Array.isArray(each) && each.length > 0 ? each.length : 1;
}

/**
 * One element of the answer's "steps" list as the full steps it stands for: one step, or a fan-out's. `position` is
 * the first one's place in the expanded plan (its default id), `written` the element's place in the list as written
 * (what errors name).
 */
export function expandCompactElement(raw: unknown, position: number, written = position): Result<Step[]> {
  if (!isObject(raw) || Object.hasOwn(raw, 'kind') || raw[EACH] == null) {
    const step = expandCompactStep(raw, position, `steps[${written}]`);
    return step.ok ? ok([step.value]) : step;
  }
  const at = `steps[${written}]`;
  const each = raw[EACH];
  const { [EACH]: _each, args, id, ...rest } = raw;
  if (!Array.isArray(each) || each.length === 0) return fail(`${at}.each: a list of argument objects, one per call`);
  if (typeof raw['tool'] !== 'string')
    return fail(`${at}: "each" goes with "tool": the tool is called once per arguments object in the list`);
  // What all its calls share is checked once, so a slip there is named once, not once per call.
  const allowed = ['tool', EACH, ...COMMON_KEYS];
  const unknown = unknownKeys(raw, [...allowed, 'args']);
  if (unknown) return fail(`${at}:${unknown.slice(1)}; a step with "each" may have ${quoted(allowed, ', ')}`);
  if (args != null) return fail(`${at}: write "args" (one call) or "each" (one call per arguments object), not both`);
  const after = raw['after'] ?? [];
  if (!Array.isArray(after) || !after.every((d) => typeof d === 'string'))
    return fail(`${at}.after: a list of step ids`);
  if (id != null) {
    return fail(
      `${at}: a step with "each" has no "id": its calls take the default ids of their places, here s${position + 1} to s${position + each.length}`,
    );
  }
  if (position + each.length > MAX_PLAN_STEPS) {
    return fail(`${at}.each: a plan has at most ${MAX_PLAN_STEPS} steps in all; write a smaller plan`);
  }
  const steps: Step[] = [];
  const errors: string[] = [];
  each.forEach((item, k) => {
    const callAt = `${at}.each[${k}]`;
    const step = expandCompactStep({ ...rest, args: item }, position + k, callAt);
    // The element is the call's arguments: a complaint about them names the element, not an "args" it does not have.
    if (step.ok) steps.push(step.value);
    else errors.push(step.error.replaceAll(`${callAt}.args`, callAt));
  });
  return errors.length > 0 ? fail(errors.slice(0, MAX_ERRORS).join('\n')) : ok(steps);
}

/**
 * One step, compact or full, as a full `Step` (dependencies implied), with the default id of place `index`; the
 * error names it as `at` (`steps[<index>]` unless told).
 */
export function expandCompactStep(raw: unknown, index: number, at = `steps[${index}]`): Result<Step> {
  if (!isObject(raw)) return fail(`${at}: a step is a JSON object, not ${typeName(raw)}`);
  if (jsonValueDepth(raw, MAX_STEP_DEPTH) > MAX_STEP_DEPTH) return fail(`${at}: ${TOO_DEEP}`);
  if (Object.hasOwn(raw, 'kind')) return parseFullStep(raw, at);
  const kinds = KINDS.filter((k) => Object.hasOwn(raw, k));
  const kind = kinds[0];
  if (kind === undefined) return fail(`${at}: a step needs "tool", "llm" or "if"${unknownKeys(raw, [])}`);
  if (kinds.length > 1) return fail(`${at}: a step has one of "tool", "llm" or "if", not ${quoted(kinds, ' and ')}`);
  // A fan-out is several steps: read alone as one, it would be a call with none of its arguments.
  if (raw[EACH] != null) return fail(`${at}: a step with "each" stands for several steps (read it as an element)`);
  const allowed = [...KEYS[kind], ...COMMON_KEYS];
  const unknown = unknownKeys(raw, allowed);
  if (unknown) return fail(`${at}:${unknown.slice(1)}; a step with "${kind}" may have ${quoted(allowed, ', ')}`);
  const after = raw['after'] ?? [];
  if (!Array.isArray(after) || !after.every((d) => typeof d === 'string')) {
    return fail(`${at}.after: a list of step ids`);
  }
  const body = expandBody(kind, raw);
  if (!body.ok) return fail(`${at}.${body.error}`);
  const full = {
    id: raw['id'] ?? defaultStepId(index),
    dependsOn: [...new Set([...after, ...body.value.reads])],
    description: raw['note'] ?? '',
    optional: raw['optional'] ?? false,
    ...body.value.fields,
  };
  // An llm prompt sits one level deeper in the full form ({"args": {"prompt": ...}}).
  if (jsonValueDepth(full, MAX_STEP_DEPTH) > MAX_STEP_DEPTH) return fail(`${at}: ${TOO_DEEP}`);
  return parseStep(full, at, true);
}

/** A planner's answer, compact or full, as a full `Plan`; errors name the step and the key to fix, one per line. */
export function expandCompactPlan(raw: Json): Result<Plan> {
  if (!isObject(raw)) return fail('the answer is not a JSON object');
  if (jsonValueDepth(raw, MAX_PLAN_DEPTH) > MAX_PLAN_DEPTH) return fail(TOO_DEEP);
  if (Object.hasOwn(raw, 'needsTools')) return parseFullPlan(raw);
  const unknown = unknownKeys(raw, ROOT_KEYS);
  if (unknown) return fail(`(root):${unknown.slice(1)}; a plan has ${quoted(ROOT_KEYS, ', ')}`);
  // Models often write an optional field they leave empty as null ("why": null): that is the field left out, as it
  // already is for a step's optional fields, not a plan to send back for repair.
  const root = fromZod(compactRoot.safeParse(withoutNulls(raw)), '', true);
  if (!root.ok) return root;
  const { summary, risks = [], why = '', answer } = root.value;
  const steps = raw['steps'] ?? [];
  if (!Array.isArray(steps)) return fail('steps: a list of steps');
  if (steps.length > MAX_PLAN_STEPS) {
    return fail(`steps: a plan has at most ${MAX_PLAN_STEPS} steps, not ${steps.length}; write a smaller plan`);
  }
  const base = { rationale: why, risks, summary: summary?.trim() ? summary : '' };
  if (steps.length === 0) {
    if (answer === undefined) return fail('write "steps" (the work to do) or, if no tools are needed, "answer"');
    return ok({ ...base, summary: base.summary || NO_TOOLS_SUMMARY, needsTools: false, answer, steps: [] });
  }
  if (answer !== undefined) return fail('write "steps" or "answer", not both');
  const expanded = expandSteps(steps);
  if (!expanded.ok) return expanded;
  const derived = base.summary || deriveSummary(expanded.value);
  return ok({ ...base, summary: derived, needsTools: true, answer: null, steps: expanded.value });
}

function expandSteps(raw: readonly Json[]): Result<Step[]> {
  const steps: Step[] = [];
  const errors: string[] = [];
  const firstAt = new Map<string, number>();
  let position = 0;
  raw.forEach((item, i) => {
    const expanded = expandCompactElement(item, position, i);
    position += compactElementWidth(item);
    if (!expanded.ok) return void errors.push(expanded.error);
    for (const step of expanded.value) {
      const seen = firstAt.get(step.id);
      if (seen === undefined) firstAt.set(step.id, i);
      else if (isObject(item) && item['id'] == null && item['kind'] === undefined) {
        errors.push(`steps[${i}]: its default id "${step.id}" is already used by steps[${seen}]; give it an id`);
      } else errors.push(`steps[${i}]: the id "${step.id}" is already used by steps[${seen}]`);
      steps.push(step);
    }
  });
  if (errors.length === 0 && steps.length > MAX_PLAN_STEPS) {
    return fail(`steps: a plan has at most ${MAX_PLAN_STEPS} steps, not ${steps.length}; write a smaller plan`);
  }
  return errors.length > 0 ? fail(errors.slice(0, MAX_ERRORS).join('\n')) : ok(steps);
}

/** The full form's kind-specific fields of a compact step, and the steps its references read. */
function expandBody(kind: Kind, raw: Record<string, Json>): Result<{ fields: Record<string, Json>; reads: string[] }> {
  if (kind === 'if') {
    const text = raw['if'];
    if (typeof text !== 'string') return fail('if: a condition, e.g. "a.structuredContent.count > 0"');
    const cond = expandConditionRefs(text);
    if (!cond.ok) return fail(`if: ${cond.error}`);
    const fields = {
      kind: 'condition',
      expression: cond.value.text,
      ifTrue: raw['then'] ?? [],
      ifFalse: raw['else'] ?? [],
    };
    return ok({ fields, reads: cond.value.stepIds });
  }
  const value = kind === 'tool' ? (raw['args'] ?? {}) : (raw['llm'] as Json);
  if (kind === 'tool' && !isObject(value))
    return fail(`args: an object of the tool's arguments, not ${typeName(value)}`);
  const refs = expandValueRefs(value);
  if (!refs.ok) return fail(`${kind === 'tool' ? 'args' : 'llm'}${refs.error}`);
  const fields: Record<string, Json> =
    kind === 'tool'
      ? { kind: 'tool', tool: raw['tool'] as Json, args: refs.value.value }
      : { kind: 'llm', args: { prompt: refs.value.value } };
  return ok({ fields, reads: refs.value.stepIds });
}

function parseFullPlan(raw: Record<string, Json>): Result<Plan> {
  const steps = Array.isArray(raw['steps']) ? raw['steps'] : [];
  const mixed = steps.flatMap((step, i) => (isObject(step) ? compactKeysIn(step, `steps[${i}]`) : []));
  if (mixed.length > 0) return fail(mixed.slice(0, MAX_ERRORS).join('\n'));
  return fromZod(planSchema.safeParse(raw), '', false);
}

function parseFullStep(raw: Record<string, Json>, at: string): Result<Step> {
  const mixed = compactKeysIn(raw, at);
  return mixed.length > 0 ? fail(mixed.join('\n')) : parseStep(raw, at, false);
}

/**
 * Compact keys in a step of the full form. The full form's schema drops keys it does not know, so an "after" there
 * would be lost without a word and the step would run too early.
 */
function compactKeysIn(step: Record<string, Json>, at: string): string[] {
  const fullName = Object.fromEntries(Object.entries(COMPACT_NAMES).map(([f, c]) => [c, f]));
  return ['after', 'note', 'llm', 'if', 'then', 'else']
    .filter((k) => Object.hasOwn(step, k))
    .map((k) => {
      const instead = fullName[k] ? `; there, write "${fullName[k]}"` : '';
      return `${at}: "${k}" is a key of the compact form, not of the full one (a plan with "needsTools", a step with "kind")${instead}`;
    });
}

function parseStep(value: unknown, at: string, compact: boolean): Result<Step> {
  return fromZod(stepSchema.safeParse(value), at, compact);
}

/** A zod result as ours; each issue on a line, named by where it sits (in the compact form's words when asked). */
function fromZod<T>(parsed: z.ZodSafeParseResult<T>, at: string, compact: boolean): Result<T> {
  if (parsed.success) return ok(parsed.data);
  const lines = parsed.error.issues.slice(0, 10).map((issue) => {
    const where = `${at}${pathText(issue.path, compact)}`;
    return `${where.replace(/^\./, '') || '(root)'}: ${issue.message}`;
  });
  return fail(lines.join('\n'));
}

function pathText(path: readonly PropertyKey[], compact: boolean): string {
  let segments = path;
  if (compact && path[0] === 'args' && path[1] === 'prompt') segments = ['llm', ...path.slice(2)];
  return segments
    .map((seg, i) => {
      if (typeof seg === 'number') return `[${seg}]`;
      const name = String(seg);
      return `.${compact && i === 0 ? (COMPACT_NAMES[name] ?? name) : name}`;
    })
    .join('');
}

/** `; unknown key "x" (write "after")`-style text for keys outside `allowed`, or '' when there are none. */
function unknownKeys(raw: Record<string, Json>, allowed: readonly string[]): string {
  const unknown = Object.keys(raw).filter((k) => !allowed.includes(k));
  if (unknown.length === 0) return '';
  const named = unknown.slice(0, 5).map((k) => {
    const hint = COMPACT_NAMES[k] ?? (k === 'prompt' ? 'llm' : undefined);
    const shown = JSON.stringify(k.length > 40 ? `${k.slice(0, 37)}...` : k);
    return hint ? `${shown} (write "${hint}")` : shown;
  });
  return `; unknown key${unknown.length > 1 ? 's' : ''} ${named.join(', ')}`;
}

function quoted(words: readonly string[], sep: string): string {
  return words.map((w) => `"${w}"`).join(sep);
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? 'a string' : `a ${typeof value}`;
}

/** The root's fields, with those written as null left out (what "optional" means to a model that writes them). */
function withoutNulls(raw: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null));
}
