import { describe, expect, it, vi } from 'vitest';
import { readAnswerObject, resolveToolName, withoutTrailingCommas } from '../../../src/engine/plan/forgiving-answer.ts';
import { MAX_PLAN_DEPTH, TOO_DEEP } from '../../../src/engine/plan/json-depth.ts';
import { checkAnswer } from '../../../src/engine/plan/planner-prompt.ts';
import { OPTIONAL_KEYS, type Plan } from '../../../src/engine/plan/plan-schema.ts';
import type { Json } from '../../../src/engine/types.ts';
import { createTool } from '../fixtures.ts';

const tools = [createTool('fs.read'), createTool('fs.list'), createTool('notes.list'), createTool('everything.echo')];

/** A full plan with a step of each kind, every optional key written out. */
function fullPlan(): Record<string, Json> {
  const common = { dependsOn: [], description: 'd', optional: false };
  return {
    summary: 'All kinds',
    rationale: 'r',
    needsTools: true,
    answer: null,
    risks: ['none'],
    steps: [
      { id: 'a', kind: 'tool', tool: 'fs.read', args: { text: 'x' }, ...common },
      { id: 'b', kind: 'llm', args: { prompt: 'p' }, ...common, dependsOn: ['a'] },
      {
        id: 'c',
        kind: 'condition',
        expression: 'steps.a.output.content contains 1',
        ifTrue: ['d'],
        ifFalse: [],
        ...common,
        dependsOn: ['a'],
      },
      { id: 'd', kind: 'tool', tool: 'fs.list', args: {}, ...common, dependsOn: ['c'] },
    ],
  };
}

function read(answer: Json): Plan | string {
  const r = checkAnswer(JSON.stringify(answer), tools);
  return r.ok ? r.value.plan : r.error;
}

const without = (o: Record<string, Json>, key: string) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));

describe('null for a key that may be left out', () => {
  it('knows the optional keys of the plan and of each kind of step from the schema', () => {
    expect(OPTIONAL_KEYS).toEqual({
      plan: ['rationale', 'answer', 'risks', 'steps'],
      tool: ['dependsOn', 'description', 'optional', 'args'],
      llm: ['dependsOn', 'description', 'optional'],
      condition: ['dependsOn', 'description', 'optional', 'ifTrue', 'ifFalse'],
    });
  });

  it.each(OPTIONAL_KEYS.plan.filter((k) => k !== 'steps'))('reads the plan\'s "%s": null as left out', (key) => {
    expect(read({ ...fullPlan(), [key]: null })).toEqual(read(without(fullPlan(), key)));
  });

  it('reads the plan\'s "steps": null as left out (a plan of no steps, refused as such, not for the null)', () => {
    const plan = { ...fullPlan(), steps: null };
    expect(read(plan)).toBe('the plan needs tools but has no steps');
  });

  const stepKeys = (['tool', 'llm', 'condition'] as const).flatMap((kind) =>
    OPTIONAL_KEYS[kind].map((key) => [kind, key] as const),
  );
  it.each(stepKeys)('reads a %s step\'s "%s": null as left out', (kind, key) => {
    const plan = fullPlan();
    const steps = plan['steps'] as Record<string, Json>[];
    const at = steps.findIndex((s) => s['kind'] === kind);
    const withNull = { ...plan, steps: steps.map((s, i) => (i === at ? { ...s, [key]: null } : s)) };
    const leftOut = { ...plan, steps: steps.map((s, i) => (i === at ? without(s, key) : s)) };
    // The same reading, plan or refusal: leaving out a condition's dependsOn breaks the plan as a whole, and so must
    // its null, for that reason and not for the null.
    expect(read(withNull)).toEqual(read(leftOut));
  });

  it("reads the compact form's optional keys written as null as left out, as before", () => {
    const plan = read({
      steps: [
        { id: null, tool: 'fs.read', args: null, after: null, note: null, optional: null },
        { if: 's1.content contains 1', then: ['c'], else: null },
        { id: 'c', tool: 'fs.list', after: ['s2'] },
      ],
      summary: null,
      risks: null,
      why: null,
      answer: null,
    });
    expect(typeof plan === 'object' && plan.steps.map((s) => s.id)).toEqual(['s1', 's2', 'c']);
  });

  it("keeps a null that is an argument's value, and refuses a null for a required key naming the step", () => {
    const plan = read({ steps: [{ tool: 'fs.read', args: { text: 'x', cursor: null } }] });
    expect(typeof plan === 'object' && plan.steps[0]).toMatchObject({ args: { text: 'x', cursor: null } });
    expect(read({ ...fullPlan(), steps: [{ id: 'z', kind: 'llm', args: null }] })).toContain('steps[0].args');
  });
});

describe('trailing commas, fences and prose', () => {
  it('drops a comma before } or ] outside strings only', () => {
    expect(withoutTrailingCommas('{"a":[1,2,],"b":"x,}",\n}')).toBe('{"a":[1,2],"b":"x,}"\n}');
    expect(withoutTrailingCommas('{"a":"\\",]",}')).toBe('{"a":"\\",]"}');
    expect(withoutTrailingCommas('[1,,]')).toBe('[1,]');
  });

  it('takes the first {...} that is JSON, skipping braces in the prose before it', () => {
    expect(readAnswerObject('Use {x} and {"y": 1} then {"z": 2}')).toEqual({ ok: true, value: { y: 1 } });
    expect(readAnswerObject('```json\n{"a": [1,],}\n```\nDone {')).toEqual({ ok: true, value: { a: [1] } });
  });

  it('refuses what is not certain: no object, a { that never closes, an object that is not JSON', () => {
    const notJson = { ok: false, error: 'the answer is not a JSON object' };
    expect(readAnswerObject('I cannot help with that.')).toEqual(notJson);
    expect(readAnswerObject('Use the { key: {"steps": []}')).toEqual(notJson);
    expect(readAnswerObject('{"steps": [{"tool": "a" "args": {}}]}')).toEqual(notJson);
  });

  it('refuses nesting deeper than the plan limit before parsing it', () => {
    const deep = `${'['.repeat(MAX_PLAN_DEPTH)}${']'.repeat(MAX_PLAN_DEPTH)}`;
    expect(readAnswerObject(`{"a":${deep}}`)).toEqual({ ok: false, error: TOO_DEEP });
  });

  it('gives up after a few {...} that are not JSON: an answer of many braces is not parsed once per brace', () => {
    const parse = vi.spyOn(JSON, 'parse');
    const text = `${'{x} '.repeat(50_000)}{"steps":[]}`;
    expect(readAnswerObject(text)).toEqual({ ok: false, error: 'the answer is not a JSON object' });
    // Each try parses its {...} once, and once more without trailing commas.
    expect(parse.mock.calls.length).toBeLessThanOrEqual(16);
    parse.mockRestore();
  });
});

describe('a tool named without its server', () => {
  it('resolves a name one server has, keeps an exact name, and leaves a name two servers have', () => {
    expect(resolveToolName('echo', tools)).toBe('everything.echo');
    expect(resolveToolName('fs.read', tools)).toBe('fs.read');
    expect(resolveToolName('list', tools)).toBe('list');
    expect(resolveToolName('nothing', tools)).toBe('nothing');
  });

  it('refuses a name two servers have naming the step and both tools', () => {
    expect(read({ steps: [{ tool: 'read' }, { id: 'x', tool: 'list' }] })).toBe(
      'step x: unknown tool "list" (did you mean fs.list or notes.list?)',
    );
  });
});
