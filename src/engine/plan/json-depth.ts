/**
 * How deeply JSON nests, measured without recursion, so a hostile plan can be refused before anything recursive
 * (the schema parser, JSON.stringify, ajv) walks it and runs out of stack.
 */

/**
 * The deepest nesting of objects and arrays a plan may have, counting the plan object itself as level 1. Real plans
 * stay under ten levels; the schema parser runs out of stack somewhere past a thousand.
 */
export const MAX_PLAN_DEPTH = 64;

/**
 * Values from tool outputs nested deeper than this are not walked by recursive code (JSON.stringify to show them,
 * equality in a condition): a server may nest its output as deeply as it likes.
 */
export const MAX_OUTPUT_DEPTH = 256;

/** The complaint about a plan nested too deeply, for the planner's repair loop. */
export const TOO_DEEP = `the plan nests objects and arrays more than ${MAX_PLAN_DEPTH} levels deep; write a flatter plan`;

/**
 * The deepest nesting of `{` and `[` in JSON text, brackets inside strings not counted; a scalar is 0. One linear
 * scan that stops as soon as it passes `limit` (returning `limit + 1`), so its cost never depends on the depth.
 */
export function jsonTextDepth(text: string, limit = Number.MAX_SAFE_INTEGER): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return limit + 1;
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && depth > 0) {
      depth--;
    }
  }
  return deepest;
}

/**
 * The deepest nesting of objects and arrays in a value (a scalar is 0), walked with an explicit stack; it stops
 * as soon as it passes `limit` (returning `limit + 1`).
 */
export function jsonValueDepth(value: unknown, limit = Number.MAX_SAFE_INTEGER): number {
  let deepest = 0;
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop() as { v: unknown; depth: number };
    if (v === null || typeof v !== 'object') continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > limit) return limit + 1;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push({ v: child, depth: here });
  }
  return deepest;
}

/** The character codes JSON's structure is read by (shared with forgiving-answer.ts's scans). */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
