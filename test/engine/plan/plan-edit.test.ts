import { describe, expect, it } from 'vitest';
import { MAX_PLAN_DEPTH } from '../../../src/engine/plan/json-depth.ts';
import { parseEdit } from '../../../src/engine/plan/plan-edit.ts';
import { MAX_PLAN_CHARS } from '../../../src/engine/plan/planner-prompt.ts';
import type { Json } from '../../../src/engine/types.ts';
import { createPlan } from '../fixtures.ts';

const current = createPlan(
  [
    { id: 'a', tool: 'srv.read' },
    { id: 'b', tool: 'srv.write', dependsOn: ['a'] },
  ],
  { summary: 'copy the report', rationale: 'read then write', risks: ['overwrites the copy'] },
);

describe("a person's edit of a plan", () => {
  it('a whole plan replaces the current one', () => {
    const edit = { summary: 'just read', needsTools: true, steps: [{ id: 'r', tool: 'srv.read', args: { p: 1 } }] };
    const r = parseEdit(current, edit);
    expect(r.ok && r.value.summary).toBe('just read');
    expect(r.ok && r.value.steps).toEqual([
      { id: 'r', kind: 'tool', tool: 'srv.read', args: { p: 1 }, dependsOn: [], description: '', optional: false },
    ]);
  });

  it('{"steps": [...]} replaces the steps and keeps the rest of the current plan', () => {
    const r = parseEdit(current, { steps: [{ id: 'a', tool: 'srv.read' }] });
    expect(r).toEqual({ ok: true, value: { ...current, steps: [current.steps[0]] } });
  });

  it('an edit cannot turn the plan into a direct answer: it still needs its tools', () => {
    const r = parseEdit(current, { needsTools: false, answer: 'done already' });
    expect(r.ok && r.value.needsTools).toBe(true);
  });

  it('is refused when there is no plan yet', () => {
    expect(parseEdit(null, { steps: [] })).toEqual({ ok: false, error: 'There is no plan to edit.' });
  });

  it.each<[string, Json | undefined]>([
    ['nothing', undefined],
    ['null', null],
    ['a list of steps', [{ id: 'a', tool: 'srv.read' }]],
    ['text', 'add a step'],
    ['a number', 3],
    ['true', true],
  ])('is refused when it is %s instead of an object', (_, edit) => {
    expect(parseEdit(current, edit)).toEqual({
      ok: false,
      error: 'An edit is a JSON object: a whole plan, or {"steps": [...]}.',
    });
  });

  it('is refused when longer than a plan may be', () => {
    const edit = { steps: [{ id: 'a', tool: 'srv.read', args: { text: 'x'.repeat(MAX_PLAN_CHARS) } }] };
    expect(parseEdit(current, edit)).toEqual({
      ok: false,
      error: `That edit was refused: a plan is at most ${MAX_PLAN_CHARS} characters.`,
    });
  });

  it('is refused with each schema error named by its place', () => {
    const r = parseEdit(current, { summary: '', steps: [{ id: '1a', tool: 'srv.read' }] });
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error).toMatch(/^That edit was refused: /);
    expect(r.ok ? '' : r.error).toContain('summary: ');
    expect(r.ok ? '' : r.error).toContain('steps.0.id: step ids start with a letter and use letters, digits, _ or -');
  });

  it('names at most five schema errors', () => {
    const steps = ['1', '2', '3', '4', '5', '6', '7'].map((id) => ({ id, tool: 'srv.read' }));
    const r = parseEdit(current, { steps });
    const error = r.ok ? '' : r.error;
    expect(error.match(/steps\.\d\.id/g)).toEqual([
      'steps.0.id',
      'steps.1.id',
      'steps.2.id',
      'steps.3.id',
      'steps.4.id',
    ]);
  });
});

describe('the depth of an edit', () => {
  /** An edit whose one step holds an argument `depth` arrays deep, built without recursion. */
  function deepEdit(depth: number): Json {
    let deep: Json = 'x';
    for (let i = 0; i < depth; i++) deep = [deep];
    return { steps: [{ id: 'a', tool: 'srv.read', args: { deep } }] };
  }

  it('an edit nested 10,000 deep is refused with the limit, never a stack overflow', () => {
    expect(parseEdit(current, deepEdit(10_000))).toEqual({
      ok: false,
      error: `That edit was refused: a plan nests at most ${MAX_PLAN_DEPTH} levels deep.`,
    });
  });

  it('the limit counts the edit object as level 1, as the plan it lays over', () => {
    // edit → steps → step → args → `deep` arrays
    expect(parseEdit(current, deepEdit(MAX_PLAN_DEPTH - 4)).ok).toBe(true);
    expect(parseEdit(current, deepEdit(MAX_PLAN_DEPTH - 3)).ok).toBe(false);
  });
});
