import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectRefs, parseReference, resolveRefs } from '../../../src/engine/plan/refs.ts';
import type { Json } from '../../../src/engine/types.ts';

describe('references', () => {
  const outputs = new Map<string, Json>([
    ['s1', { content: [{ type: 'text', text: 'hello' }], structuredContent: { 'odd key': 7, list: [1, 2] } }],
  ]);

  it('parses keys, indexes and quoted keys', () => {
    expect(parseReference('steps.s1.output.content[0].text')).toEqual({
      ok: true,
      value: { stepId: 's1', path: ['content', 0, 'text'] },
    });
    expect(parseReference('steps.s1.output.structuredContent["odd key"]')).toEqual({
      ok: true,
      value: { stepId: 's1', path: ['structuredContent', 'odd key'] },
    });
  });

  it('rejects malformed references with the position', () => {
    const r = parseReference('steps.s1.output..x');
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error).toContain('position');
    expect(parseReference('step.s1.output').ok).toBe(false);
    expect(parseReference('steps.s1.output[abc]').ok).toBe(false);
  });

  it('replaces whole values exactly, including nested ones', () => {
    const args: Json = {
      a: { $ref: 'steps.s1.output.content[0].text' },
      b: [{ $ref: 'steps.s1.output.structuredContent.list[1]' }],
      c: 'plain',
    };
    expect(resolveRefs(args, outputs)).toEqual({ ok: true, value: { a: 'hello', b: [2], c: 'plain' } });
  });

  it('fails clearly when the path is not in the output', () => {
    const r = resolveRefs({ a: { $ref: 'steps.s1.output.content[5].text' } }, outputs);
    expect(r).toEqual({ ok: false, error: 'steps.s1.output.content[5].text: no index 5' });
  });

  it('never reads inherited properties such as __proto__ or constructor', () => {
    expect(resolveRefs({ $ref: 'steps.s1.output.__proto__' }, outputs).ok).toBe(false);
    expect(resolveRefs({ $ref: 'steps.s1.output.constructor' }, outputs).ok).toBe(false);
  });

  it('lists every reference with its location', () => {
    expect(collectRefs({ x: [{ $ref: 'steps.a.output' }], y: { $ref: 'steps.b.output.k' } })).toEqual([
      { at: '/x/0', text: 'steps.a.output' },
      { at: '/y', text: 'steps.b.output.k' },
    ]);
  });

  it('never throws on arbitrary text and stays fast on long input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (s) => {
        parseReference(`steps.s1.output${s}`);
        parseReference(s);
      }),
    );
    const long = `steps.s1.output${'.a'.repeat(400)}`;
    expect(parseReference(long).ok).toBe(true);
    expect(parseReference(`steps.s1.output${'['.repeat(100_000)}`).ok).toBe(false);
  });
});

describe('reference resolver on hostile input', () => {
  it('never throws, whatever the outputs and references hold', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.array(
          fc.oneof(
            fc.string({ maxLength: 12 }),
            fc.constantFrom('__proto__', 'constructor', 'prototype', '[0]', '["a b"]'),
          ),
          { maxLength: 6 },
        ),
        (output, segments) => {
          const ref = `steps.s1.output${segments.map((s) => (s.startsWith('[') ? s : `.${s}`)).join('')}`;
          const r = resolveRefs({ v: { $ref: ref } }, new Map([['s1', output as Json]]));
          expect(typeof r.ok).toBe('boolean');
        },
      ),
    );
  });

  it('a resolved object never gains a prototype from a hostile key', () => {
    const out = JSON.parse('{"__proto__": {"polluted": true}}') as Json;
    const r = resolveRefs({ a: { $ref: 'steps.s1.output' } }, new Map([['s1', out]]));
    expect(r.ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
