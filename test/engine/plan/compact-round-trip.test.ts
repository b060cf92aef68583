import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planFor, taskPlan } from '../../../bench/fake-model.ts';
import type { GeneratedFile } from '../../../bench/fs-tree.ts';
import { createTasks } from '../../../bench/tasks.ts';
import { canonicalJson } from '../../../src/engine/plan/canonical-json.ts';
import {
  compactElementWidth,
  expandCompactElement,
  expandCompactPlan,
  expandCompactStep,
} from '../../../src/engine/plan/compact-plan.ts';
import { compactPlanJsonSchema } from '../../../src/engine/plan/compact-schema.ts';
import { planSchema, type Plan } from '../../../src/engine/plan/plan-schema.ts';
import { checkAnswer, plannerUserPrompt } from '../../../src/engine/plan/planner-prompt.ts';
import { checkRevision } from '../../../src/engine/plan/revise.ts';
import { toCompactPlan } from '../../../src/engine/plan/to-compact-plan.ts';
import type { Json } from '../../../src/engine/types.ts';
import { createTool } from '../fixtures.ts';

const files: GeneratedFile[] = [1, 2, 3, 4].map((i) => ({
  path: `/tmp/bench/docs/doc-${i}.txt`,
  title: `doc-${i}`,
  checksum: 'c',
}));
const tasks = createTasks(1, files);
const benchTools = [...new Set(tasks.flatMap((t) => t.steps.map((s) => s.tool)))].map((name) =>
  createTool(name, { inputSchema: { type: 'object' } }),
);
const validCompact = new Ajv({ strict: false }).compile(compactPlanJsonSchema());

function expand(raw: Json): Plan {
  const r = expandCompactPlan(raw);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

function hasFullStep(compact: Json): boolean {
  const steps = (compact as { steps?: Json[] }).steps ?? [];
  return steps.some((s) => typeof s === 'object' && s !== null && 'kind' in s);
}

describe('the bench plans in the compact form', () => {
  it.each(tasks.map((t) => [t.id, t] as const))('%s: expands to the full plan, validates and comes back', (_, task) => {
    const answer = planFor(task);
    const compact = JSON.parse(answer) as Json;
    expect(validCompact(compact)).toBe(true);
    expect(hasFullStep(compact)).toBe(false);
    const plan = expand(compact);
    expect(plan).toEqual(taskPlan(task));
    expect(toCompactPlan(plan)).toEqual(compact);
    const checked = checkAnswer(answer, benchTools);
    expect(checked.ok && checked.value.layers.length).toBe(Math.max(...depths(task.steps)) + 1);
  });
});

/** A step's depth in its task's DAG, from its dependencies. */
function depths(steps: readonly { id: string; dependsOn: string[] }[]): number[] {
  const depth = new Map<string, number>();
  for (const s of steps) depth.set(s.id, Math.max(-1, ...s.dependsOn.map((d) => depth.get(d) ?? 0)) + 1);
  return [...depth.values()];
}

const idPool = ['a', 'b', 'c', 'r1', 'x-2', 'long_id', 'steps', 'true', 's9'];
const paths = ['', '.content[0].text', '.structuredContent.n', '["odd key"]', '[3]'];
const literal = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null));

/** A compact plan with references to earlier steps only, in every form a model may write. */
const compactPlan = fc
  .array(
    fc.record({
      named: fc.boolean(),
      kind: fc.constantFrom('tool', 'llm', 'if'),
      refs: fc.array(fc.tuple(fc.nat(), fc.constantFrom(...paths), fc.boolean()), { maxLength: 3 }),
      literals: fc.array(literal, { maxLength: 2 }),
      after: fc.array(fc.nat(), { maxLength: 2 }),
      note: fc.constantFrom('', 'a note'),
      optional: fc.boolean(),
      op: fc.constantFrom('==', '>=', 'contains'),
    }),
    { minLength: 1, maxLength: 10 },
  )
  .map((specs) => {
    const ids: string[] = [];
    const steps = specs.map((spec, i) => {
      const id = spec.named && idPool[i] ? idPool[i] : `s${i + 1}`;
      const earlier = ids.slice();
      ids.push(id);
      const pick = (n: number) => earlier[n % Math.max(1, earlier.length)];
      const refs =
        earlier.length === 0
          ? []
          : spec.refs.map(([n, path, long]) => {
              const target = pick(n) as string;
              // A short reference never starts with "steps.": a step of that name is read through the long form.
              return long || (target === 'steps' && path) ? `steps.${target}.output${path}` : `${target}${path}`;
            });
      const after = earlier.length === 0 ? [] : [...new Set(spec.after.map((n) => pick(n) as string))];
      const values: Json[] = [...spec.literals, ...refs.map(($ref) => ({ $ref }))];
      const head: Record<string, Json> = spec.named ? { id } : {};
      const tail: Record<string, Json> = {
        ...(after.length > 0 && { after }),
        ...(spec.note && { note: spec.note }),
        ...(spec.optional && { optional: true }),
      };
      if (spec.kind === 'tool') {
        const args = Object.fromEntries(values.map((v, k) => [`k${k}`, v]));
        return { ...head, tool: 'srv.do', args, ...tail };
      }
      if (spec.kind === 'llm') return { ...head, llm: values, ...tail };
      const left = refs.find((r) => !r.startsWith('steps.') && r !== 'true') ?? '"text"';
      return { ...head, if: `${left} ${spec.op} 3`, ...tail };
    });
    return { steps };
  });

/** Any full plan, including dependencies the compact form cannot say (a reference to a step not depended on). */
const fullPlan = compactPlan.chain((compact) =>
  fc.array(fc.boolean(), { minLength: compact.steps.length, maxLength: compact.steps.length }).map((drops) => {
    const plan = expand(compact);
    return { ...plan, steps: plan.steps.map((s, i) => (drops[i] ? { ...s, dependsOn: s.dependsOn.slice(1) } : s)) };
  }),
);

describe('round trips', () => {
  it('compact → full → compact gives the compact form back, which needs no full-form step', () => {
    fc.assert(
      fc.property(compactPlan, (compact) => {
        const plan = expand(compact);
        const again = toCompactPlan(plan);
        expect(hasFullStep(again)).toBe(false);
        expect(expand(again)).toEqual(plan);
        expect(toCompactPlan(expand(again))).toEqual(again);
        expect(JSON.stringify(again).length).toBeLessThan(JSON.stringify(plan).length);
      }),
      { numRuns: 200 },
    );
  });

  it('full → compact → full gives exactly the same plan, whatever its dependencies', () => {
    fc.assert(
      fc.property(fullPlan, (plan) => {
        expect(canonicalJson(expand(toCompactPlan(plan)))).toBe(canonicalJson(plan));
      }),
      { numRuns: 200 },
    );
  });

  it('each step expands alone exactly as it does inside its plan, which a parser of a streamed plan relies on', () => {
    fc.assert(
      fc.property(compactPlan, (compact) => {
        const plan = expand(compact);
        compact.steps.forEach((raw, i) =>
          expect(expandCompactStep(raw, i)).toEqual({ ok: true, value: plan.steps[i] }),
        );
        // The same written with fan-outs: each element, read alone at its place, gives the steps it stands for.
        const folded = toCompactPlan(plan) as { steps: Json[] };
        let position = 0;
        const alone = folded.steps.flatMap((raw, i) => {
          const steps = expandCompactElement(raw, position, i);
          position += compactElementWidth(raw);
          return steps.ok ? steps.value : [];
        });
        expect(alone).toEqual(plan.steps);
      }),
      { numRuns: 100 },
    );
  });

  it('writes calls of one tool side by side as a fan-out, and a chain of them as a chain', () => {
    const plan = expand({
      steps: [
        { tool: 'fs.read', args: { path: '/a' } },
        { tool: 'fs.read', args: { path: '/b' } },
        { tool: 'fs.read' },
        { tool: 'fs.write', args: { text: { $ref: 's3.content' } } },
        { tool: 'fs.write', args: { text: { $ref: 's4.content' } } },
      ],
      summary: 'Read three, write two',
    });
    expect(toCompactPlan(plan)).toEqual({
      steps: [
        { tool: 'fs.read', each: [{ path: '/a' }, { path: '/b' }, {}] },
        { tool: 'fs.write', args: { text: { $ref: 's3.content' } } },
        { tool: 'fs.write', args: { text: { $ref: 's4.content' } } },
      ],
      summary: 'Read three, write two',
    });
    // Shown for an amendment, every id is written: no fan-out, whose calls could not carry theirs.
    const shown = toCompactPlan(plan, { explicitIds: true }) as { steps: Json[] };
    expect(shown.steps.map((s) => Object.keys(s as object)[0])).toEqual(['id', 'id', 'id', 'id', 'id']);
  });

  it('a plan the compact form cannot hold whole is shown in the full form, which still reads back', () => {
    const odd = planSchema.parse({ summary: 'x', needsTools: true, answer: 'kept', steps: [{ id: 'a', tool: 'f.g' }] });
    expect(toCompactPlan(odd)).toEqual(odd);
  });
});

describe('amendments show the compact plan', () => {
  const tools = [createTool('fs.read'), createTool('fs.write')];
  const plan = planSchema.parse({
    summary: 'Read and write',
    needsTools: true,
    steps: [
      { id: 's1', tool: 'fs.read', description: 'read the list' },
      { id: 'b', tool: 'fs.read', dependsOn: ['s1'] },
      // Reads s1 through b: a full-form step in the compact view.
      { id: 's3', tool: 'fs.write', args: { text: { $ref: 'steps.s1.output.content[0].text' } }, dependsOn: ['b'] },
    ],
  });

  it('with every id written, and a planner that copies the started steps changes none of them', () => {
    const prompt = plannerUserPrompt({
      request: 'copy the list',
      tools,
      amend: { plan, text: 'also read it twice', progress: { started: ['s1', 'b', 's3'], results: [] } },
    });
    const shown = /Current plan:\n(.*)\n/.exec(prompt)?.[1] ?? '';
    expect(shown).toBe(
      '{"steps":[{"id":"s1","tool":"fs.read","note":"read the list"},{"id":"b","tool":"fs.read","after":["s1"]},' +
        '{"id":"s3","kind":"tool","dependsOn":["b"],"description":"","optional":false,"tool":"fs.write","args":{"text":{"$ref":"steps.s1.output.content[0].text"}}}],' +
        '"summary":"Read and write"}',
    );
    const compact = JSON.parse(shown) as { steps: Json[]; summary: string };
    // The planner inserts a step first (its default id would be s1's) and keeps the rest verbatim.
    const revised = { ...compact, steps: [{ id: 'new', tool: 'fs.read' }, ...compact.steps] };
    const checked = checkAnswer(JSON.stringify(revised), tools);
    expect(checked.ok).toBe(true);
    if (checked.ok) expect(checkRevision(plan, checked.value.plan, new Set(['s1', 'b', 's3']))).toEqual([]);
  });
});
