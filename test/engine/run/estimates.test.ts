import { describe, expect, it } from 'vitest';
import type { EstimateHistoryData, RoleTokenStats } from '../../../src/engine/estimate-history.ts';
import type { PricedModel } from '../../../src/engine/model-cost.ts';
import { validatePlan, type ValidatedPlan } from '../../../src/engine/plan/validate-plan.ts';
import { canonicalJson } from '../../../src/engine/plan/canonical-json.ts';
import {
  argShape,
  basisWords,
  criticalPath,
  estimateJson,
  estimateLine,
  estimatePlan,
  scheduledSpan,
  tookLine,
} from '../../../src/engine/run/estimates.ts';
import { createPlan, createTool } from '../fixtures.ts';

const TOOLS = ['srv.fast', 'srv.slow', 'srv.mid', 'srv.new'].map((t) => createTool(t));

function validated(steps: unknown[]): ValidatedPlan {
  const v = validatePlan(createPlan(steps), TOOLS);
  if (!v.ok) throw new Error(v.error.join('; '));
  return v.value;
}

const durations = (p50Ms: number, p90Ms: number) => ({ p50Ms, p90Ms, samples: 5 });

const history: EstimateHistoryData = {
  tools: { 'srv.fast': durations(100, 200), 'srv.slow': durations(1000, 3000), 'srv.mid': durations(600, 900) },
  roles: {},
};

function role(input: [number, number], output: [number, number], model = 'gpt-test'): RoleTokenStats {
  return { input: { low: input[0], high: input[1] }, output: { low: output[0], high: output[1] }, samples: 3, model };
}

const prices: PricedModel[] = [
  { name: 'default', model: 'gpt-test', prices: { inputPerMillion: 1, outputPerMillion: 4, cachedInputPerMillion: 0 } },
];

describe('the estimated duration', () => {
  it('of a chain adds up its steps, p50 to p90', () => {
    const v = validated([
      { id: 'a', tool: 'srv.fast' },
      { id: 'b', tool: 'srv.slow', dependsOn: ['a'] },
      { id: 'c', tool: 'srv.mid', dependsOn: ['b'] },
    ]);
    expect(estimatePlan(v, history, []).durationMs).toEqual({ low: 1700, high: 4100 });
  });

  it('of a fan-out is its slowest branch, not the sum', () => {
    const v = validated([
      { id: 'a', tool: 'srv.fast' },
      { id: 'b', tool: 'srv.slow', dependsOn: ['a'] },
      { id: 'c', tool: 'srv.mid', dependsOn: ['a'] },
      { id: 'd', tool: 'srv.fast', dependsOn: ['a'] },
    ]);
    expect(estimatePlan(v, history, []).durationMs).toEqual({ low: 1100, high: 3200 });
  });

  it('of a DAG follows the critical path, even when it does not hold the longest single step', () => {
    // slow (1000) alone vs mid → mid → fast (600 + 600 + 100 = 1300): the chain of shorter steps is critical.
    const v = validated([
      { id: 'alone', tool: 'srv.slow' },
      { id: 'm1', tool: 'srv.mid' },
      { id: 'm2', tool: 'srv.mid', dependsOn: ['m1'] },
      { id: 'end', tool: 'srv.fast', dependsOn: ['m2', 'alone'] },
    ]);
    // p50: max(1000, 1200) + 100; p90: max(3000, 1800) + 200: the critical path changes with the percentile.
    expect(estimatePlan(v, history, []).durationMs).toEqual({ low: 1300, high: 3200 });
  });

  it('of a card shown mid-run counts only the steps not yet ended', () => {
    const v = validated([
      { id: 'a', tool: 'srv.slow' },
      { id: 'b', tool: 'srv.fast', dependsOn: ['a'] },
    ]);
    expect(estimatePlan(v, history, [], { done: new Set(['a']) }).durationMs).toEqual({ low: 100, high: 200 });
  });
});

describe('the estimated duration within maxParallel', () => {
  const ids = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
  const equal = (v: ValidatedPlan, ms: number) => new Map(v.plan.steps.map((s) => [s.id, ms]));

  it('of a fan-out of 10 equal steps with 4 slots is 3 waves', () => {
    const v = validated(ids(10, 's').map((id) => ({ id, tool: 'srv.mid' })));
    expect(scheduledSpan(v, equal(v, 600), 4)).toBe(1800);
    expect(estimatePlan(v, history, [], { maxParallel: 4 }).durationMs).toEqual({ low: 1800, high: 2700 });
    // Unlimited (no setting) it is one wave: the critical path.
    expect(estimatePlan(v, history, []).durationMs).toEqual({ low: 600, high: 900 });
  });

  it('of a chain is its sum, whatever the slots', () => {
    const v = validated([
      { id: 'a', tool: 'srv.fast' },
      { id: 'b', tool: 'srv.slow', dependsOn: ['a'] },
      { id: 'c', tool: 'srv.mid', dependsOn: ['b'] },
    ]);
    for (const maxParallel of [1, 2, 8]) {
      expect(estimatePlan(v, history, [], { maxParallel }).durationMs).toEqual({ low: 1700, high: 4100 });
    }
  });

  it('of a diamond runs its two branches side by side with 2 slots, one after the other with 1', () => {
    const v = validated([
      { id: 'top', tool: 'srv.fast' },
      { id: 'left', tool: 'srv.slow', dependsOn: ['top'] },
      { id: 'right', tool: 'srv.mid', dependsOn: ['top'] },
      { id: 'bottom', tool: 'srv.fast', dependsOn: ['left', 'right'] },
    ]);
    expect(estimatePlan(v, history, [], { maxParallel: 2 }).durationMs).toEqual({ low: 1200, high: 3400 });
    expect(estimatePlan(v, history, [], { maxParallel: 1 }).durationMs).toEqual({ low: 1800, high: 4300 });
  });

  it('takes ready steps in plan order, so a long step late in the plan may wait for a slot', () => {
    // One slot taken by a and then b (plan order) before the long c: 100 + 100 + 1000, not 1000 + ...
    const v = validated([
      { id: 'a', tool: 'srv.fast' },
      { id: 'b', tool: 'srv.fast' },
      { id: 'c', tool: 'srv.slow' },
      { id: 'd', tool: 'srv.fast', dependsOn: ['a'] },
    ]);
    const ms = new Map([
      ...[
        ['a', 100],
        ['b', 100],
        ['c', 1000],
        ['d', 100],
      ].map(([id, n]) => [id, n] as [string, number]),
    ]);
    // Two slots: a, b start; at 100 c and d start (plan order: c before d); c ends at 1100.
    expect(scheduledSpan(v, ms, 2)).toBe(1100);
    expect(scheduledSpan(v, ms, 1)).toBe(1300);
  });

  it('with more slots than the plan is wide equals the critical path', () => {
    const v = validated([
      { id: 'alone', tool: 'srv.slow' },
      { id: 'm1', tool: 'srv.mid' },
      { id: 'm2', tool: 'srv.mid', dependsOn: ['m1'] },
      { id: 'f1', tool: 'srv.fast', dependsOn: ['m1'] },
      { id: 'f2', tool: 'srv.fast', dependsOn: ['m1'] },
      { id: 'end', tool: 'srv.fast', dependsOn: ['m2', 'alone', 'f1'] },
    ]);
    const ms = new Map(v.plan.steps.map((s, i) => [s.id, 100 * (i + 1) + 7 * i * i]));
    for (const maxParallel of [3, 6, 100, Infinity]) {
      expect(scheduledSpan(v, ms, maxParallel)).toBe(criticalPath(v, ms));
    }
  });

  it('leaves out steps already ended and steps that take no time, which need no slot', () => {
    const v = validated([
      ...ids(4, 'd').map((id) => ({ id, tool: 'srv.slow' })),
      ...ids(4, 'n').map((id) => ({ id, tool: 'srv.new' })),
      ...ids(4, 'm').map((id) => ({ id, tool: 'srv.mid' })),
    ]);
    const done = new Set(ids(4, 'd'));
    // The 4 mid steps and 4 instant ones with 2 slots: two waves of mid.
    expect(estimatePlan(v, history, [], { done, maxParallel: 2 }).durationMs).toEqual({ low: 1200, high: 1800 });
  });
});

describe('the estimated duration of a step called with arguments seen before', () => {
  const v = validated([
    { id: 'short', tool: 'srv.mid', args: { ms: 50, opts: { a: 1, b: [1, 2] } } },
    { id: 'long', tool: 'srv.mid', args: { ms: 600 }, dependsOn: ['short'] },
    { id: 'other', tool: 'srv.mid', args: { ms: 7 }, dependsOn: ['long'] },
  ]);
  const withArgs: EstimateHistoryData = {
    ...history,
    byArgs: {
      // Keys as the store makes them from jsonb: canonical JSON, whatever order the plan wrote its keys in.
      'srv.mid': {
        [canonicalJson({ opts: { b: [1, 2], a: 1 }, ms: 50 })]: durations(50, 60),
        [canonicalJson({ ms: 600 })]: durations(600, 650),
      },
    },
  };

  it("uses the tool's durations with those arguments, else the tool's", () => {
    // 50 + 600 + 600 (the tool's, for arguments never seen) .. 60 + 650 + 900.
    expect(estimatePlan(v, withArgs, []).durationMs).toEqual({ low: 1250, high: 1610 });
    expect(estimatePlan(v, history, []).durationMs).toEqual({ low: 1800, high: 2700 });
  });

  it('names the tool of a step whose arguments were never seen when the tool has no history of its own', () => {
    const only: EstimateHistoryData = { tools: {}, byArgs: withArgs.byArgs, roles: {} };
    const e = estimatePlan(v, only, []);
    expect(e.durationMs).toEqual({ low: 650, high: 710 });
    expect(e.noHistory).toEqual(['srv.mid']);
  });
});

describe('the estimated duration of a step called with new arguments of a known shape', () => {
  // srv.mid's history: a search with a pattern is slow, a listing of a path alone is fast; the tool's mixes them.
  const shapes: EstimateHistoryData = {
    tools: { ...history.tools, 'srv.mid': durations(2000, 6100) },
    byArgs: { 'srv.mid': { [canonicalJson({ path: '/docs' })]: durations(40, 60) } },
    byShape: {
      'srv.mid': {
        [canonicalJson(argShape({ path: '/x' }))]: durations(50, 80),
        [canonicalJson(argShape({ path: '/x', pattern: '*.md' }))]: durations(5000, 7000),
      },
    },
    roles: {},
  };
  const step = (id: string, args: Record<string, unknown>, dependsOn: string[] = []) => ({
    id,
    tool: 'srv.mid',
    args,
    dependsOn,
  });

  it("uses the same arguments' history first, then that of arguments with the same names and value types, then the tool's", () => {
    const exact = estimatePlan(validated([step('a', { path: '/docs' })]), shapes, []);
    expect(exact.durationMs).toEqual({ low: 40, high: 60 });
    expect(exact.basis).toEqual([{ step: 'a', from: 'args' }]);

    // A path never listed: like other listings of a path alone, not like the tool's searches.
    const similar = estimatePlan(validated([step('a', { path: '/never' })]), shapes, []);
    expect(similar.durationMs).toEqual({ low: 50, high: 80 });
    expect(similar.basis).toEqual([{ step: 'a', from: 'similar' }]);
    const search = estimatePlan(validated([step('a', { pattern: '*.ts', path: '/src' })]), shapes, []);
    expect(search.durationMs).toEqual({ low: 5000, high: 7000 });

    // Another value type (a number where a string was), or another name, is another shape: the tool's history.
    for (const args of [{ path: 7 }, { dir: '/x' }, { path: '/x', depth: 2 }]) {
      const e = estimatePlan(validated([step('a', args)]), shapes, []);
      expect(e.durationMs, JSON.stringify(args)).toEqual({ low: 2000, high: 6100 });
      expect(e.basis).toEqual([{ step: 'a', from: 'tool' }]);
    }
  });

  it('tells a reference apart from a literal of any type', () => {
    expect(argShape({ path: { $ref: 'steps.a.output.path' }, opts: { depth: 1 }, tags: ['a'], none: null })).toEqual({
      path: 'ref',
      opts: 'object',
      tags: 'array',
      none: 'null',
    });
    expect(argShape({ n: 1, s: 'x', b: false })).toEqual({ n: 'number', s: 'string', b: 'boolean' });
  });

  it('leaves out steps already ended, and says nothing of a plan with no history', () => {
    const v = validated([step('a', { path: '/docs' }), step('b', { path: '/new' }, ['a'])]);
    expect(estimatePlan(v, shapes, [], { done: new Set(['a']) }).basis).toEqual([{ step: 'b', from: 'similar' }]);
    expect(estimatePlan(v, { tools: {}, roles: {} }, []).basis).toBeUndefined();
  });
});

describe('the words of what an estimate came from', () => {
  const basis = (...froms: ('args' | 'similar' | 'tool')[]) => froms.map((from, i) => ({ step: `s${i + 1}`, from }));

  it('say it once for the plan when every step came from the same kind of history', () => {
    expect(basisWords(basis('args', 'args'))).toBe('from past runs with the same arguments');
    expect(basisWords(basis('similar'))).toBe('from past runs with similar arguments');
    expect(basisWords(basis('tool', 'tool', 'tool'))).toBe('from past runs with any arguments');
  });

  it('name the steps that came from another kind than most, and count them when there are many', () => {
    expect(basisWords(basis('args', 'args', 'similar', 'tool', 'tool'))).toBe(
      'from past runs with the same arguments (s3: similar arguments; s4, s5: any arguments)',
    );
    // A tie goes to the more precise history.
    expect(basisWords(basis('tool', 'args'))).toBe('from past runs with the same arguments (s1: any arguments)');
    expect(
      basisWords(basis('args', 'tool', 'tool', 'tool', 'tool', 'tool', 'similar', 'similar', 'similar', 'similar')),
    ).toBe('from past runs with any arguments (s1: the same arguments; 4 steps: similar arguments)');
  });

  it('follow the duration on the card line, and are stored with the estimate', () => {
    const e = estimatePlan(
      validated([
        { id: 'a', tool: 'srv.fast' },
        { id: 'b', tool: 'srv.new', dependsOn: ['a'] },
      ]),
      history,
      [],
    );
    expect(estimateLine(e)).toBe('Estimate: 0.1–0.2 s from past runs with any arguments · no history for srv.new');
    expect(estimateJson(e)).toMatchObject({ basis: [{ step: 'a', from: 'tool' }] });
  });
});

describe('an estimate without history', () => {
  it('at all says so instead of guessing', () => {
    const v = validated([
      { id: 'a', tool: 'srv.fast' },
      { id: 'b', kind: 'llm', args: { prompt: 'sum up' }, dependsOn: ['a'] },
    ]);
    const e = estimatePlan(v, { tools: {}, roles: {} }, prices);
    expect(e).toEqual({ durationMs: null, tokens: null, costMicroUsd: null, noHistory: ['llm', 'srv.fast'] });
    expect(estimateLine(e)).toBe('Estimate: duration unknown · no history for llm, srv.fast');
  });

  it('for some tools counts them as instant and names them', () => {
    const v = validated([
      { id: 'a', tool: 'srv.fast' },
      { id: 'b', tool: 'srv.new', dependsOn: ['a'] },
      { id: 'c', tool: 'srv.new', dependsOn: ['b'] },
    ]);
    const e = estimatePlan(v, history, []);
    expect(e.durationMs).toEqual({ low: 100, high: 200 });
    expect(e.noHistory).toEqual(['srv.new']);
    expect(estimateLine(e)).toBe('Estimate: 0.1–0.2 s from past runs with any arguments · no history for srv.new');
  });
});

describe('the estimated tokens and cost', () => {
  const v = validated([
    { id: 'a', tool: 'srv.fast' },
    { id: 'b', kind: 'llm', args: { prompt: 'one' }, dependsOn: ['a'] },
    { id: 'c', kind: 'llm', args: { prompt: 'two' }, dependsOn: ['a'] },
  ]);
  const withRoles: EstimateHistoryData = {
    tools: { ...history.tools, llm: durations(2000, 4000) },
    roles: {
      planner: role([1000, 2000], [200, 400]),
      synthesizer: role([500, 700], [100, 300]),
      llm_step: role([300, 500], [50, 100]),
    },
  };

  it('count the planner and the report once per run and an llm step once per step, priced by the catalog', () => {
    const e = estimatePlan(v, withRoles, prices);
    // low: 1200 + 600 + 2 × 350 = 2500; high: 2400 + 1000 + 2 × 600 = 4600.
    expect(e.tokens).toEqual({ low: 2500, high: 4600 });
    // low: (1000 + 500 + 600) × 1 + (200 + 100 + 100) × 4 = 3700 µ$; high: (2000 + 700 + 1000) + (400 + 300 + 200) × 4.
    expect(e.costMicroUsd).toEqual({ low: 3700, high: 7300 });
    expect(e.durationMs).toEqual({ low: 2100, high: 4200 });
    expect(estimateLine(e)).toBe(
      'Estimate: 2.1–4.2 s from past runs with any arguments · 2.5k–4.6k tokens · $0.0037–0.0073',
    );
  });

  it('leave the cost unknown, never zero, when a model has no price', () => {
    const unpriced = { ...withRoles, roles: { ...withRoles.roles, synthesizer: role([1, 1], [1, 1], 'other') } };
    const e = estimatePlan(v, unpriced, prices);
    expect(e.costMicroUsd).toBeNull();
    expect(estimateLine(e)).toContain('tokens · cost unknown');
  });
});

describe('estimate against actual', () => {
  it('says how long the run took and what was estimated', () => {
    const e = { durationMs: { low: 3000, high: 8000 }, tokens: null, costMicroUsd: null, noHistory: [] };
    expect(tookLine(5200, e)).toBe('Took 5.2 s, estimated 3.0–8.0 s');
    expect(tookLine(5200, undefined)).toBe('Took 5.2 s');
  });
});
