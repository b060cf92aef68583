import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonTextDepth, jsonValueDepth } from '../../../src/engine/plan/json-depth.ts';

/** `depth` arrays inside each other around `inner`, as text. */
function nestedText(depth: number, inner = '1'): string {
  return `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
}

/** `depth` objects inside each other, as a value (built without recursion). */
function nestedValue(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** The depth by the obvious recursive definition, for comparison on small values. */
function recursiveDepth(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  const children = Array.isArray(v) ? v : Object.values(v);
  return 1 + Math.max(0, ...children.map(recursiveDepth));
}

describe('the depth of JSON text, counted before parsing', () => {
  it.each<[string, string, number]>([
    ['a number', '42', 0],
    ['a string', '"x"', 0],
    ['an empty object', '{}', 1],
    ['an array in an object', '{"a":[1,2]}', 2],
    ['siblings count once', '[[1],[2],[3]]', 2],
    ['brackets inside a string', '{"a":"[[[{{{"}', 1],
    ['an escaped quote inside a string', '{"a":"\\"[[[{"}', 1],
    ['an escaped backslash ending a string', '{"a":"\\\\","b":[[1]]}', 3],
    ['a unicode escape inside a string', '{"a":"\\u005b[[","b":[1]}', 2],
    ['a closing bracket with nothing open', ']]]{"a":1}', 1],
    ['text around the JSON', 'here you go: {"a": {"b": 1}} (done)', 2],
  ])('%s', (_, text, depth) => {
    expect(jsonTextDepth(text)).toBe(depth);
  });

  it('10,000 levels are counted without recursion', () => {
    expect(jsonTextDepth(nestedText(10_000))).toBe(10_000);
  });

  it('stops as soon as it passes the limit, answering limit + 1', () => {
    expect(jsonTextDepth(nestedText(10_000), 64)).toBe(65);
    expect(jsonTextDepth(nestedText(64), 64)).toBe(64);
  });

  it('agrees with the parsed value for any JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(jsonTextDepth(text)).toBe(recursiveDepth(JSON.parse(text)));
      }),
    );
  });
});

describe('the depth of a value, walked without recursion', () => {
  it.each<[string, unknown, number]>([
    ['null', null, 0],
    ['a string with brackets', '[[[', 0],
    ['an empty array', [], 1],
    ['an object holding an array', { a: [1, { b: null }] }, 3],
  ])('%s', (_, value, depth) => {
    expect(jsonValueDepth(value)).toBe(depth);
  });

  it('10,000 levels are counted without recursion, and the limit stops the walk', () => {
    expect(jsonValueDepth(nestedValue(10_000))).toBe(10_000);
    expect(jsonValueDepth(nestedValue(10_000), 64)).toBe(65);
    expect(jsonValueDepth(nestedValue(64), 64)).toBe(64);
  });

  it('agrees with the recursive definition for any JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(jsonValueDepth(v)).toBe(recursiveDepth(v));
      }),
    );
  });
});
