import { describe, expect, it } from 'vitest';
import type { Breakpoint } from '../../../src/engine/plan/breakpoints.ts';
import type { Plan } from '../../../src/engine/plan/plan-schema.ts';
import type { StoredStepAttempt } from '../../../src/engine/ports.ts';
import { startDispatch } from '../../../src/engine/run/dispatch.ts';
import type { DispatchEffect } from '../../../src/engine/run/dispatch-state.ts';
import { endedDispatch, restoreDispatch } from '../../../src/engine/run/restore.ts';
import type { StepPolicy } from '../../../src/engine/run/step-policies.ts';
import type { RiskLevel, RunStatus } from '../../../src/engine/types.ts';
import { createAttempt, createPlan, createPolicies, createStepError } from '../fixtures.ts';

const options = { maxParallel: 4, maxAttempts: 3, approvedRisk: 'high' as RiskLevel, breakpoints: [] as Breakpoint[] };

function restore(
  plan: Plan,
  attempts: StoredStepAttempt[],
  opts: { status?: RunStatus; policies?: Record<string, StepPolicy> } & Partial<typeof options> = {},
) {
  const { status = 'running', policies = createPolicies(plan), ...rest } = opts;
  return restoreDispatch(plan, policies, attempts, status, { ...options, ...rest });
}

const started = (effects: DispatchEffect[]) =>
  effects.flatMap((e) => (e.type === 'startStep' ? [[e.step.id, e.attempt, e.args]] : []));

const chain = createPlan([
  { id: 'a', tool: 'srv.read' },
  { id: 'b', tool: 'srv.write', dependsOn: ['a'], args: { text: { $ref: 'steps.a.output.text' } } },
]);

describe('restoring a run after a restart', () => {
  it('never reruns a finished step: its output is kept and feeds the next step', () => {
    const r = restore(chain, [createAttempt('a', { status: 'succeeded', output: { text: 'from before' } })]);
    expect(r.state.steps.a).toEqual({ status: 'succeeded', attempt: 1, output: { text: 'from before' } });
    expect(r).toMatchObject({ interrupted: [], retried: [] });
    expect(started(startDispatch(r.state).effects)).toEqual([['b', 1, { text: 'from before' }]]);
  });

  it('leaves steps that never started pending, to run as usual', () => {
    const r = restore(chain, []);
    expect(r.state.steps).toEqual({ a: { status: 'pending', attempt: 0 }, b: { status: 'pending', attempt: 0 } });
    expect(r.state.phase).toBe('running');
    expect(started(startDispatch(r.state).effects)).toEqual([['a', 1, {}]]);
  });

  it('runs a step that was in flight again when its tool is idempotent, as the next attempt', () => {
    const plan = createPlan([{ id: 'a', tool: 'srv.read' }]);
    const r = restore(plan, [createAttempt('a', { status: 'running', endedAt: null })], {
      policies: createPolicies(plan, { idempotent: true }),
    });
    expect(r).toMatchObject({ retried: ['a'], interrupted: [] });
    expect(r.state.steps.a).toEqual({ status: 'pending', attempt: 1 });
    expect(r.state.phase).toBe('running');
    expect(started(startDispatch(r.state).effects)).toEqual([['a', 2, {}]]);
  });

  it('pauses the run for a person when a step in flight is not safe to repeat', () => {
    const plan = createPlan([
      { id: 'a', tool: 'srv.write' },
      { id: 'b', tool: 'srv.read' },
    ]);
    const attempts = [createAttempt('a', { status: 'running' }), createAttempt('b', { status: 'running' })];
    const r = restore(plan, attempts, { policies: createPolicies(plan, {}, { b: { idempotent: true } }) });
    expect(r).toMatchObject({ interrupted: ['a'], retried: ['b'] });
    expect(r.state.steps.a).toEqual({ status: 'pending', attempt: 1 });
    expect(r.state).toMatchObject({ phase: 'paused', pausedBy: 'user' });
    expect(started(startDispatch(r.state).effects)).toEqual([]);
  });

  it.each([
    { case: 'retryable, idempotent, attempts left', retryable: true, idempotent: true, attempt: 2, status: 'pending' },
    {
      case: 'retryable, idempotent, last attempt used',
      retryable: true,
      idempotent: true,
      attempt: 3,
      status: 'failed',
    },
    { case: 'not retryable', retryable: false, idempotent: true, attempt: 1, status: 'failed' },
    { case: 'retryable, tool not idempotent', retryable: true, idempotent: false, attempt: 1, status: 'failed' },
  ])('a failed attempt ($case) is owed a retry only when the dispatcher would have retried it', (row) => {
    const plan = createPlan([{ id: 'a', tool: 'srv.read' }]);
    const error = createStepError({ retryable: row.retryable });
    const r = restore(plan, [createAttempt('a', { status: 'failed', attempt: row.attempt, error })], {
      policies: createPolicies(plan, { idempotent: row.idempotent }),
    });
    expect(r.state.steps.a).toMatchObject({ status: row.status, attempt: row.attempt });
    expect(r.state.phase).toBe(row.status === 'pending' ? 'running' : 'halting');
    expect(started(startDispatch(r.state).effects)).toEqual(
      row.status === 'pending' ? [['a', row.attempt + 1, {}]] : [],
    );
  });

  it('a failed step that is not optional halts the run, naming the first such step; the run ends failed', () => {
    const plan = createPlan([
      { id: 'a', tool: 'srv.write' },
      { id: 'b', tool: 'srv.write' },
      { id: 'c', tool: 'srv.write' },
    ]);
    const error = createStepError({ code: 'tool_error', message: 'disk full', retryable: false });
    const r = restore(plan, [
      createAttempt('a', { status: 'failed', error }),
      createAttempt('b', { status: 'failed', error }),
    ]);
    expect(r.state).toMatchObject({ phase: 'halting', haltedBy: 'a' });
    expect(r.state.steps.a).toEqual({ status: 'failed', attempt: 1, error });
    const t = startDispatch(r.state);
    expect(started(t.effects)).toEqual([]);
    expect(t.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'failed' });
  });

  it('a failed optional step does not halt the run: the other steps go on', () => {
    const plan = createPlan([
      { id: 'opt', tool: 'srv.write', optional: true },
      { id: 'other', tool: 'srv.write' },
    ]);
    const error = createStepError({ retryable: false });
    const r = restore(plan, [createAttempt('opt', { status: 'failed', error })]);
    expect(r.state).toMatchObject({ phase: 'running', haltedBy: null });
    expect(r.state.steps.opt!.status).toBe('failed');
    expect(started(startDispatch(r.state).effects)).toEqual([['other', 1, {}]]);
  });

  it.each([
    { status: 'running', phase: 'running', pausedBy: null, starts: [['a', 1, {}]] },
    { status: 'paused', phase: 'paused', pausedBy: 'user', starts: [] },
    { status: 'stopping', phase: 'stopping', pausedBy: null, starts: [] },
  ] as const)('a run stored as $status comes back $phase', ({ status, phase, pausedBy, starts }) => {
    const r = restore(chain, [], { status });
    expect(r.state).toMatchObject({ phase, pausedBy });
    const t = startDispatch(r.state);
    expect(started(t.effects)).toEqual(starts);
    if (status === 'stopping') expect(t.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'stopped' });
  });

  it('a stopping run with a step in flight stays stopping and ends stopped instead of waiting for a person', () => {
    const plan = createPlan([{ id: 'a', tool: 'srv.write' }]);
    const r = restore(plan, [createAttempt('a', { status: 'running' })], { status: 'stopping' });
    expect(r.interrupted).toEqual(['a']);
    expect(r.state.phase).toBe('stopping');
    expect(startDispatch(r.state).effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'stopped' });
  });

  const first = createAttempt('a', {
    attempt: 1,
    status: 'failed',
    error: createStepError({ message: 'first try timed out' }),
  });
  const second = createAttempt('a', { attempt: 2, status: 'succeeded', output: { text: 'second try' } });
  it.each([
    { order: 'oldest first', attempts: [first, second] },
    { order: 'newest first', attempts: [second, first] },
  ])('the latest attempt of a step decides what it is ($order)', ({ attempts }) => {
    const plan = createPlan([{ id: 'a', tool: 'srv.read' }]);
    const r = restore(plan, attempts, { policies: createPolicies(plan, { idempotent: true }) });
    expect(r.state.steps.a).toEqual({ status: 'succeeded', attempt: 2, output: { text: 'second try' } });
    expect(r.state.phase).toBe('running');
  });

  it('keeps the breakpoints: the run still holds after the step it was set on', () => {
    const breakpoints: Breakpoint[] = [{ stepId: 'a', when: 'after' }];
    const r = restore(chain, [], { breakpoints });
    expect(r.state.breakpoints).toEqual(breakpoints);
  });

  it('keeps a before breakpoint: the step is shown, not started', () => {
    const r = restore(chain, [], { breakpoints: [{ stepId: 'a', when: 'before' }] });
    const t = startDispatch(r.state);
    expect(started(t.effects)).toEqual([]);
    expect(t.effects).toContainEqual({ type: 'showBreakpoint', stepId: 'a', when: 'before' });
  });

  it.each([
    { approvedRisk: 'low', held: true },
    { approvedRisk: 'high', held: false },
  ] as const)(
    'keeps the approved risk ($approvedRisk): a high-risk step waits for approval: $held',
    ({ approvedRisk, held }) => {
      const plan = createPlan([{ id: 'a', tool: 'srv.write' }]);
      const r = restore(plan, [], { approvedRisk, policies: createPolicies(plan, { risk: 'high' }) });
      expect(r.state.approvedRisk).toBe(approvedRisk);
      const t = startDispatch(r.state);
      expect(started(t.effects)).toEqual(held ? [] : [['a', 1, {}]]);
      expect(t.effects.some((e) => e.type === 'requestApproval')).toBe(held);
    },
  );

  // Regression: a second restart used to read recovery's `interrupted` record as a real failure and halt the run,
  // losing the Resume it had promised.
  it('a step interrupted by an earlier restart and not yet run again still waits for a person', () => {
    const plan = createPlan([{ id: 'a', tool: 'srv.write' }]);
    const error = createStepError({
      code: 'interrupted',
      message: 'Steward stopped while this step was running',
      retryable: false,
    });
    const r = restore(plan, [createAttempt('a', { status: 'failed', error })], { status: 'paused' });
    expect(r.state.steps.a!.status).toBe('pending');
    expect(r.state).toMatchObject({ phase: 'paused', haltedBy: null });
  });
});

describe('an interrupted attempt counts toward the attempt limit', () => {
  const one = createPlan([{ id: 'a', tool: 'srv.read' }]);
  const idempotent = createPolicies(one, { idempotent: true });
  const inFlight = (attempt: number) => [createAttempt('a', { attempt, status: 'running', endedAt: null })];

  it('an idempotent step interrupted with attempts left runs again as the next attempt, up to the last', () => {
    const r = restore(one, inFlight(2), { policies: idempotent });
    expect(r).toMatchObject({ retried: ['a'], interrupted: [], exhausted: [] });
    expect(started(startDispatch(r.state).effects)).toEqual([['a', 3, {}]]);
  });

  it.each([
    { maxAttempts: 3, attempt: 3 },
    { maxAttempts: 1, attempt: 1 },
    { maxAttempts: 3, attempt: 4 },
  ])(
    'an idempotent step interrupted on attempt $attempt of $maxAttempts ends failed and halts the run',
    ({ maxAttempts, attempt }) => {
      const r = restore(one, inFlight(attempt), { policies: idempotent, maxAttempts });
      expect(r).toMatchObject({ exhausted: ['a'], retried: [], interrupted: [] });
      expect(r.state.steps.a).toEqual({
        status: 'failed',
        attempt,
        error: {
          code: 'interrupted',
          message: `Steward stopped while attempt ${attempt} of ${maxAttempts} was running; its attempts are used up, so it is not run again`,
          retryable: false,
        },
      });
      expect(r.state).toMatchObject({ phase: 'halting', haltedBy: 'a' });
      const t = startDispatch(r.state);
      expect(started(t.effects)).toEqual([]);
      expect(t.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'failed' });
    },
  );

  it('an optional step interrupted on its last attempt ends failed without halting: the other steps go on', () => {
    const plan = createPlan([
      { id: 'opt', tool: 'srv.read', optional: true },
      { id: 'other', tool: 'srv.read' },
    ]);
    const r = restore(plan, [createAttempt('opt', { attempt: 3, status: 'running', endedAt: null })], {
      policies: createPolicies(plan, { idempotent: true }),
    });
    expect(r.exhausted).toEqual(['opt']);
    expect(r.state.steps.opt).toMatchObject({ status: 'failed', attempt: 3, error: { code: 'interrupted' } });
    expect(r.state).toMatchObject({ phase: 'running', haltedBy: null });
    expect(started(startDispatch(r.state).effects)).toEqual([['other', 1, {}]]);
  });

  it('a step that is not idempotent, interrupted on its last attempt, still waits for a person', () => {
    const r = restore(one, inFlight(3), { policies: createPolicies(one, { idempotent: false }) });
    expect(r).toMatchObject({ interrupted: ['a'], retried: [], exhausted: [] });
    expect(r.state.steps.a).toEqual({ status: 'pending', attempt: 3 });
    expect(r.state).toMatchObject({ phase: 'paused', pausedBy: 'user', haltedBy: null });
    expect(started(startDispatch(r.state).effects)).toEqual([]);
  });

  it('the failed step is named first when an earlier step failed too: the first failure in plan order halts', () => {
    const plan = createPlan([
      { id: 'a', tool: 'srv.read' },
      { id: 'b', tool: 'srv.read' },
    ]);
    const attempts = [
      createAttempt('a', { attempt: 3, status: 'running', endedAt: null }),
      createAttempt('b', { status: 'failed', error: createStepError({ retryable: false }) }),
    ];
    const r = restore(plan, attempts, { policies: createPolicies(plan, { idempotent: true }) });
    expect(r.state).toMatchObject({ phase: 'halting', haltedBy: 'a' });
    expect(r.state.steps.b!.status).toBe('failed');
  });
});

describe('the final state of a run that ended, for a report written after a restart', () => {
  const plan = createPlan([
    { id: 'a', tool: 'srv.read' },
    { id: 'b', tool: 'srv.read', dependsOn: ['a'] },
    { id: 'c', tool: 'srv.read', dependsOn: ['b'] },
    { id: 'd', tool: 'srv.read' },
  ]);
  const timeout = createStepError({ message: 'timed out', retryable: true });

  it('each step as its latest attempt left it; steps with no attempt never ran; nothing is owed a retry', () => {
    const final = endedDispatch(
      plan,
      createPolicies(plan, { idempotent: true }),
      [
        createAttempt('a', { status: 'succeeded', output: { text: 'A' } }),
        createAttempt('b', { attempt: 1, status: 'failed', error: timeout }),
        createAttempt('b', { attempt: 2, status: 'failed', error: timeout }),
        createAttempt('c', { status: 'skipped' }),
      ],
      'failed',
      options,
    );
    expect(final).toMatchObject({ phase: 'done', outcome: 'failed' });
    expect(final.steps).toEqual({
      a: { status: 'succeeded', attempt: 1, output: { text: 'A' } },
      b: { status: 'failed', attempt: 2, error: timeout },
      c: { status: 'skipped', attempt: 1 },
      d: { status: 'pending', attempt: 0, note: 'never ran' },
    });
  });

  it('an attempt whose end was never stored is shown as failed, not as still running', () => {
    const final = endedDispatch(
      plan,
      createPolicies(plan),
      [createAttempt('d', { status: 'running' })],
      'stopped',
      options,
    );
    expect(final.outcome).toBe('stopped');
    expect(final.steps.d).toEqual({
      status: 'failed',
      attempt: 1,
      error: { code: 'interrupted', message: 'its end was never recorded', retryable: false },
    });
  });
});
