import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PLAN_DEPTH, TOO_DEEP } from '../../../src/engine/plan/json-depth.ts';
import type { Plan } from '../../../src/engine/plan/plan-schema.ts';
import { computeLayers, validatePlan } from '../../../src/engine/plan/validate-plan.ts';
import type { Json } from '../../../src/engine/types.ts';
import { createPlan, createTool } from '../fixtures.ts';

const tools = [
  createTool('fs.read', {
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  }),
  createTool('fs.write', { annotations: { readOnlyHint: false, destructiveHint: true } }),
  createTool('fs.move', { annotations: { readOnlyHint: false, destructiveHint: false } }),
  createTool('fs.secret', { policy: { allowed: false, timeoutMs: 1000 } }),
  createTool('web.fetch', { annotations: {} }),
];

function errors(steps: unknown[]): string[] {
  const r = validatePlan(createPlan(steps), tools);
  return r.ok ? [] : r.error;
}

describe('plan validation', () => {
  it('accepts a valid DAG and computes its layers and risk', () => {
    const r = validatePlan(
      createPlan([
        { id: 'a', tool: 'fs.read', args: { path: '/x' } },
        { id: 'b', tool: 'fs.read', args: { path: '/y' } },
        { id: 'c', tool: 'fs.move', args: { text: { $ref: 'steps.a.output.content[0].text' } }, dependsOn: ['a', 'b'] },
      ]),
      tools,
    );
    expect(r.ok && r.value.layers).toEqual([['a', 'b'], ['c']]);
    expect(r.ok && r.value.risk).toBe('medium');
  });

  it('rejects an unknown tool, suggesting the qualified name', () => {
    expect(errors([{ id: 'a', tool: 'read', args: {} }])).toEqual([
      'step a: unknown tool "read" (did you mean fs.read?)',
    ]);
    expect(errors([{ id: 'a', tool: 'fs.nothing', args: {} }])).toEqual(['step a: unknown tool "fs.nothing"']);
    expect(errors([{ id: 'a', tool: 'other.read', args: { path: 'x' } }])).toEqual([
      'step a: unknown tool "other.read" (did you mean fs.read?)',
    ]);
  });

  it('rejects a tool the configuration disallows', () => {
    expect(errors([{ id: 'a', tool: 'fs.secret' }])).toEqual([
      'step a: tool "fs.secret" is not allowed by configuration',
    ]);
  });

  it('rejects a dependency on a missing step and on itself', () => {
    expect(errors([{ id: 'a', tool: 'fs.read', args: { path: 'x' }, dependsOn: ['zz'] }])).toContain(
      'step a: depends on zz, which is not in the plan',
    );
    expect(errors([{ id: 'a', tool: 'fs.read', args: { path: 'x' }, dependsOn: ['a'] }])).toContain(
      'step a: depends on itself',
    );
  });

  it('rejects a cycle, naming its steps', () => {
    expect(
      errors([
        { id: 'a', tool: 'fs.read', args: { path: 'x' }, dependsOn: ['b'] },
        { id: 'b', tool: 'fs.read', args: { path: 'x' }, dependsOn: ['a'] },
      ]),
    ).toEqual(['the steps a, b form a dependency cycle']);
  });

  it('rejects a reference to a step that is not upstream', () => {
    expect(
      errors([
        { id: 'a', tool: 'fs.read', args: { path: 'x' } },
        { id: 'b', tool: 'fs.read', args: { path: { $ref: 'steps.a.output.content[0].text' } } },
      ]),
    ).toEqual(['step b: refers to step a, which is not upstream (add it to dependsOn)']);
  });

  it('accepts a reference to a transitive dependency', () => {
    expect(
      errors([
        { id: 'a', tool: 'fs.read', args: { path: 'x' } },
        { id: 'b', tool: 'fs.read', args: { path: 'y' }, dependsOn: ['a'] },
        { id: 'c', tool: 'fs.read', args: { path: { $ref: 'steps.a.output.content[0].text' } }, dependsOn: ['b'] },
      ]),
    ).toEqual([]);
  });

  it('rejects arguments that do not satisfy the input schema', () => {
    expect(errors([{ id: 'a', tool: 'fs.read', args: { path: 3 } }])).toEqual(['step a: argument path must be string']);
    expect(errors([{ id: 'a', tool: 'fs.read', args: {} }])).toEqual([
      "step a: arguments must have required property 'path'",
    ]);
  });

  it('rejects duplicate ids, bad conditions and branches that do not depend on the condition', () => {
    expect(
      errors([
        { id: 'a', tool: 'fs.read', args: { path: 'x' } },
        { id: 'a', tool: 'fs.read', args: { path: 'y' } },
      ]),
    ).toContain('step a: the id is used twice');
    expect(
      errors([
        { id: 'a', tool: 'fs.read', args: { path: 'x' } },
        { id: 'c', kind: 'condition', expression: 'steps.a.output.x ~ 1', dependsOn: ['a'] },
      ])[0],
    ).toMatch(/step c: condition: unknown operator/);
    expect(
      errors([
        { id: 'a', tool: 'fs.read', args: { path: 'x' } },
        { id: 'c', kind: 'condition', expression: 'steps.a.output.x == 1', dependsOn: ['a'], ifTrue: ['a'] },
      ]),
    ).toEqual(['step c: branch a must be a step that depends on c']);
  });

  it('scores risk from annotations: absent annotations count as the spec defaults (high)', () => {
    const r = validatePlan(createPlan([{ id: 'a', tool: 'web.fetch' }]), tools);
    expect(r.ok && r.value.risk).toBe('high');
    const w = validatePlan(createPlan([{ id: 'a', tool: 'fs.write' }]), tools);
    expect(w.ok && w.value.stepRisk).toEqual({ a: 'high' });
  });

  it('property: random DAGs validate, and any added back edge is caught as a cycle', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 25 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 60 }),
        (n, edges) => {
          const deps: string[][] = Array.from({ length: n }, () => []);
          for (const [x, y] of edges) {
            const [lo, hi] = [x % n, y % n].sort((p, q) => p - q) as [number, number];
            if (lo !== hi && !deps[hi]!.includes(`s${lo}`)) deps[hi]!.push(`s${lo}`);
          }
          const steps = deps.map((d, i) => ({ id: `s${i}`, tool: 'fs.read', args: { path: 'p' }, dependsOn: d }));
          const ok = validatePlan(createPlan(steps), tools);
          expect(ok.ok).toBe(true);
          const layers = computeLayers(createPlan(steps).steps)!;
          const level = new Map(layers.flatMap((l, i) => l.map((id) => [id, i] as const)));
          for (const s of steps) for (const d of s.dependsOn) expect(level.get(d)!).toBeLessThan(level.get(s.id)!);
          const withEdge = deps.findIndex((d) => d.length > 0);
          if (withEdge >= 0) {
            const target = Number(deps[withEdge]![0]!.slice(1));
            steps[target]!.dependsOn = [...steps[target]!.dependsOn, `s${withEdge}`];
            const bad = validatePlan(createPlan(steps), tools);
            expect(!bad.ok && bad.error.some((e) => e.includes('cycle'))).toBe(true);
          }
        },
      ),
    );
  });

  it('property: a dangling reference is always rejected', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/), (ghost) => {
        fc.pre(ghost !== 'a');
        const r = validatePlan(
          createPlan([{ id: 'a', tool: 'fs.read', args: { path: { $ref: `steps.${ghost}.output.x` } } }]),
          tools,
        );
        expect(r.ok).toBe(false);
      }),
    );
  });
});

describe('plan size bounds', () => {
  it('a planner answer over 200,000 characters or 100 steps is refused with the reason', async () => {
    const { checkAnswer } = await import('../../../src/engine/plan/planner-prompt.ts');
    const huge = JSON.stringify({ summary: 'x'.repeat(200_001), needsTools: false, answer: 'a' });
    expect(checkAnswer(huge, tools)).toEqual({
      ok: false,
      error: 'the plan is longer than 200000 characters; write a smaller plan',
    });
    const many = JSON.stringify({
      summary: 's',
      needsTools: true,
      steps: Array.from({ length: 101 }, (_, i) => ({ id: `s${i}`, tool: 'fs.read', args: { path: 'p' } })),
    });
    const r = checkAnswer(many, tools);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error).toMatch(/^steps: Too big: expected array to have <=100 items/);
  });
});

describe('plan depth', () => {
  /** A plan whose one step holds an argument `depth` objects deep, built without the (recursive) schema. */
  function deepPlan(depth: number): Plan {
    let deep: Json = 'x';
    for (let i = 0; i < depth; i++) deep = { a: deep };
    const plan = createPlan([{ id: 'a', tool: 'fs.read', args: { path: '/x' } }]);
    const [step] = plan.steps;
    return { ...plan, steps: [{ ...step!, args: { path: '/x', deep } } as Plan['steps'][number]] };
  }

  it('a plan nested 10,000 deep is refused with the depth rule alone, never a stack overflow', () => {
    expect(validatePlan(deepPlan(10_000), tools)).toEqual({ ok: false, error: [TOO_DEEP] });
  });

  it('the limit counts the plan object as level 1', () => {
    // plan → steps → step → args → `deep` objects
    expect(validatePlan(deepPlan(MAX_PLAN_DEPTH - 4), tools).ok).toBe(true);
    expect(validatePlan(deepPlan(MAX_PLAN_DEPTH - 3), tools)).toEqual({ ok: false, error: [TOO_DEEP] });
  });
});
