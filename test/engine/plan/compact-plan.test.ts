import { describe, expect, it } from 'vitest';
import { expandCompactPlan, expandCompactStep } from '../../../src/engine/plan/compact-plan.ts';
import { expandValueRefs } from '../../../src/engine/plan/compact-refs.ts';
import { MAX_PLAN_DEPTH, TOO_DEEP } from '../../../src/engine/plan/json-depth.ts';
import { planSchema, type Plan } from '../../../src/engine/plan/plan-schema.ts';
import { checkAnswer } from '../../../src/engine/plan/planner-prompt.ts';
import type { Json } from '../../../src/engine/types.ts';
import { createTool } from '../fixtures.ts';

const tools = [createTool('fs.read'), createTool('fs.write'), createTool('web.fetch')];

function expand(raw: unknown): Plan {
  const r = expandCompactPlan(raw as Json);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

function refusal(raw: unknown): string {
  const r = expandCompactPlan(raw as Json);
  return r.ok ? '(accepted)' : r.error;
}

describe('expanding a compact plan', () => {
  it("leaves a workflow's built-in values as they are: fire.date is no step named fire, and nothing waits on it", () => {
    const plan = expand({
      steps: [{ tool: 'news.search', args: { since: { $ref: 'fire.previousDate' }, until: { $ref: 'fire.date' } } }],
    });
    expect(plan.steps[0]).toMatchObject({
      args: { since: { $ref: 'fire.previousDate' }, until: { $ref: 'fire.date' } },
      dependsOn: [],
    });
  });

  it('fills in ids, kinds and defaults, and derives the summary when there is none', () => {
    const plan = expand({ steps: [{ tool: 'fs.read', args: { text: 'a' } }, { tool: 'fs.read' }] });
    expect(plan).toEqual({
      summary: 'Run fs.read ×2',
      rationale: '',
      needsTools: true,
      answer: null,
      risks: [],
      steps: [
        {
          id: 's1',
          kind: 'tool',
          tool: 'fs.read',
          args: { text: 'a' },
          dependsOn: [],
          description: '',
          optional: false,
        },
        { id: 's2', kind: 'tool', tool: 'fs.read', args: {}, dependsOn: [], description: '', optional: false },
      ],
    });
  });

  it('keeps summary, risks, why, note and optional as written', () => {
    const plan = expand({
      steps: [{ id: 'w', tool: 'fs.write', note: 'save it', optional: true }],
      summary: 'Save',
      risks: ['overwrites'],
      why: 'asked to save',
    });
    expect(plan).toMatchObject({ summary: 'Save', risks: ['overwrites'], rationale: 'asked to save' });
    expect(plan.steps[0]).toMatchObject({ id: 'w', description: 'save it', optional: true });
  });

  it('an optional root field written as null is the field left out, not a plan to repair ("why": null)', () => {
    const plan = expand({ steps: [{ tool: 'fs.read' }], summary: null, risks: null, why: null, answer: null });
    expect(plan).toMatchObject({ summary: 'Run fs.read', risks: [], rationale: '', needsTools: true });
  });

  it('a blank summary is derived too, never left empty', () => {
    const plan = expand({ steps: [{ tool: 'fs.read' }, { llm: 'sum up' }, { llm: 'again' }], summary: '  ' });
    expect(plan.summary).toBe('Run fs.read and 2 model steps');
    const many = ['a.one', 'b.two', 'c.three', 'd.four', 'e.five'].map((tool) => ({ tool }));
    expect(expand({ steps: many }).summary).toBe('Run a.one, b.two, c.three and 2 more kinds of step');
  });

  it('a reference implies a dependency, after the ones listed in "after"', () => {
    const plan = expand({
      steps: [
        { id: 'a', tool: 'fs.read' },
        { id: 'z', tool: 'fs.read' },
        {
          id: 'b',
          tool: 'fs.write',
          args: { text: { $ref: 'a.content[0].text' }, again: { $ref: 'a' } },
          after: ['z'],
        },
        { llm: { file: { $ref: 'b.structuredContent' } } },
      ],
    });
    expect(plan.steps.map((s) => [s.id, s.dependsOn])).toEqual([
      ['a', []],
      ['z', []],
      ['b', ['z', 'a']],
      ['s4', ['b']],
    ]);
  });

  it('writes short references long, and leaves long ones as they are', () => {
    const plan = expand({
      steps: [
        { tool: 'fs.read' },
        { tool: 'fs.read', args: { t: { $ref: 's1.content[0]["odd key"]' }, u: { $ref: 'steps.s1.output.x' } } },
        { llm: ['compare', { $ref: 's2' }] },
      ],
    });
    expect(plan.steps[1]).toMatchObject({
      args: { t: { $ref: 'steps.s1.output.content[0]["odd key"]' }, u: { $ref: 'steps.s1.output.x' } },
      dependsOn: ['s1'],
    });
    expect(plan.steps[2]).toMatchObject({ kind: 'llm', args: { prompt: ['compare', { $ref: 'steps.s2.output' }] } });
    expect(
      checkAnswer(
        JSON.stringify({
          steps: [{ tool: 'fs.read' }, { tool: 'fs.read', args: { text: { $ref: 's1.content[0].text' } } }],
        }),
        tools,
      ).ok,
    ).toBe(true);
  });

  it('conditions take short references, keep their spacing and imply their dependencies', () => {
    const plan = expand({
      steps: [
        { id: 'a', tool: 'fs.read' },
        { id: 'c', if: 'a.structuredContent.n>=3', then: ['b'], else: ['d'] },
        { id: 'b', tool: 'fs.write', after: ['c'] },
        { id: 'd', if: '"a.x" == steps.a.output.y', after: ['c'] },
        { id: 'e', if: 'true != a', after: ['d'] },
      ],
    });
    expect(plan.steps[1]).toMatchObject({
      kind: 'condition',
      expression: 'steps.a.output.structuredContent.n>=3',
      ifTrue: ['b'],
      ifFalse: ['d'],
      dependsOn: ['a'],
    });
    // A quoted string is a literal, even when it looks like a reference; a long reference stays long.
    expect(plan.steps[3]).toMatchObject({ expression: '"a.x" == steps.a.output.y', dependsOn: ['c', 'a'] });
    expect(plan.steps[4]).toMatchObject({ expression: 'true != steps.a.output', dependsOn: ['d', 'a'] });
    expect(validatePlanOk(plan)).toBe(true);
  });

  it('a step named in "then" without the condition in "after" is refused by validation, naming both', () => {
    const answer = {
      steps: [
        { id: 'c', if: 'true == true', then: ['b'] },
        { id: 'b', tool: 'fs.read' },
      ],
    };
    expect(checkAnswer(JSON.stringify(answer), tools)).toEqual({
      ok: false,
      error: 'step c: branch b must be a step that depends on c',
    });
  });

  it('an answer alone is a plan that needs no tools', () => {
    expect(expand({ answer: 'Paris.' })).toEqual({
      summary: 'Answer without tools',
      rationale: '',
      needsTools: false,
      answer: 'Paris.',
      risks: [],
      steps: [],
    });
    expect(checkAnswer('{"answer":"Paris."}', tools)).toMatchObject({ ok: true, value: { risk: 'low', layers: [] } });
  });
});

describe('a fan-out: one tool called once per arguments object', () => {
  it('stands for one step per object, with the default ids of their places; the steps after it count on', () => {
    const plan = expand({
      steps: [
        { tool: 'fs.read', each: [{ path: '/a' }, { path: '/b' }, { path: '/c' }], note: 'read', optional: true },
        { tool: 'web.fetch', each: [{ url: { $ref: 's2.content' } }, { url: 'x' }], after: ['s1'] },
        { llm: { $ref: 's4.content' } },
      ],
    });
    expect(plan.steps.map((s) => [s.id, s.dependsOn, s.description, s.optional])).toEqual([
      ['s1', [], 'read', true],
      ['s2', [], 'read', true],
      ['s3', [], 'read', true],
      ['s4', ['s1', 's2'], '', false],
      ['s5', ['s1'], '', false],
      ['s6', ['s4'], '', false],
    ]);
    expect(plan.steps.slice(0, 3).map((s) => s.kind === 'tool' && s.args)).toEqual([
      { path: '/a' },
      { path: '/b' },
      { path: '/c' },
    ]);
    expect(plan.summary).toBe('Run fs.read ×3, web.fetch ×2 and a model step');
  });

  it('refuses what a fan-out cannot be, once and by its place', () => {
    const each = [{ path: '/a' }, { path: '/b' }];
    expect(refusal({ steps: [{ id: 'r', tool: 'fs.read', each }] })).toBe(
      'steps[0]: a step with "each" has no "id": its calls take the default ids of their places, here s1 to s2',
    );
    expect(refusal({ steps: [{ tool: 'fs.read', args: {}, each }] })).toBe(
      'steps[0]: write "args" (one call) or "each" (one call per arguments object), not both',
    );
    expect(refusal({ steps: [{ tool: 'fs.read', each: [] }] })).toBe(
      'steps[0].each: a list of argument objects, one per call',
    );
    expect(refusal({ steps: [{ llm: 'x', each }] })).toBe(
      'steps[0]: "each" goes with "tool": the tool is called once per arguments object in the list',
    );
    expect(refusal({ steps: [{ tool: 'fs.read', each, dependsOn: ['x'] }] })).toBe(
      'steps[0]: unknown key "dependsOn" (write "after"); a step with "each" may have "tool", "each", "id", "after", "note", "optional"',
    );
    expect(refusal({ steps: [{ tool: 'fs.read' }, { tool: 'fs.read', each: [{ path: '/a' }, 'b', [1]] }] })).toBe(
      "steps[1].each[1]: an object of the tool's arguments, not a string\n" +
        "steps[1].each[2]: an object of the tool's arguments, not a list",
    );
    // The fan-out's places count toward the limit of 100 steps, and toward the default ids after it.
    expect(
      refusal({ steps: [{ tool: 'fs.read' }, { tool: 'fs.read', each: Array.from({ length: 100 }, () => ({})) }] }),
    ).toBe('steps[1].each: a plan has at most 100 steps in all; write a smaller plan');
    expect(
      refusal({
        steps: [
          { tool: 'fs.read', each },
          { id: 's2', tool: 'fs.read' },
        ],
      }),
    ).toBe('steps[1]: the id "s2" is already used by steps[0]');
    // A null written for "args" beside "each" (or for "each" beside "args") is the key left out.
    expect(expand({ steps: [{ tool: 'fs.read', args: null, each }] }).steps).toHaveLength(2);
    expect(expand({ steps: [{ tool: 'fs.read', args: { path: '/a' }, each: null }] }).steps).toHaveLength(1);
  });
});

describe('the full form is still read as it always was', () => {
  const full = {
    summary: 'Read it',
    rationale: 'asked',
    needsTools: true,
    answer: null,
    risks: ['none'],
    steps: [
      { id: 'a', kind: 'tool', tool: 'fs.read', args: {}, dependsOn: [], description: 'read', optional: false },
      // A reference does not add a dependency in the full form: b reads a through c.
      { id: 'c', tool: 'fs.read', dependsOn: ['a'] },
      { id: 'b', kind: 'llm', args: { prompt: { $ref: 'steps.a.output' } }, dependsOn: ['c'] },
    ],
  };

  it('a plan with "needsTools" parses exactly as the plan schema parses it', () => {
    expect(expand(full)).toEqual(planSchema.parse(full));
    expect(checkAnswer(JSON.stringify(full), tools).ok).toBe(true);
    expect(checkAnswer(JSON.stringify({ summary: 'Hi', needsTools: false, answer: 'Hello' }), tools)).toMatchObject({
      ok: true,
      value: { plan: { needsTools: false, answer: 'Hello' } },
    });
  });

  it('a step with "kind" inside a compact plan is taken as it is, with nothing implied', () => {
    const plan = expand({
      steps: [{ id: 'a', tool: 'fs.read' }, { id: 'c', tool: 'fs.read', after: ['a'] }, full.steps[2]],
    });
    expect(plan.steps[2]).toEqual(planSchema.parse(full).steps[2]);
  });

  it('a compact key in the full form is refused, not dropped: the step would otherwise run too early', () => {
    const mixed = { ...full, steps: [full.steps[0], { id: 'w', tool: 'fs.write', after: ['a'] }] };
    expect(refusal(mixed)).toBe(
      'steps[1]: "after" is a key of the compact form, not of the full one (a plan with "needsTools", a step with "kind"); there, write "dependsOn"',
    );
    expect(refusal({ steps: [{ id: 'a', kind: 'llm', llm: 'x' }] })).toBe(
      'steps[0]: "llm" is a key of the compact form, not of the full one (a plan with "needsTools", a step with "kind")',
    );
  });

  it('full-form errors still name the path as before', () => {
    expect(refusal({ needsTools: true, steps: [] })).toBe(
      'summary: Invalid input: expected string, received undefined',
    );
  });
});

describe('hostile and broken compact answers are refused, naming the step', () => {
  it('steps that are not objects', () => {
    expect(refusal({ steps: ['fs.read', null, [1]] })).toBe(
      [
        'steps[0]: a step is a JSON object, not a string',
        'steps[1]: a step is a JSON object, not null',
        'steps[2]: a step is a JSON object, not a list',
      ].join('\n'),
    );
    expect(refusal({ steps: 'fs.read' })).toBe('steps: a list of steps');
    expect(refusal([1, 2])).toBe('the answer is not a JSON object');
  });

  it('a step with no kind key, or two', () => {
    expect(refusal({ steps: [{ call: 'fs.read' }] })).toBe(
      'steps[0]: a step needs "tool", "llm" or "if"; unknown key "call"',
    );
    expect(refusal({ steps: [{ tool: 'fs.read', llm: 'x' }] })).toBe(
      'steps[0]: a step has one of "tool", "llm" or "if", not "tool" and "llm"',
    );
  });

  it("unknown keys, with the compact name of the full form's keys", () => {
    expect(refusal({ steps: [{ tool: 'fs.read', dependsOn: ['x'], arg: {} }] })).toBe(
      'steps[0]: unknown keys "dependsOn" (write "after"), "arg"; a step with "tool" may have "tool", "args", "each", "id", "after", "note", "optional"',
    );
    expect(refusal({ steps: [{ tool: 'fs.read' }], rationale: 'x' })).toBe(
      '(root): unknown key "rationale" (write "why"); a plan has "steps", "summary", "risks", "why", "answer"',
    );
  });

  it('wrong types, named by the key the model wrote', () => {
    expect(refusal({ steps: [{ tool: 'fs.read' }, { tool: 'fs.read', after: 's1' }] })).toBe(
      'steps[1].after: a list of step ids',
    );
    expect(refusal({ steps: [{ tool: 'fs.read', args: [] }] })).toBe(
      "steps[0].args: an object of the tool's arguments, not a list",
    );
    expect(refusal({ steps: [{ tool: 'fs.read', note: 'x'.repeat(501), id: '9' }] })).toBe(
      [
        'steps[0].id: step ids start with a letter and use letters, digits, _ or -',
        'steps[0].note: Too big: expected string to have <=500 characters',
      ].join('\n'),
    );
    expect(refusal({ steps: [{ tool: 'fs.read' }], summary: 3 })).toBe(
      'summary: Invalid input: expected string, received number',
    );
  });

  it('bad references and conditions', () => {
    expect(refusal({ steps: [{ tool: 'fs.read', args: { a: { b: { $ref: 'x..y' } } } }] })).toBe(
      'steps[0].args/a/b: "x..y" is not a reference: write a step id, then .key, [index] or ["key"] (e.g. "a.content[0].text")',
    );
    expect(refusal({ steps: [{ llm: { $ref: '1x' } }] })).toMatch(/^steps\[0\]\.llm\/: "1x" is not a reference/);
    expect(refusal({ steps: [{ if: 'a.x ~ 3' }] })).toBe(
      'steps[0].if: unknown operator "~"; use one of == != >= <= > < contains',
    );
    expect(refusal({ steps: [{ if: 3 }] })).toBe('steps[0].if: a condition, e.g. "a.structuredContent.count > 0"');
  });

  it('an id clashing with a default id, and a repeated id', () => {
    expect(refusal({ steps: [{ id: 's2', tool: 'fs.read' }, { tool: 'fs.read' }] })).toBe(
      'steps[1]: its default id "s2" is already used by steps[0]; give it an id',
    );
    expect(
      refusal({
        steps: [
          { id: 'a', tool: 'fs.read' },
          { id: 'a', tool: 'fs.read' },
        ],
      }),
    ).toBe('steps[1]: the id "a" is already used by steps[0]');
  });

  it('101 steps, steps with an answer, and neither', () => {
    const steps = Array.from({ length: 101 }, () => ({ tool: 'fs.read' }));
    expect(refusal({ steps })).toBe('steps: a plan has at most 100 steps, not 101; write a smaller plan');
    expect(expandCompactPlan({ steps: steps.slice(1) }).ok).toBe(true);
    expect(refusal({ steps: [{ tool: 'fs.read' }], answer: 'hi' })).toBe('write "steps" or "answer", not both');
    expect(refusal({ steps: [] })).toBe('write "steps" (the work to do) or, if no tools are needed, "answer"');
    expect(refusal({ summary: 'nothing' })).toBe('write "steps" (the work to do) or, if no tools are needed, "answer"');
  });

  it('deep nesting is refused by the depth rule, before anything recursive walks it', () => {
    let deep: Json = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(refusal({ steps: [{ tool: 'fs.read', args: { deep } }] })).toBe(TOO_DEEP);
    expect(expandCompactStep({ tool: 'fs.read', args: { deep } }, 4)).toEqual({
      ok: false,
      error: `steps[4]: ${TOO_DEEP}`,
    });
    const text = `{"steps":[{"tool":"fs.read","args":{"d":${'['.repeat(10_000)}${']'.repeat(10_000)}}}]}`;
    expect(checkAnswer(text, tools)).toEqual({ ok: false, error: TOO_DEEP });
  });

  it('an llm prompt at the depth limit is refused: it sits one level deeper in the full form', () => {
    // plan(1) → steps(2) → step(3) → prompt value from level 4 in the compact form, level 5 once expanded.
    const nest = (levels: number): Json => (levels === 0 ? 'x' : [nest(levels - 1)]);
    const at = (levels: number) => ({ steps: [{ llm: nest(levels) }] });
    expect(expandCompactPlan(at(MAX_PLAN_DEPTH - 4)).ok).toBe(true);
    expect(refusal(at(MAX_PLAN_DEPTH - 3))).toBe(`steps[0]: ${TOO_DEEP}`);
  });

  it('"__proto__" in arguments stays a plain key when references are rewritten, and is refused on a step', () => {
    const args = JSON.parse('{"__proto__":{"polluted":true},"t":{"$ref":"s1.x"}}') as Json;
    const expanded = expandValueRefs(args);
    const value = expanded.ok ? (expanded.value.value as Record<string, Json>) : {};
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__', 't']);
    expect(value['t']).toEqual({ $ref: 'steps.s1.output.x' });
    expect(refusal(JSON.parse('{"steps":[{"tool":"fs.read","__proto__":{}}]}'))).toMatch(/unknown key "__proto__"/);
  });
});

function validatePlanOk(plan: Plan): boolean {
  return checkAnswer(JSON.stringify(plan), tools).ok;
}
