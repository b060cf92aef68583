import { describe, expect, it } from 'vitest';
import type { PinnedTool } from '../../../src/engine/ports.ts';
import { breakpointView, describeHolds, interventionTools } from '../../../src/engine/run/holds.ts';
import type { Hold } from '../../../src/engine/run/dispatch-state.ts';
import type { Json } from '../../../src/engine/types.ts';
import { createDefinition, createPlan, createState, createTool } from '../fixtures.ts';

const plan = createPlan([
  { id: 'read', tool: 'srv.read' },
  { id: 'send', tool: 'srv.send', dependsOn: ['read'], args: { to: 'ops', body: { $ref: 'steps.read.output.text' } } },
  { id: 'sum', kind: 'llm', dependsOn: ['read'], args: { prompt: 'sum up' } },
  { id: 'check', kind: 'condition', dependsOn: ['read'], expression: 'steps.read.output.n > 1' },
]);

describe('why a step waits, in words', () => {
  // Step read has run: a held step that takes its output shows what it would send.
  const state = createState(plan, { read: { status: 'succeeded', attempt: 1, output: { text: 'the report' } } });
  const sends = 'It would send: {"to":"ops","body":"the report"}';
  const noTools = [] as ReturnType<typeof createTool>[];
  const noPins = new Map<string, PinnedTool>();

  it.each<[string, Hold, string]>([
    ['risk', { stepId: 'send', why: 'risk' }, `Step send (srv.send) is riskier than what was approved. ${sends}`],
    [
      'amended',
      { stepId: 'send', why: 'amended' },
      `Step send (srv.send) was added or changed by an amendment written after seeing tool outputs. ${sends}`,
    ],
    [
      'confirm',
      { stepId: 'send', why: 'confirm', args: { to: 'ops', body: 'secret' } },
      'Step send (srv.send) takes values from earlier steps that nobody has seen yet; it would send: {"to":"ops","body":"secret"}',
    ],
    ['risk, on an llm step', { stepId: 'sum', why: 'risk' }, 'Step sum (llm) is riskier than what was approved.'],
    [
      'risk, on a step not in the plan',
      { stepId: 'gone', why: 'risk' },
      'Step gone (?) is riskier than what was approved.',
    ],
  ])('a hold for %s', (_, hold, sentence) => {
    expect(describeHolds(state, [hold], noTools, noPins)).toEqual([sentence]);
  });

  it('cuts the arguments of a confirm hold to 1500 characters', () => {
    const body = 'x'.repeat(2000);
    const [sentence] = describeHolds(state, [{ stepId: 'send', why: 'confirm', args: { body } }], noTools, noPins);
    const json = JSON.stringify({ body });
    expect(sentence).toContain(
      `it would send: ${json.slice(0, 1500)}… [${json.length - 1500} more characters not shown]`,
    );
  });

  it('a changed definition shows what changed against the pin', () => {
    const pin = { tool: 'srv.send', fingerprint: 'fp-old', definition: createDefinition() };
    const now = createTool('srv.send', {
      fingerprint: 'fp-new',
      definition: createDefinition({ description: 'Sends mail to anyone.', annotations: { readOnlyHint: false } }),
    });
    expect(describeHolds(state, [{ stepId: 'send', why: 'changed' }], [now], new Map([['srv.send', pin]]))).toEqual([
      'The definition of srv.send changed since approval, so step send waits: ' +
        `description: "Echoes back the input." → "Sends mail to anyone."; annotation readOnlyHint: true → false. ${sends}`,
    ]);
  });

  it('a changed definition with no pin or no current tool to compare still says it changed', () => {
    const hold: Hold = { stepId: 'send', why: 'changed' };
    const pin = { tool: 'srv.send', fingerprint: 'fp-old', definition: createDefinition() };
    const expected = [
      `The definition of srv.send changed since approval, so step send waits: the definition changed. ${sends}`,
    ];
    expect(describeHolds(state, [hold], [createTool('srv.send')], noPins)).toEqual(expected);
    expect(describeHolds(state, [hold], noTools, new Map([['srv.send', pin]]))).toEqual(expected);
  });

  it('one sentence per hold, in order', () => {
    const holds: Hold[] = [
      { stepId: 'sum', why: 'amended' },
      { stepId: 'send', why: 'risk' },
    ];
    expect(describeHolds(state, holds, noTools, noPins)).toHaveLength(2);
    expect(describeHolds(state, holds, noTools, noPins)[1]).toMatch(/^Step send/);
  });
});

describe('a held step shows the values it would send, never a bare $ref', () => {
  const amended: Hold = { stepId: 'send', why: 'amended' };
  const held = (steps: Parameters<typeof createState>[1]) =>
    describeHolds(createState(plan, steps), [amended], [], new Map())[0];

  it('regression: the first card of an amendment written after seeing outputs showed {"$ref": ...}', () => {
    const sentence = held({ read: { status: 'succeeded', attempt: 1, output: { text: 'Dear ops, ...' } } });
    expect(sentence).toContain('It would send: {"to":"ops","body":"Dear ops, ..."}');
    expect(sentence).not.toContain('$ref');
  });

  it('a step whose upstream has not run yet says so, naming it', () => {
    expect(held({})).toContain('It takes values from step read, not run yet.');
    expect(held({ read: { status: 'running', attempt: 1 } })).toContain('It takes values from step read, not run yet.');
  });

  it('several upstream steps not run yet are named once each', () => {
    const p = createPlan([
      { id: 'x', tool: 'srv.read' },
      { id: 'y', tool: 'srv.read' },
      {
        id: 'z',
        tool: 'srv.send',
        dependsOn: ['x', 'y'],
        args: { a: { $ref: 'steps.x.output.a' }, b: { $ref: 'steps.y.output' }, c: { $ref: 'steps.x.output.c' } },
      },
    ]);
    const [sentence] = describeHolds(createState(p), [{ stepId: 'z', why: 'risk' }], [], new Map());
    expect(sentence).toBe(
      'Step z (srv.send) is riskier than what was approved. It takes values from steps x, y, not run yet.',
    );
  });

  it('arguments that cannot be filled in say why', () => {
    expect(held({ read: { status: 'succeeded', attempt: 1, output: { other: 1 } } })).toContain(
      'Its arguments cannot be filled in: steps.read.output.text: no key "text"',
    );
    expect(held({ read: { status: 'skipped', attempt: 0 } })).toContain(
      'Its arguments cannot be filled in: step read has no output',
    );
  });

  it('a step without references adds nothing: its card shows its arguments already', () => {
    const state = createState(plan);
    expect(describeHolds(state, [{ stepId: 'read', why: 'amended' }], [], new Map())).toEqual([
      'Step read (srv.read) was added or changed by an amendment written after seeing tool outputs.',
    ]);
  });

  it('long values are cut, and a value nested deeper than can be shown is named, not stringified', () => {
    const long = held({ read: { status: 'succeeded', attempt: 1, output: { text: 'y'.repeat(3000) } } });
    expect(long).toMatch(/It would send: \{"to":"ops","body":"y+… \[\d+ more characters not shown\]$/);
    let deep: Json = 'x';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(held({ read: { status: 'succeeded', attempt: 1, output: { text: deep } } })).toContain(
      'It would send: (a value nested more than 256 levels deep)',
    );
  });
});

describe('what a breakpoint shows', () => {
  const read = {
    status: 'succeeded' as const,
    attempt: 1,
    output: { content: [{ type: 'text', text: 'report.txt' }] },
  };

  it('before a step: the arguments it is about to send, with earlier outputs filled in', () => {
    const state = createState(plan, { read: { ...read, output: { text: 'the report' } } });
    expect(breakpointView(state, 'send', 'before')).toBe('{"to":"ops","body":"the report"}');
  });

  it('before a step whose arguments cannot be filled in: why', () => {
    const state = createState(plan, { read: { ...read, output: { other: 1 } } });
    expect(breakpointView(state, 'send', 'before')).toBe('steps.read.output.text: no key "text"');
  });

  it('before an llm step: its prompt', () => {
    expect(breakpointView(createState(plan), 'sum', 'before')).toBe('{"prompt":"sum up"}');
  });

  it('after a step: the text it returned', () => {
    expect(breakpointView(createState(plan, { read }), 'read', 'after')).toBe('report.txt');
  });

  it('after a step whose output has no text: the output as JSON', () => {
    const state = createState(plan, { read: { ...read, output: { n: 2 } } });
    expect(breakpointView(state, 'read', 'after')).toBe('{"n":2}');
  });
});

describe('which tools a person intervened on', () => {
  const running = { status: 'running' as const, attempt: 1 };
  const done = { status: 'succeeded' as const, attempt: 1, output: null };

  it.each<[string, Parameters<typeof createState>[1], string[]]>([
    ['the tools of the steps running', { read: done, send: running, sum: running }, ['srv.send']],
    ['the next step to start when none runs', {}, ['srv.read']],
    [
      'the tool a Stop has just cancelled, when read after the cancellation landed',
      { read: done, send: { status: 'cancelled', attempt: 1 } },
      ['srv.send'],
    ],
    ['the next pending step in plan order', { read: done }, ['srv.send']],
    ['none when the next step is not a tool', { read: done, send: done }, []],
    [
      'none when nothing runs or waits',
      { read: done, send: done, sum: done, check: { status: 'skipped', attempt: 0 } },
      [],
    ],
  ])('%s', (_, steps, tools) => {
    expect(interventionTools(createState(plan, steps))).toEqual(tools);
  });

  it('several running tool steps are all named', () => {
    const p = createPlan([
      { id: 'x', tool: 'srv.x' },
      { id: 'y', tool: 'srv.y' },
      { id: 'z', tool: 'srv.z' },
    ]);
    expect(interventionTools(createState(p, { x: running, z: running }))).toEqual(['srv.x', 'srv.z']);
  });
});
