import { describe, expect, it } from 'vitest';
import { dispatchTransition, startDispatch } from '../../../src/engine/run/dispatch.ts';
import {
  createDispatchState,
  type DispatchEffect,
  type DispatchState,
} from '../../../src/engine/run/dispatch-state.ts';
import { createPlan, createStepError } from '../fixtures.ts';

const policy = { idempotent: false, timeoutMs: 1000, risk: 'low' as const, guardRefs: false, trustedRefFields: [] };

function setup(
  steps: unknown[],
  opts: { maxParallel?: number; idempotent?: boolean; serverLimits?: Record<string, number>; writes?: string[] } = {},
) {
  const plan = createPlan(steps);
  const limitOf = (tool: string) => opts.serverLimits?.[tool.slice(0, tool.indexOf('.'))];
  const policies = Object.fromEntries(
    plan.steps.map((s) => {
      const limit = s.kind === 'tool' ? limitOf(s.tool) : undefined;
      const own = { ...policy, idempotent: opts.idempotent ?? false };
      if (limit !== undefined) return [s.id, { ...own, serverMaxConcurrency: limit }];
      // As policiesFor gives a tool that may write on a server without maxConcurrency.
      return [s.id, s.kind === 'tool' && opts.writes?.includes(s.tool) ? { ...own, serialWrite: true as const } : own];
    }),
  );
  return startDispatch(createDispatchState(plan, policies, { maxParallel: opts.maxParallel ?? 4, maxAttempts: 3 }));
}

const started = (effects: DispatchEffect[]) => effects.flatMap((e) => (e.type === 'startStep' ? [e.step.id] : []));
const ok = (state: DispatchState, stepId: string, output: unknown = { content: [] }) =>
  dispatchTransition(state, {
    type: 'stepSucceeded',
    stepId,
    attempt: state.steps[stepId]!.attempt,
    output: output as never,
  });

describe('dispatcher', () => {
  const diamond = [
    { id: 'a', tool: 't.x' },
    { id: 'b', tool: 't.x', dependsOn: ['a'] },
    { id: 'c', tool: 't.x', dependsOn: ['a'], args: { v: { $ref: 'steps.a.output.n' } } },
    { id: 'd', tool: 't.x', dependsOn: ['b', 'c'] },
  ];

  it('starts roots, then each step as soon as its own dependencies end, with resolved arguments', () => {
    let t = setup(diamond);
    expect(started(t.effects)).toEqual(['a']);
    t = ok(t.state, 'a', { n: 42 });
    expect(
      t.effects.filter((e) => e.type === 'startStep').map((e) => e.type === 'startStep' && [e.step.id, e.args]),
    ).toEqual([
      ['b', {}],
      ['c', { v: 42 }],
    ]);
    t = ok(t.state, 'b');
    expect(started(t.effects)).toEqual([]);
    t = ok(t.state, 'c');
    expect(started(t.effects)).toEqual(['d']);
    t = ok(t.state, 'd');
    expect(t.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'completed' });
  });

  it('does not wait for the rest of a layer', () => {
    let t = setup([
      { id: 'a', tool: 't.x' },
      { id: 'slow', tool: 't.x' },
      { id: 'b', tool: 't.x', dependsOn: ['a'] },
    ]);
    t = ok(t.state, 'a');
    expect(started(t.effects)).toEqual(['b']);
    expect(t.state.steps.slow!.status).toBe('running');
  });

  it('keeps within maxParallel', () => {
    let t = setup(
      [1, 2, 3, 4, 5].map((i) => ({ id: `s${i}`, tool: 't.x' })),
      { maxParallel: 2 },
    );
    expect(started(t.effects)).toEqual(['s1', 's2']);
    t = ok(t.state, 's1');
    expect(started(t.effects)).toEqual(['s3']);
  });

  it("keeps a server within its maxConcurrency: the rest wait, pending, and start as that server's calls end", () => {
    let t = setup(
      [
        ...[1, 2, 3, 4].map((i) => ({ id: `n${i}`, tool: 'narrow.x' })),
        ...[1, 2, 3].map((i) => ({ id: `w${i}`, tool: 'wide.x' })),
        { id: 'think', kind: 'llm', args: { prompt: 'summarise' } },
      ],
      { serverLimits: { narrow: 2 }, maxParallel: 16 },
    );
    // Other servers' steps and llm steps are not held up by the narrow server's limit.
    expect(started(t.effects)).toEqual(['n1', 'n2', 'w1', 'w2', 'w3', 'think']);
    expect([t.state.steps.n3!.status, t.state.steps.n4!.status]).toEqual(['pending', 'pending']);
    t = ok(t.state, 'w1');
    expect(started(t.effects)).toEqual([]);
    t = ok(t.state, 'n2');
    expect(started(t.effects)).toEqual(['n3']);
    t = dispatchTransition(t.state, { type: 'stepFailed', stepId: 'n1', attempt: 1, error: createStepError() });
    expect(started(t.effects)).toEqual([]);
    expect(t.state.phase).toBe('halting');
  });

  it('a retried step of a server at its limit waits for a slot like the others', () => {
    let t = setup(
      [1, 2, 3].map((i) => ({ id: `n${i}`, tool: 'narrow.x' })),
      { serverLimits: { narrow: 1 }, idempotent: true },
    );
    expect(started(t.effects)).toEqual(['n1']);
    const retryable = createStepError({ code: 'timeout', retryable: true });
    t = dispatchTransition(t.state, { type: 'stepFailed', stepId: 'n1', attempt: 1, error: retryable });
    // n1 goes back to waiting and, first in plan order, takes the server's one slot again.
    expect(
      t.effects.filter((e) => e.type === 'startStep').map((e) => e.type === 'startStep' && [e.step.id, e.attempt]),
    ).toEqual([['n1', 2]]);
    t = ok(t.state, 'n1');
    expect(started(t.effects)).toEqual(['n2']);
  });

  it('runs writes to a server without maxConcurrency one at a time, with its reads and other servers beside them', () => {
    let t = setup(
      [
        ...[1, 2, 3].map((i) => ({ id: `w${i}`, tool: 'memory.create_relations' })),
        ...[1, 2].map((i) => ({ id: `r${i}`, tool: 'memory.read_graph' })),
        { id: 'o1', tool: 'other.create' },
        { id: 'o2', tool: 'other.create' },
      ],
      { writes: ['memory.create_relations', 'other.create'], maxParallel: 16 },
    );
    expect(started(t.effects)).toEqual(['w1', 'r1', 'r2', 'o1']);
    t = ok(t.state, 'r1');
    expect(started(t.effects)).toEqual([]);
    t = ok(t.state, 'w1');
    expect(started(t.effects)).toEqual(['w2']);
    t = ok(t.state, 'o1');
    expect(started(t.effects)).toEqual(['o2']);
  });

  it('counts the limit against maxParallel too: the lower of the two holds', () => {
    const t = setup(
      [1, 2, 3, 4].map((i) => ({ id: `n${i}`, tool: 'narrow.x' })),
      { serverLimits: { narrow: 3 }, maxParallel: 2 },
    );
    expect(started(t.effects)).toEqual(['n1', 'n2']);
  });

  it('pauses before the next step starts and resumes from there', () => {
    let t = setup([
      { id: 'a', tool: 't.x' },
      { id: 'b', tool: 't.x', dependsOn: ['a'] },
    ]);
    t = dispatchTransition(t.state, { type: 'pauseRequested' });
    t = ok(t.state, 'a');
    expect(started(t.effects)).toEqual([]);
    expect(t.state.phase).toBe('paused');
    t = dispatchTransition(t.state, { type: 'resumeRequested' });
    expect(started(t.effects)).toEqual(['b']);
  });

  it('stop aborts steps in flight, starts nothing more, and keeps finished results', () => {
    let t = setup([
      { id: 'a', tool: 't.x' },
      { id: 'b', tool: 't.x' },
      { id: 'c', tool: 't.x', dependsOn: ['a', 'b'] },
    ]);
    t = ok(t.state, 'a', { kept: true });
    t = dispatchTransition(t.state, { type: 'stopRequested' });
    expect(t.effects).toEqual([{ type: 'abortStep', stepId: 'b', attempt: 1 }]);
    t = dispatchTransition(t.state, {
      type: 'stepFailed',
      stepId: 'b',
      attempt: 1,
      error: { code: 'cancelled', message: 'aborted', retryable: false },
    });
    expect(started(t.effects)).toEqual([]);
    expect(t.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'stopped' });
    expect(t.state.steps.a).toMatchObject({ status: 'succeeded', output: { kept: true } });
    expect(t.state.steps.b!.status).toBe('cancelled');
    expect(t.state.steps.c).toMatchObject({ status: 'skipped' });
  });

  it('retries only idempotent steps on retryable errors, then halts naming the step', () => {
    const timeout = { code: 'timeout' as const, message: 'timed out', retryable: true };
    let t = setup([{ id: 'a', tool: 't.x' }], { idempotent: true });
    t = dispatchTransition(t.state, { type: 'stepFailed', stepId: 'a', attempt: 1, error: timeout });
    expect(t.effects.find((e) => e.type === 'startStep')).toMatchObject({ attempt: 2 });
    t = dispatchTransition(t.state, { type: 'stepFailed', stepId: 'a', attempt: 2, error: timeout });
    t = dispatchTransition(t.state, { type: 'stepFailed', stepId: 'a', attempt: 3, error: timeout });
    expect(t.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'failed' });
    expect(t.state.haltedBy).toBe('a');

    let n = setup(
      [
        { id: 'a', tool: 't.x' },
        { id: 'b', tool: 't.x', dependsOn: ['a'] },
      ],
      { idempotent: false },
    );
    n = dispatchTransition(n.state, { type: 'stepFailed', stepId: 'a', attempt: 1, error: timeout });
    expect(started(n.effects)).toEqual([]);
    expect(n.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'failed' });
  });

  it('skips a failed optional step and its dependents, and carries on', () => {
    let t = setup([
      { id: 'opt', tool: 't.x', optional: true },
      { id: 'after', tool: 't.x', dependsOn: ['opt'] },
      { id: 'other', tool: 't.x' },
    ]);
    t = dispatchTransition(t.state, {
      type: 'stepFailed',
      stepId: 'opt',
      attempt: 1,
      error: { code: 'tool_error', message: 'no', retryable: false },
    });
    expect(t.state.steps.after!.status).toBe('skipped');
    t = ok(t.state, 'other');
    expect(t.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'completed' });
  });

  it('a condition selects its branch; the other branch is skipped and reported', () => {
    let t = setup([
      { id: 'a', tool: 't.x' },
      {
        id: 'cond',
        kind: 'condition',
        expression: 'steps.a.output.n > 10',
        dependsOn: ['a'],
        ifTrue: ['big'],
        ifFalse: ['small'],
      },
      { id: 'big', tool: 't.x', dependsOn: ['cond'] },
      { id: 'small', tool: 't.x', dependsOn: ['cond'] },
    ]);
    t = ok(t.state, 'a', { n: 11 });
    expect(started(t.effects)).toEqual(['big']);
    expect(t.state.steps.small).toMatchObject({ status: 'skipped', note: 'skipped: condition cond was true' });
  });

  it('a reference that cannot be resolved fails the step with the reason', () => {
    let t = setup([
      { id: 'a', tool: 't.x' },
      { id: 'b', tool: 't.x', dependsOn: ['a'], args: { v: { $ref: 'steps.a.output.missing' } } },
    ]);
    t = ok(t.state, 'a', { other: 1 });
    expect(t.state.steps.b!.error).toEqual({
      code: 'reference_failed',
      message: 'steps.a.output.missing: no key "missing"',
      retryable: false,
    });
    expect(t.state.outcome).toBe('failed');
  });

  it('ignores events for attempts that are no longer current (a late result after a retry)', () => {
    const t = setup([{ id: 'a', tool: 't.x' }], { idempotent: true });
    const late = dispatchTransition(t.state, { type: 'stepSucceeded', stepId: 'a', attempt: 7, output: null });
    expect(late.state).toBe(t.state);
    expect(late.effects).toEqual([]);
  });
});
