/**
 * The slips planners make that are read as meant, with no model call, because their meaning is certain (pure):
 * - prose or a code fence around the JSON: the answer is the first `{...}` in it that is JSON;
 * - a trailing comma before `}` or `]` (outside strings);
 * - `null` for a key that may be left out: the key left out (every such key of the full plan and steps, read from the
 *   schema; the compact form already reads them so);
 * - a tool named without its server (`echo`) when exactly one connected tool has that name (`everything.echo`).
 * Where the meaning is not certain the answer is left as written, and validation refuses it naming the step (a tool
 * name two servers have is refused with both).
 */
import type { Result } from '../result.ts';
import type { Json, ToolInfo } from '../types.ts';
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  MAX_PLAN_DEPTH,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  TOO_DEEP,
} from './json-depth.ts';
import { OPTIONAL_KEYS, type Plan, type Step } from './plan-schema.ts';

const NOT_JSON = 'the answer is not a JSON object';
/** At most this many `{...}` in an answer are tried as its JSON (each try reads the text once). */
const MAX_TRIES = 8;

const COMMA = 0x2c;

/**
 * The JSON object in an answer: the first balanced `{...}` that parses (a trailing comma forgiven), with whatever is
 * around it ignored, as the streaming reader ignores it. A `{...}` in the prose before it that is not JSON is skipped;
 * a `{` that never closes ends the search (what follows it is inside it). Nesting is measured as the text is scanned,
 * before anything parses it: the schema parser recurses, and a hostile answer must not exhaust the stack.
 */
export function readAnswerObject(text: string): Result<Json> {
  let from = 0;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const start = text.indexOf('{', from);
    if (start < 0) break;
    const end = objectEnd(text, start);
    if (end === 'too deep') return { ok: false, error: TOO_DEEP };
    if (end === 'open') break;
    const value = parseJson(text.slice(start, end));
    if (value !== undefined) return { ok: true, value };
    from = end;
  }
  return { ok: false, error: NOT_JSON };
}

/** JSON text as a value, a trailing comma before `}` or `]` forgiven; undefined when it is not JSON even so. */
export function parseJson(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    try {
      return JSON.parse(withoutTrailingCommas(text)) as Json;
    } catch {
      return undefined;
    }
  }
}

/**
 * The text with every comma that is followed (after white space) by `}` or `]` removed, strings untouched. Linear:
 * the white space after a comma is looked at once, up to the first character that is not white space.
 */
export function withoutTrailingCommas(text: string): string {
  const parts: string[] = [];
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === COMMA) {
      let j = i + 1;
      while (j < text.length && isSpace(text.charCodeAt(j))) j++;
      const next = text.charCodeAt(j);
      if (next === CLOSE_BRACE || next === CLOSE_BRACKET) {
        parts.push(text.slice(last, i));
        last = i + 1;
      }
    }
  }
  parts.push(text.slice(last));
  return parts.join('');
}

/** Where the object opened at `start` ends (the index after its `}`), skipping strings; or why it does not. */
function objectEnd(text: string, start: number): number | 'open' | 'too deep' {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_PLAN_DEPTH) return 'too deep';
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) return i + 1;
    }
  }
  return 'open';
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The answer with each `null` written for a key that may be left out removed: the plan's (when it is the full form)
 * and every step's (by its kind; a `"kind": null` is the kind left out, so `tool`). Nothing else changes: a null that
 * is an argument's value stays, and a null for a key that is required is left for the schema to refuse.
 */
export function withoutOptionalNulls(answer: Json): Json {
  if (!isObject(answer)) return answer;
  const root = Object.hasOwn(answer, 'needsTools') ? withoutNulls(answer, OPTIONAL_KEYS.plan) : { ...answer };
  const steps = root['steps'];
  if (Array.isArray(steps)) root['steps'] = steps.map(stepWithoutOptionalNulls);
  return root;
}

/** One step (compact or full) with each `null` written for a key that may be left out removed. */
export function stepWithoutOptionalNulls(step: Json): Json {
  if (!isObject(step) || !Object.hasOwn(step, 'kind')) return step;
  // Only the full form has "kind", whose default is tool.
  const kind = step['kind'] ?? 'tool';
  const keys =
    kind === 'tool' || kind === 'llm' || kind === 'condition'
      ? OPTIONAL_KEYS[kind]
      : [...OPTIONAL_KEYS.tool, ...OPTIONAL_KEYS.llm, ...OPTIONAL_KEYS.condition];
  const copy = withoutNulls(step, keys);
  copy['kind'] = kind;
  return copy;
}

/** A copy without the `keys` whose value is null (keys defined, so `__proto__` stays a plain key). */
function withoutNulls(value: Record<string, Json>, keys: readonly string[]): Record<string, Json> {
  const copy: Record<string, Json> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null && keys.includes(k)) continue;
    Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/**
 * A tool's qualified name for the name a plan wrote: the name itself when a tool has it, else the one tool whose own
 * name (without its server) it is; unchanged when none or several are, for validation to refuse with the candidates.
 */
export function resolveToolName(name: string, tools: readonly ToolInfo[]): string {
  if (tools.some((t) => t.name === name)) return name;
  const bare = tools.filter((t) => t.tool === name);
  return bare.length === 1 ? (bare[0] as ToolInfo).name : name;
}

/** A step with its tool's name resolved (`resolveToolName`); other kinds of step unchanged. */
export function resolveStepTool<S extends Step>(step: S, tools: readonly ToolInfo[]): S {
  if (step.kind !== 'tool') return step;
  const tool = resolveToolName(step.tool, tools);
  return tool === step.tool ? step : { ...step, tool };
}

/** A plan with every tool step's tool name resolved (`resolveToolName`). */
export function resolveToolNames(plan: Plan, tools: readonly ToolInfo[]): Plan {
  return { ...plan, steps: plan.steps.map((s) => resolveStepTool(s, tools)) };
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
