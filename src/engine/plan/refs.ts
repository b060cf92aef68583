/**
 * References from a step's arguments to an earlier step's output.
 * Syntax: `steps.<id>.output` followed by any number of `.key`, `[index]` or `["key"]` segments.
 * Parsing is a single left-to-right scan with no backtracking, so hostile input costs linear time.
 */
import type { Result } from '../result.ts';
import type { Json } from '../types.ts';

/** A parsed reference: the step it reads and the path into that step's output. */
export interface Reference {
  stepId: string;
  path: (string | number)[];
}

const MAX_REF_LENGTH = 1000;
const IDENT = /[A-Za-z0-9_-]/;

/** Parses `steps.<id>.output...`; returns a readable error for anything else. */
export function parseReference(text: string): Result<Reference> {
  if (text.length > MAX_REF_LENGTH) return { ok: false, error: `reference longer than ${MAX_REF_LENGTH} characters` };
  const head = /^steps\.([A-Za-z][A-Za-z0-9_-]*)\.output/.exec(text);
  if (!head) return { ok: false, error: `"${short(text)}" is not a reference; write steps.<id>.output...` };
  const path: (string | number)[] = [];
  let i = head[0].length;
  while (i < text.length) {
    const c = text[i];
    if (c === '.') {
      let j = i + 1;
      while (j < text.length && IDENT.test(text[j] as string)) j++;
      if (j === i + 1) return { ok: false, error: `empty key at position ${i + 1} in "${short(text)}"` };
      path.push(text.slice(i + 1, j));
      i = j;
    } else if (c === '[' && text[i + 1] === '"') {
      const end = text.indexOf('"]', i + 2);
      if (end < 0) return { ok: false, error: `unclosed ["key"] in "${short(text)}"` };
      path.push(text.slice(i + 2, end));
      i = end + 2;
    } else if (c === '[') {
      const end = text.indexOf(']', i + 1);
      const digits = end < 0 ? '' : text.slice(i + 1, end);
      if (!/^\d{1,9}$/.test(digits)) return { ok: false, error: `bad index at position ${i} in "${short(text)}"` };
      path.push(Number(digits));
      i = end + 1;
    } else {
      return { ok: false, error: `unexpected "${c}" at position ${i} in "${short(text)}"` };
    }
  }
  return { ok: true, value: { stepId: head[1] as string, path } };
}

/** True when a value is a `{"$ref": "..."}` object (exactly one key). */
export function isRefObject(value: unknown): value is { $ref: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as Record<string, unknown>).$ref === 'string'
  );
}

/** Every `$ref` inside a value, with the JSON-pointer-like location where it sits. */
export function collectRefs(value: unknown, at = ''): { at: string; text: string }[] {
  const found: { at: string; text: string }[] = [];
  const stack: { v: unknown; at: string }[] = [{ v: value, at }];
  while (stack.length > 0) {
    const { v, at: where } = stack.pop() as { v: unknown; at: string };
    if (isRefObject(v)) found.push({ at: where, text: v.$ref });
    else if (Array.isArray(v)) v.forEach((x, i) => stack.push({ v: x, at: `${where}/${i}` }));
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) stack.push({ v: x, at: `${where}/${k}` });
    }
  }
  return found.reverse();
}

/** Follows a path into a value; own properties only, so `__proto__` and friends read nothing. */
export function readPath(root: Json | undefined, path: readonly (string | number)[]): Result<Json> {
  let cur: Json | undefined = root;
  for (const seg of path) {
    if (cur === null || cur === undefined || typeof cur !== 'object') return { ok: false, error: `nothing at ${seg}` };
    if (Array.isArray(cur)) {
      if (typeof seg !== 'number' || seg >= cur.length) return { ok: false, error: `no index ${seg}` };
      cur = cur[seg];
    } else {
      const key = String(seg);
      if (!Object.prototype.hasOwnProperty.call(cur, key)) return { ok: false, error: `no key "${key}"` };
      cur = cur[key];
    }
  }
  return cur === undefined ? { ok: false, error: 'no value' } : { ok: true, value: cur };
}

/** Replaces every `$ref` in `value` by what it points to in `outputs`; fails on the first that cannot be read. */
export function resolveRefs(value: Json, outputs: ReadonlyMap<string, Json>): Result<Json> {
  if (isRefObject(value)) {
    const ref = parseReference(value.$ref);
    if (!ref.ok) return ref;
    const out = outputs.get(ref.value.stepId);
    if (out === undefined) return { ok: false, error: `step ${ref.value.stepId} has no output` };
    const got = readPath(out, ref.value.path);
    return got.ok ? got : { ok: false, error: `${value.$ref}: ${got.error}` };
  }
  if (Array.isArray(value)) {
    const items: Json[] = [];
    for (const item of value) {
      const r = resolveRefs(item, outputs);
      if (!r.ok) return r;
      items.push(r.value);
    }
    return { ok: true, value: items };
  }
  if (value && typeof value === 'object') {
    const obj: Record<string, Json> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = resolveRefs(v, outputs);
      if (!r.ok) return r;
      Object.defineProperty(obj, k, { value: r.value, enumerable: true, writable: true, configurable: true });
    }
    return { ok: true, value: obj };
  }
  return { ok: true, value };
}

function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
