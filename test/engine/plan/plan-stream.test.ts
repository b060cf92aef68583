import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_PLAN_DEPTH, TOO_DEEP } from '../../../src/engine/plan/json-depth.ts';
import { createPlanStream, type StreamedStep } from '../../../src/engine/plan/plan-stream.ts';
import { MAX_PLAN_CHARS } from '../../../src/engine/plan/planner-prompt.ts';
import type { Json } from '../../../src/engine/types.ts';

/** Feeds the deltas one by one; for each, the steps it completed (or its error). */
function feed(deltas: string[]) {
  const stream = createPlanStream();
  const perDelta = deltas.map((d) => {
    const r = stream.push(d);
    return r.ok ? r.value.map((s) => s.value) : { error: r.error };
  });
  return { perDelta, end: stream.end() };
}

/** Every step the answer yields, split at the given places, and the whole object. */
function readAll(text: string, cuts: number[]): { steps: StreamedStep[]; end: ReturnType<typeof feed>['end'] } {
  const stream = createPlanStream();
  const steps: StreamedStep[] = [];
  let from = 0;
  for (const to of [...cuts.filter((c) => c > 0 && c < text.length).sort((a, b) => a - b), text.length]) {
    const r = stream.push(text.slice(from, to));
    if (!r.ok) return { steps, end: { ok: false, error: r.error } };
    steps.push(...r.value);
    from = to;
  }
  return { steps, end: stream.end() };
}

const chars = (text: string) => [...text];

afterEach(() => vi.restoreAllMocks());

describe('reading a plan while it streams', () => {
  it('gives each step as soon as its value is complete, and the whole plan at the end', () => {
    const { perDelta, end } = feed([
      'Here is the plan:\n```json\n{"steps":[{"id":"a","tool":"fs.read","args":{"path":"/x"}}',
      ',{"id":"b","tool":"fs.li',
      'st"},',
      '{"id":"c","llm":"sum"}],"summary":"s"}\n```',
    ]);
    expect(perDelta).toEqual([
      [{ id: 'a', tool: 'fs.read', args: { path: '/x' } }],
      [],
      [{ id: 'b', tool: 'fs.list' }],
      [{ id: 'c', llm: 'sum' }],
    ]);
    expect(end).toEqual({
      ok: true,
      value: {
        steps: [
          { id: 'a', tool: 'fs.read', args: { path: '/x' } },
          { id: 'b', tool: 'fs.list' },
          { id: 'c', llm: 'sum' },
        ],
        summary: 's',
      },
    });
  });

  it('does not give a step cut in the middle of an argument until the rest arrives', () => {
    const { perDelta } = feed(['{"steps":[{"tool":"t.x","args":{"q":"half', ' of it"', '}', '}]}']);
    expect(perDelta).toEqual([[], [], [], [{ tool: 't.x', args: { q: 'half of it' } }]]);
  });

  it('reads strings holding braces, brackets, escaped quotes and unicode escapes, split anywhere', () => {
    const text = String.raw`{"steps":[{"tool":"t.x","args":{"q":"}]{[\"\\\u005d\u00e9\/"}},{"tool":"t.y"}]}`;
    for (let cut = 1; cut < text.length; cut++) {
      const { steps, end } = readAll(text, [cut]);
      expect(steps.map((s) => s.value)).toEqual((JSON.parse(text) as { steps: Json[] }).steps);
      expect(end).toEqual({ ok: true, value: JSON.parse(text) as Json });
    }
    expect((readAll(text, []).steps[0]?.value as { args: { q: string } }).args.q).toBe('}]{["\\]é/');
  });

  it('gives a number or a word only when what ends it arrives, split anywhere', () => {
    const { perDelta } = feed(['{"steps":[12', '.5e', '3', ',tr', 'ue', ' ,nu', 'll', ']}']);
    expect(perDelta).toEqual([[], [], [], [12500], [], [true], [], [null]]);
  });

  it('takes the steps from the top-level key only: after other keys, and never from "steps" inside a step', () => {
    const text = JSON.stringify({
      summary: 'has "steps": [ in it',
      why: { steps: [{ tool: 'no.no' }] },
      steps: [{ tool: 't.x', args: { steps: [1, 2], plan: { steps: [] } } }, { llm: 'p' }],
      risks: ['steps'],
    });
    expect(readAll(text, []).steps).toEqual([
      { index: 0, value: { tool: 't.x', args: { steps: [1, 2], plan: { steps: [] } } } },
      { index: 1, value: { llm: 'p' } },
    ]);
  });

  it('reads a top-level key written with escapes as JSON.parse does', () => {
    expect(readAll(String.raw`{"st\u0065ps":[{"tool":"t.x"}]}`, [5]).steps).toEqual([
      { index: 0, value: { tool: 't.x' } },
    ]);
  });

  it('answers without steps, such as {"answer": ...}, give no step and the whole object', () => {
    expect(feed(['{"answ', 'er":"hello"}'])).toEqual({
      perDelta: [[], []],
      end: { ok: true, value: { answer: 'hello' } },
    });
  });

  it('refuses nesting deeper than the plan limit as soon as it is seen, before parsing anything', () => {
    const stream = createPlanStream();
    expect(stream.push('{"steps":[{"tool":"t.x","args":{"a":')).toEqual({ ok: true, value: [] });
    const parse = vi.spyOn(JSON, 'parse');
    expect(stream.push('['.repeat(MAX_PLAN_DEPTH))).toEqual({ ok: false, error: TOO_DEEP });
    expect(parse).not.toHaveBeenCalled();
    expect(stream.push(']]]')).toEqual({ ok: false, error: TOO_DEEP });
    expect(stream.end()).toEqual({ ok: false, error: TOO_DEEP });
  });

  it('accepts nesting up to the limit exactly', () => {
    const inner = `${'['.repeat(MAX_PLAN_DEPTH - 2)}${']'.repeat(MAX_PLAN_DEPTH - 2)}`;
    expect(readAll(`{"steps":${'['}${inner}]}`, []).end.ok).toBe(true);
  });

  it('refuses an answer over the size limit at the delta that passes it', () => {
    const stream = createPlanStream();
    const body = '{"steps":[],"summary":"';
    expect(stream.push(body + 'x'.repeat(MAX_PLAN_CHARS - body.length)).ok).toBe(true);
    expect(stream.push('x')).toEqual({
      ok: false,
      error: `the plan is longer than ${MAX_PLAN_CHARS} characters; write a smaller plan`,
    });
    expect(stream.end().ok).toBe(false);
  });

  it.each<[string, string[], string]>([
    ['a missing comma between steps', ['{"steps":[{"tool":"a"} {"tool":"b"}]}'], 'the answer is not valid JSON'],
    ['a bad escape', ['{"steps":[{"tool":"a\\q"}]}'], 'the answer is not valid JSON'],
    ['a raw newline in a string', ['{"steps":[{"tool":"a\nb"}]}'], 'the answer is not valid JSON'],
    ['a misspelt word', ['{"steps":[tru', 'th]}'], 'the answer is not valid JSON'],
    ['a number with a leading zero', ['{"steps":[01]}'], 'the answer is not valid JSON'],
    ['a comma twice', ['{"steps":[1,,]}'], 'the answer is not valid JSON'],
    ['a comma with nothing before it', ['{"steps":[,]}'], 'the answer is not valid JSON'],
    ['a comma before a colon', ['{"steps",:[]}'], 'the answer is not valid JSON'],
    ['two steps lists', ['{"steps":[{"tool":"a"}],"steps":[]}'], 'the plan has two "steps" lists'],
    ['an answer cut before its end', ['{"steps":[{"tool":"a"}'], 'the answer ended before its JSON object did'],
    ['no object at all', ['I cannot help with that.'], 'the answer is not a JSON object'],
  ])('says why for %s', (_, deltas, error) => {
    expect(feed(deltas).end).toEqual({ ok: false, error });
  });

  it('stops giving steps once the answer is known to be broken', () => {
    const { perDelta } = feed(['{"steps":[{"tool":"a"},, {"tool":"b"}]}']);
    expect(perDelta).toEqual([{ error: 'the answer is not valid JSON' }]);
  });

  it('forgives a trailing comma in a step, after the last step and at the end, giving each step as it completes', () => {
    const { perDelta, end } = feed([
      '```json\n{"steps":[{"tool":"fs.read","args":{"path":"/x",},},',
      '{"tool":"fs.list","after":["s1",]},',
      '],"summary":"s",}\n```',
    ]);
    expect(perDelta).toEqual([[{ tool: 'fs.read', args: { path: '/x' } }], [{ tool: 'fs.list', after: ['s1'] }], []]);
    expect(end).toEqual({
      ok: true,
      value: {
        steps: [
          { tool: 'fs.read', args: { path: '/x' } },
          { tool: 'fs.list', after: ['s1'] },
        ],
        summary: 's',
      },
    });
  });

  it('keeps a comma before a brace inside a string as it is', () => {
    const { perDelta } = feed(['{"steps":[{"tool":"a","args":{"text":"x,}",},}]}']);
    expect(perDelta).toEqual([[{ tool: 'a', args: { text: 'x,}' } }]]);
  });

  it('ignores chatter after the object, braces included', () => {
    expect(feed(['{"steps":[]}', '\n```\nAnything else? {']).end).toEqual({ ok: true, value: { steps: [] } });
  });
});

describe('any split of any plan gives what JSON.parse gives', () => {
  const element = fc.oneof(
    fc.jsonValue({ stringUnit: 'binary' }),
    fc.record({
      id: fc.string(),
      tool: fc.string({ unit: 'binary' }),
      args: fc.dictionary(fc.oneof(fc.constant('steps'), fc.string()), fc.jsonValue(), { maxKeys: 4 }),
    }),
  );
  const plan = fc
    .tuple(
      fc.array(element, { maxLength: 6 }),
      fc.dictionary(
        fc.string().filter((k) => k !== 'steps'),
        fc.jsonValue(),
        { maxKeys: 4 },
      ),
      fc.nat(),
      fc.constantFrom(undefined, 2, '\t'),
      fc.constantFrom('', 'Sure, here it is:\n```json\n', 'Plan (no brackets before it): '),
    )
    .map(([steps, others, at, indent, chatter]) => {
      const entries = Object.entries(others);
      entries.splice(at % (entries.length + 1), 0, ['steps', steps]);
      return { text: chatter + JSON.stringify(Object.fromEntries(entries), null, indent), steps };
    });

  it('the same steps in order, and the same object', () => {
    fc.assert(
      fc.property(plan, fc.array(fc.nat(), { maxLength: 40 }), ({ text }, cuts) => {
        const body = text.slice(text.indexOf('{'));
        const expected = JSON.parse(body) as { steps: Json[] };
        const got = readAll(
          text,
          cuts.map((c) => c % (text.length + 1)),
        );
        expect(got.steps).toEqual(expected.steps.map((value, index) => ({ index, value })));
        expect(got.end).toEqual({ ok: true, value: expected });
      }),
      { numRuns: 300 },
    );
  });
});

describe('cost', () => {
  /** A plan of about 200 KB: many steps with long arguments holding escapes. */
  function bigAnswer(): string {
    const steps = Array.from({ length: 100 }, (_, i) => ({
      id: `s${i}`,
      tool: 'fs.write',
      args: { path: `/tmp/${i}`, text: `line "${i}" {[\\]}\n`.repeat(95) },
    }));
    return `\`\`\`json\n${JSON.stringify({ steps, summary: 'big' })}\n\`\`\``;
  }

  it('a 200 KB answer in 1-character deltas gives what one delta gives', () => {
    const text = bigAnswer();
    expect(text.length).toBeGreaterThan(190_000);
    expect(text.length).toBeLessThan(MAX_PLAN_CHARS);
    const whole = readAll(text, []);
    const oneByOne = createPlanStream();
    const steps = chars(text).flatMap((c) => {
      const r = oneByOne.push(c);
      return r.ok ? r.value : [];
    });
    expect(steps).toEqual(whole.steps);
    expect(steps).toHaveLength(100);
    expect(oneByOne.end()).toEqual(whole.end);
  });

  it('hands each character to JSON.parse at most twice (its step, and the whole plan), however it is split', () => {
    const text = bigAnswer();
    const parse = vi.spyOn(JSON, 'parse');
    const stream = createPlanStream();
    for (const c of chars(text)) stream.push(c);
    expect(stream.end().ok).toBe(true);
    const parsed = parse.mock.calls.reduce((n, [arg]) => n + String(arg).length, 0);
    expect(parsed).toBeLessThanOrEqual(2 * text.length);
    expect(parse.mock.calls.length).toBeLessThanOrEqual(100 + 2 + 1);
  });
});
