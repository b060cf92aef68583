/**
 * Conditions: `<operand> <operator> <operand>`, nothing more. Operators: == != > >= < <= contains.
 * Operands: a reference (`steps.s1.output.structuredContent.count`), a quoted string, a number, true, false, null.
 * A hand-written scanner, never `eval` or `Function`; one pass over the text, so cost is linear in its length.
 */
import type { Result } from '../result.ts';
import { jsonValueDepth, MAX_OUTPUT_DEPTH } from './json-depth.ts';
import { parseReference, readPath, type Reference } from './refs.ts';
import type { Json } from '../types.ts';

export const CONDITION_OPERATORS = ['==', '!=', '>=', '<=', '>', '<', 'contains'] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

type Operand = { ref: Reference; text: string } | { literal: Json };

/** A parsed condition. */
export interface Condition {
  left: Operand;
  op: ConditionOperator;
  right: Operand;
}

const MAX_LENGTH = 2000;

/** Parses a condition expression, or says precisely what is wrong with it. */
export function parseCondition(text: string): Result<Condition> {
  const split = splitCondition(text);
  if (!split.ok) return split;
  const [l, o, r] = split.value.map((t) => t.text) as [string, string, string];
  if (!(CONDITION_OPERATORS as readonly string[]).includes(o)) {
    return { ok: false, error: `unknown operator "${o.slice(0, 20)}"; use one of ${CONDITION_OPERATORS.join(' ')}` };
  }
  const left = parseOperand(l);
  if (!left.ok) return left;
  const right = parseOperand(r);
  if (!right.ok) return right;
  return { ok: true, value: { left: left.value, op: o as ConditionOperator, right: right.value } };
}

/** One token of a condition and where it starts, so a caller can rewrite an operand in place. */
export interface ConditionToken {
  text: string;
  start: number;
}

/** Splits a condition into its three tokens (operand, operator, operand), or says why it cannot. */
export function splitCondition(text: string): Result<[ConditionToken, ConditionToken, ConditionToken]> {
  if (typeof text !== 'string') return { ok: false, error: 'condition must be a string' };
  if (text.length > MAX_LENGTH) return { ok: false, error: `condition longer than ${MAX_LENGTH} characters` };
  const tokens: ConditionToken[] = [];
  let i = 0;
  while (i < text.length && tokens.length <= 3) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === '"' || c === "'") {
      i++;
      while (i < text.length && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
      if (i >= text.length) return { ok: false, error: `unclosed string starting at position ${start}` };
      i++;
    } else if ('=!<>'.includes(c)) {
      while (i < text.length && '=!<>'.includes(text[i] as string)) i++;
    } else {
      let inKey = false;
      while (i < text.length && (inKey || !/[\s=!<>]/.test(text[i] as string))) {
        if (!inKey && text.startsWith('["', i)) inKey = true;
        else if (inKey && text.startsWith('"]', i)) inKey = false;
        i++;
      }
    }
    tokens.push({ text: text.slice(start, i), start });
  }
  if (tokens.length !== 3) {
    return {
      ok: false,
      error: `expected "<operand> <operator> <operand>", got ${tokens.length > 3 ? 'more' : tokens.length} part(s)`,
    };
  }
  return { ok: true, value: tokens as [ConditionToken, ConditionToken, ConditionToken] };
}

/** True when a condition operand is a literal (quoted string, number, true, false, null), not a reference. */
export function isLiteralOperand(token: string): boolean {
  return (
    token.startsWith('"') ||
    token.startsWith("'") ||
    token === 'true' ||
    token === 'false' ||
    token === 'null' ||
    /^-?\d+(\.\d+)?$/.test(token)
  );
}

function parseOperand(token: string): Result<Operand> {
  if (token.startsWith('"') || token.startsWith("'")) {
    const body = token.slice(1, -1).replace(/\\(.)/g, '$1');
    return { ok: true, value: { literal: body } };
  }
  if (token === 'true' || token === 'false') return { ok: true, value: { literal: token === 'true' } };
  if (token === 'null') return { ok: true, value: { literal: null } };
  if (/^-?\d+(\.\d+)?$/.test(token)) return { ok: true, value: { literal: Number(token) } };
  if (token.startsWith('steps.')) {
    const ref = parseReference(token);
    return ref.ok ? { ok: true, value: { ref: ref.value, text: token } } : ref;
  }
  return { ok: false, error: `"${token.slice(0, 40)}" is not a reference, string, number, true, false or null` };
}

/** Step ids a condition reads. */
export function conditionRefs(c: Condition): string[] {
  return [c.left, c.right].flatMap((o) => ('ref' in o ? [o.ref.stepId] : []));
}

/** Evaluates a parsed condition against finished steps' outputs. */
export function evaluateCondition(c: Condition, outputs: ReadonlyMap<string, Json>): Result<boolean> {
  const left = operandValue(c.left, outputs);
  if (!left.ok) return left;
  const right = operandValue(c.right, outputs);
  if (!right.ok) return right;
  return { ok: true, value: compare(left.value, c.op, right.value) };
}

function operandValue(o: Operand, outputs: ReadonlyMap<string, Json>): Result<Json> {
  if ('literal' in o) return { ok: true, value: o.literal };
  const got = readPath(outputs.get(o.ref.stepId), o.ref.path);
  if (!got.ok) return { ok: false, error: `${o.text}: ${got.error}` };
  // Equality compares objects as JSON text, and JSON.stringify recurses.
  if (jsonValueDepth(got.value, MAX_OUTPUT_DEPTH) > MAX_OUTPUT_DEPTH) {
    return { ok: false, error: `${o.text}: nested more than ${MAX_OUTPUT_DEPTH} levels deep` };
  }
  return got;
}

function compare(a: Json, op: ConditionOperator, b: Json): boolean {
  switch (op) {
    case '==':
      return equal(a, b);
    case '!=':
      return !equal(a, b);
    case 'contains':
      if (typeof a === 'string') return typeof b === 'string' && a.includes(b);
      return Array.isArray(a) && a.some((x) => equal(x, b));
    default: {
      const x = typeof a === 'string' && typeof b === 'number' ? Number(a) : a;
      const y = typeof b === 'string' && typeof a === 'number' ? Number(b) : b;
      if (!((typeof x === 'number' && typeof y === 'number') || (typeof x === 'string' && typeof y === 'string'))) {
        return false;
      }
      if (op === '>') return x > y;
      if (op === '>=') return x >= y;
      if (op === '<') return x < y;
      return x <= y;
    }
  }
}

function equal(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'string') return String(a) === b;
  if (typeof a === 'string' && typeof b === 'number') return a === String(b);
  if (a && b && typeof a === 'object' && typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return false;
}
