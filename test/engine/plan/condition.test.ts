import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateCondition, parseCondition } from '../../../src/engine/plan/condition.ts';
import { MAX_OUTPUT_DEPTH } from '../../../src/engine/plan/json-depth.ts';
import type { Json } from '../../../src/engine/types.ts';

const outputs = new Map<string, Json>([
  [
    's1',
    {
      structuredContent: { count: 12, name: 'report.txt', tags: ['a', 'b'] },
      content: [{ type: 'text', text: 'The sum of 2 and 3 is 5.' }],
    },
  ],
]);

function run(expr: string): boolean | string {
  const parsed = parseCondition(expr);
  if (!parsed.ok) return `parse: ${parsed.error}`;
  const r = evaluateCondition(parsed.value, outputs);
  return r.ok ? r.value : `eval: ${r.error}`;
}

describe('condition parser', () => {
  it.each([
    ['steps.s1.output.structuredContent.count > 10', true],
    ['steps.s1.output.structuredContent.count >= 12', true],
    ['steps.s1.output.structuredContent.count < 12', false],
    ['steps.s1.output.structuredContent.count <= 11', false],
    ['steps.s1.output.structuredContent.count == 12', true],
    ['steps.s1.output.structuredContent.count != 12', false],
    ['steps.s1.output.structuredContent.name == "report.txt"', true],
    ["steps.s1.output.content[0].text contains 'is 5'", true],
    ['steps.s1.output.structuredContent.tags contains "b"', true],
    ['steps.s1.output.structuredContent.tags contains "z"', false],
    ['steps.s1.output.structuredContent.count>3', true],
  ])('%s → %s', (expr, expected) => {
    expect(run(expr)).toBe(expected);
  });

  it('rejects anything outside the fixed operator set', () => {
    expect(run('steps.s1.output.x === 1')).toMatch(/unknown operator/);
    expect(run('process.exit(1)')).toMatch(/parse/);
    expect(run('steps.s1.output.x == 1 && true')).toMatch(/more/);
    expect(run('"a" + "b"')).toMatch(/parse/);
  });

  it('reports a missing value instead of guessing', () => {
    expect(run('steps.s1.output.nothing == 1')).toMatch(/eval: .*no key "nothing"/);
  });

  it('treats hostile input as data: never throws, never reads prototypes', () => {
    expect(run('steps.s1.output.__proto__ == null')).toMatch(/eval/);
    expect(run(`"${'\\'.repeat(5000)}`)).toMatch(/parse/);
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: 'grapheme' }), (s) => {
        const parsed = parseCondition(s);
        if (parsed.ok) evaluateCondition(parsed.value, outputs);
      }),
    );
  });

  it('a tool output nested 10,000 deep fails the condition with the reason, never a stack overflow', () => {
    let deep: Json = 'x';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const parsed = parseCondition('steps.d.output == steps.d.output');
    expect(parsed.ok && evaluateCondition(parsed.value, new Map([['d', deep]]))).toEqual({
      ok: false,
      error: `steps.d.output: nested more than ${MAX_OUTPUT_DEPTH} levels deep`,
    });
  });

  it('rejects huge input up front', () => {
    expect(run(`steps.s1.output.x == "${'a'.repeat(10_000)}"`)).toMatch(/longer than/);
  });
});
