/**
 * Issue 11, item 3: a call that was sent and then lost with its server (`interrupted`) is treated like a crash
 * mid-call. A tool that is not idempotent may have acted: the run pauses and a person decides; an idempotent one is
 * tried again as before.
 */
import { describe, expect, it } from 'vitest';
import { dispatchTransition, startDispatch } from '../../../src/engine/run/dispatch.ts';
import { createDispatchState, type DispatchState } from '../../../src/engine/run/dispatch-state.ts';
import type { StepError } from '../../../src/engine/types.ts';
import { createPlan } from '../fixtures.ts';

const policy = { idempotent: false, timeoutMs: 1000, risk: 'low' as const, guardRefs: false, trustedRefFields: [] };
const lost: StepError = {
  code: 'interrupted',
  message:
    'MCP server "mail" went away while mail.send was running (its process exited); the tool may have acted already.',
  retryable: true,
};

function setup(idempotent: boolean) {
  const plan = createPlan([
    { id: 'send', tool: 'mail.send' },
    { id: 'other', tool: 'mail.read' },
    { id: 'after', tool: 'mail.read', dependsOn: ['send'] },
  ]);
  const policies = Object.fromEntries(plan.steps.map((s) => [s.id, { ...policy, idempotent }]));
  return startDispatch(createDispatchState(plan, policies, { maxParallel: 4, maxAttempts: 3 }));
}

const fail = (state: DispatchState, stepId: string, error: StepError) =>
  dispatchTransition(state, { type: 'stepFailed', stepId, attempt: state.steps[stepId]!.attempt, error });

describe('a call lost with its server', () => {
  it('on a tool that is not idempotent: recorded as not retryable, the step waits, the run pauses and says so', () => {
    const t = fail(setup(false).state, 'send', lost);
    const held = { ...lost, retryable: false };
    expect(t.effects).toEqual([
      {
        type: 'recordStepEnd',
        stepId: 'send',
        attempt: 1,
        status: 'failed',
        detail: `${lost.message} The run is paused: resume to run it again, or stop.`,
        error: held,
      },
      { type: 'holdInterrupted', stepId: 'send', error: held },
    ]);
    expect(t.state).toMatchObject({ phase: 'paused', pausedBy: 'user', haltedBy: null });
    expect(t.state.steps.send).toEqual({ status: 'pending', attempt: 1, error: held });
  });

  it('nothing is sent again until a person resumes; then the step runs as attempt 2, even past the retry limit', () => {
    let t = fail(setup(false).state, 'send', lost);
    // The step running alongside ends while the run is held: nothing new starts and the run does not end.
    t = dispatchTransition(t.state, { type: 'stepSucceeded', stepId: 'other', attempt: 1, output: {} });
    expect(t.effects.map((e) => e.type)).toEqual(['recordStepEnd']);
    t = dispatchTransition(t.state, { type: 'resumeRequested' });
    expect(t.effects).toEqual([
      expect.objectContaining({
        type: 'startStep',
        step: expect.objectContaining({ id: 'send' }) as unknown,
        attempt: 2,
      }),
    ]);
    // Lost again, on a third attempt and a fourth: each time a person decides, never the retry policy.
    t = fail(t.state, 'send', lost);
    t = fail(dispatchTransition(t.state, { type: 'resumeRequested' }).state, 'send', lost);
    t = dispatchTransition(t.state, { type: 'resumeRequested' });
    expect(t.effects).toEqual([expect.objectContaining({ type: 'startStep', attempt: 4 })]);
    t = dispatchTransition(t.state, { type: 'stopRequested' });
    expect(t.effects.map((e) => e.type)).toEqual(['abortStep']);
  });

  it('while the run is already paused by a person, it stays paused and the person is still told', () => {
    let t = dispatchTransition(setup(false).state, { type: 'pauseRequested' });
    t = fail(t.state, 'send', lost);
    expect(t.effects.map((e) => e.type)).toEqual(['recordStepEnd', 'holdInterrupted']);
    expect(t.state.phase).toBe('paused');
  });

  it('while the run is stopping, it is cancelled like any call in flight', () => {
    let t = dispatchTransition(setup(false).state, { type: 'stopRequested' });
    t = fail(t.state, 'send', lost);
    expect(t.state.steps.send).toMatchObject({ status: 'cancelled' });
    expect(t.effects.some((e) => e.type === 'holdInterrupted')).toBe(false);
  });

  it('while the run is halting for another failure, it fails, not retryable, and the run ends', () => {
    let t = fail(setup(false).state, 'other', { code: 'tool_error', message: 'boom', retryable: false });
    t = fail(t.state, 'send', lost);
    expect(t.state.steps.send).toEqual({ status: 'failed', attempt: 1, error: { ...lost, retryable: false } });
    expect(t.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'failed' });
  });

  it('on an idempotent tool: retried as an unavailable server, as before, and stored so (restore reads interrupted as "ask")', () => {
    const t = fail(setup(true).state, 'send', lost);
    const retried = { ...lost, code: 'server_unavailable' };
    expect(t.effects).toEqual([
      {
        type: 'recordStepEnd',
        stepId: 'send',
        attempt: 1,
        status: 'failed',
        detail: `${lost.message}; retrying`,
        error: retried,
      },
      expect.objectContaining({ type: 'startStep', attempt: 2 }),
    ]);
    expect(t.state.phase).toBe('running');
  });
});
