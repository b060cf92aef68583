import { describe, expect, it } from 'vitest';
import { TOO_DEEP } from '../../../src/engine/plan/json-depth.ts';
import type { Plan, ToolStep } from '../../../src/engine/plan/plan-schema.ts';
import { validatePlan } from '../../../src/engine/plan/validate-plan.ts';
import type { Json } from '../../../src/engine/types.ts';
import {
  bindFireParams,
  checkFireParams,
  FIRE_PARAMS,
  fireParamsUsed,
  type FireValues,
} from '../../../src/engine/workflow/fire-params.ts';
import { createPlan, createTool } from '../fixtures.ts';

const tools = [
  createTool('srv.search', {
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, filters: { type: 'array' } },
      required: ['query'],
    },
  }),
  createTool('srv.send', {
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
      required: ['text', 'at'],
    },
  }),
];

const daily: Plan = createPlan([
  {
    id: 'a',
    tool: 'srv.search',
    args: { query: { $ref: 'fire.date' }, filters: [{ since: { $ref: 'fire.previousTime' } }] },
  },
  {
    id: 'b',
    kind: 'llm',
    dependsOn: ['a'],
    args: { prompt: { day: { $ref: 'fire.date' }, found: { $ref: 'steps.a.output.content[0].text' } } },
  },
  { id: 'c', kind: 'condition', dependsOn: ['a'], expression: 'fire.date != "2026-12-25"', ifTrue: ['d'] },
  {
    id: 'd',
    tool: 'srv.send',
    dependsOn: ['b', 'c'],
    args: { text: { $ref: 'steps.b.output.content[0].text' }, at: { $ref: 'fire.time' } },
  },
]);

// Monday 7 December 2026, 09:00 in Berlin; the week before.
const monday: FireValues = {
  time: new Date('2026-12-07T08:00:00Z'),
  previous: new Date('2026-11-30T08:00:00Z'),
  timeZone: 'Europe/Berlin',
};

function withArgs(args: Record<string, Json>): Plan {
  return createPlan([{ id: 'a', tool: 'srv.search', args }]);
}

/** A one-step plan with arguments the schema never saw, as a stored plan is read back. */
function withRawArgs(args: Record<string, Json>): Plan {
  const plan = withArgs({ query: 'x' });
  return { ...plan, steps: [{ ...(plan.steps[0] as ToolStep), args }] };
}

describe('which fire parameters a plan uses', () => {
  it('lists them once each, in the documented order, wherever they sit', () => {
    expect(fireParamsUsed(daily)).toEqual(['fire.time', 'fire.date', 'fire.previousTime']);
    expect(FIRE_PARAMS).toEqual(['fire.time', 'fire.date', 'fire.previousTime', 'fire.previousDate']);
  });

  it('finds one in a condition operand on either side', () => {
    const plan = createPlan([
      { id: 'a', tool: 'srv.search', args: { query: 'x' } },
      { id: 'c', kind: 'condition', dependsOn: ['a'], expression: 'steps.a.output.day == fire.previousDate' },
    ]);
    expect(fireParamsUsed(plan)).toEqual(['fire.previousDate']);
  });

  it('lists none in a plan without them', () => {
    expect(fireParamsUsed(withArgs({ query: { $ref: 'steps.x.output' } }))).toEqual([]);
  });
});

describe('binding a fire', () => {
  it('puts each value where its reference was: times with the zone offset, dates in the zone', () => {
    const bound = bindFireParams(daily, monday);
    expect(bound.steps[0]).toMatchObject({
      args: { query: '2026-12-07', filters: [{ since: '2026-11-30T09:00:00+01:00' }] },
    });
    expect(bound.steps[1]).toMatchObject({
      args: { prompt: { day: '2026-12-07', found: { $ref: 'steps.a.output.content[0].text' } } },
    });
    expect(bound.steps[2]).toMatchObject({ expression: '"2026-12-07" != "2026-12-25"' });
    expect(bound.steps[3]).toMatchObject({
      args: { text: { $ref: 'steps.b.output.content[0].text' }, at: '2026-12-07T09:00:00+01:00' },
    });
  });

  it('leaves the saved plan as it was', () => {
    const before = JSON.stringify(daily);
    bindFireParams(daily, monday);
    expect(JSON.stringify(daily)).toBe(before);
  });

  it('takes the date in the schedule zone, not in UTC', () => {
    const lateEvening = new Date('2026-12-06T23:30:00Z');
    const plan = withArgs({ query: { $ref: 'fire.date' } });
    const at = (timeZone: string) => bindFireParams(plan, { time: lateEvening, previous: null, timeZone }).steps[0];
    expect(at('Europe/Berlin')).toMatchObject({ args: { query: '2026-12-07' } });
    expect(at('America/New_York')).toMatchObject({ args: { query: '2026-12-06' } });
  });

  it('binds null when there is no previous time, in arguments and in conditions', () => {
    const plan = createPlan([
      { id: 'a', tool: 'srv.search', args: { query: 'x', filters: [{ $ref: 'fire.previousDate' }] } },
      { id: 'c', kind: 'condition', dependsOn: ['a'], expression: 'fire.previousTime == null' },
    ]);
    const bound = bindFireParams(plan, { ...monday, previous: null });
    expect(bound.steps[0]).toMatchObject({ args: { filters: [null] } });
    expect(bound.steps[1]).toMatchObject({ expression: 'null == null' });
  });

  it('makes a saved plan valid that is refused while its parameters are unbound', () => {
    const unbound = validatePlan(daily, tools);
    expect(unbound.ok).toBe(false);
    expect(unbound.ok ? [] : unbound.error).toEqual(
      expect.arrayContaining([
        expect.stringContaining('step a: argument query: "fire.date" is not a reference'),
        expect.stringContaining('step c: condition: "fire.date" is not a reference'),
      ]),
    );
    const bound = validatePlan(bindFireParams(daily, monday), tools);
    expect(bound.ok ? bound.value.layers : bound.error).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('leaves an object with more keys than $ref alone, as references do', () => {
    const plan = withArgs({ query: 'x', filters: [{ $ref: 'fire.date', note: 'not a reference' }] });
    expect(bindFireParams(plan, monday).steps[0]).toMatchObject({
      args: { filters: [{ $ref: 'fire.date', note: 'not a reference' }] },
    });
  });
});

describe('unknown fire parameters', () => {
  it('names each with its step and place, and the names to use instead', () => {
    const plan = createPlan([
      { id: 'a', tool: 'srv.search', args: { query: 'x', filters: [{ since: { $ref: 'fire.hour' } }] } },
      { id: 'c', kind: 'condition', dependsOn: ['a'], expression: 'fire.today == "2026-12-25"' },
    ]);
    const use = 'use fire.time, fire.date, fire.previousTime or fire.previousDate';
    expect(checkFireParams(plan)).toEqual([
      `step a: argument filters.0.since: unknown parameter "fire.hour"; ${use}`,
      `step c: condition: unknown parameter "fire.today"; ${use}`,
    ]);
    expect(checkFireParams(daily)).toEqual([]);
  });

  it.each(['fire.__proto__', 'fire.constructor', 'fire.toString', 'fire.hasOwnProperty', 'fire.'])(
    'refuses %s, and binding leaves it inert for validation to refuse',
    (name) => {
      const plan = withArgs({ query: { $ref: name } });
      expect(checkFireParams(plan)).toEqual([expect.stringContaining(`unknown parameter "${name}"`)]);
      const bound = bindFireParams(plan, monday);
      expect(bound.steps[0]).toMatchObject({ args: { query: { $ref: name } } });
      expect(validatePlan(bound, tools).ok).toBe(false);
    },
  );

  it('keeps an own "__proto__" key a key, and the prototype untouched', () => {
    const args = JSON.parse('{"query": "x", "filters": [{"__proto__": {"$ref": "fire.date"}}]}') as Record<
      string,
      Json
    >;
    const bound = bindFireParams(withRawArgs(args), monday).steps[0] as ToolStep;
    const filter = (bound.args.filters as Json[])[0] as Record<string, Json>;
    expect(Object.getPrototypeOf(filter)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(filter, '__proto__')?.value).toBe('2026-12-07');
  });

  it('cuts a huge name in its complaint', () => {
    const plan = withArgs({ query: { $ref: `fire.${'x'.repeat(1_000_000)}` } });
    const [problem] = checkFireParams(plan);
    expect(problem?.length).toBeLessThan(300);
    expect(bindFireParams(plan, monday)).toEqual(plan);
  });

  it('leaves a plan nested too deeply as it is, for validation to refuse, without walking it', () => {
    let deep: Json = { $ref: 'fire.date' };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const plan = withRawArgs({ query: deep });
    expect(checkFireParams(plan)).toEqual([TOO_DEEP]);
    expect(fireParamsUsed(plan)).toEqual([]);
    expect(bindFireParams(plan, monday)).toBe(plan);
    expect(validatePlan(plan, tools)).toEqual({ ok: false, error: [TOO_DEEP] });
  });
});
