/**
 * References as the compact plan writes them: `{"$ref": "a.content[0].text"}` is short for
 * `{"$ref": "steps.a.output.content[0].text"}`. A reference whose text starts with `steps.` is the long form; any
 * other text is short, read as `<id>` then the path. So a short reference never starts with `steps.` (a step named
 * `steps` is read through the long form, or bare as `steps` for its whole output).
 */
import type { Result } from '../result.ts';
import type { Json } from '../types.ts';
import { isLiteralOperand, parseCondition, conditionRefs, splitCondition } from './condition.ts';
import { isFireParam } from './fire-refs.ts';
import { collectRefs, isRefObject, parseReference } from './refs.ts';

const LONG_PREFIX = 'steps.';
const SHORT_HEAD = /^[A-Za-z][A-Za-z0-9_-]*/;

/** The long form of a reference written short or long, with the step it reads; an error for anything else. */
export function toLongRef(text: string): Result<{ text: string; stepId: string }> {
  if (text.startsWith(LONG_PREFIX)) {
    const ref = parseReference(text);
    return ref.ok ? { ok: true, value: { text, stepId: ref.value.stepId } } : ref;
  }
  const id = SHORT_HEAD.exec(text)?.[0];
  const long = id === undefined ? undefined : `${LONG_PREFIX}${id}.output${text.slice(id.length)}`;
  if (id === undefined || long === undefined || !parseReference(long).ok) {
    const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
    return {
      ok: false,
      error: `"${shown}" is not a reference: write a step id, then .key, [index] or ["key"] (e.g. "a.content[0].text")`,
    };
  }
  return { ok: true, value: { text: long, stepId: id } };
}

/** The short form of a long reference; the text unchanged when it is not one, or when short would read otherwise. */
export function toShortRef(text: string): string {
  const ref = parseReference(text);
  if (!ref.ok) return text;
  const short = ref.value.stepId + text.slice(`${LONG_PREFIX}${ref.value.stepId}.output`.length);
  return short.startsWith(LONG_PREFIX) ? text : short;
}

/** A value with every reference in its long form, and the steps they read in order of appearance. */
export function expandValueRefs(value: Json): Result<{ value: Json; stepIds: string[] }> {
  const refs = collectRefs(value);
  if (refs.length === 0) return { ok: true, value: { value, stepIds: [] } };
  const stepIds: string[] = [];
  const longs = new Map<string, string>();
  for (const ref of refs) {
    // A workflow's built-in value is no step: it is bound when the workflow fires.
    if (isFireParam(ref.text)) continue;
    const long = toLongRef(ref.text);
    if (!long.ok) return { ok: false, error: `${ref.at || '/'}: ${long.error}` };
    stepIds.push(long.value.stepId);
    longs.set(ref.text, long.value.text);
  }
  return { ok: true, value: { value: mapRefs(value, (t) => longs.get(t) ?? t), stepIds } };
}

/** A value with every long reference written short. */
export function shortenValueRefs(value: Json): Json {
  return collectRefs(value).length === 0 ? value : mapRefs(value, toShortRef);
}

/** A condition with its short references made long in place (spacing kept), and the steps it reads. */
export function expandConditionRefs(expression: string): Result<{ text: string; stepIds: string[] }> {
  const text = rewriteOperands(expression, (t) => {
    const long = toLongRef(t);
    return long.ok ? long.value.text : undefined;
  });
  const parsed = parseCondition(text ?? expression);
  if (!parsed.ok) return parsed;
  return { ok: true, value: { text: text ?? expression, stepIds: conditionRefs(parsed.value) } };
}

/** A condition with its long references written short in place; unchanged when it does not parse. */
export function shortenConditionRefs(expression: string): string {
  const text = rewriteOperands(expression, (t) => {
    const short = toShortRef(t);
    // A bare `true` or `null` would read as a literal, not as the whole output of a step of that name.
    return isLiteralOperand(short) ? t : short;
  });
  return text ?? expression;
}

/** Rewrites the two operands that are not literals; undefined when the text does not split or a rewrite fails. */
function rewriteOperands(expression: string, rewrite: (token: string) => string | undefined): string | undefined {
  const split = splitCondition(expression);
  if (!split.ok) return undefined;
  let text = expression;
  // Right operand first, so the left one's offset still holds.
  for (const token of [split.value[2], split.value[0]]) {
    if (isLiteralOperand(token.text)) continue;
    const next = rewrite(token.text);
    if (next === undefined) return undefined;
    text = text.slice(0, token.start) + next + text.slice(token.start + token.text.length);
  }
  return text;
}

/**
 * Copies a value with each reference's text mapped; keys are defined, so `__proto__` stays a plain key. It recurses:
 * callers measure the depth first (`MAX_PLAN_DEPTH`).
 */
function mapRefs(value: Json, map: (text: string) => string): Json {
  if (isRefObject(value)) return { $ref: map(value.$ref) };
  if (Array.isArray(value)) return value.map((v) => mapRefs(v, map));
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, Json> = {};
  for (const [k, v] of Object.entries(value)) {
    Object.defineProperty(copy, k, { value: mapRefs(v, map), enumerable: true, writable: true, configurable: true });
  }
  return copy;
}
