/**
 * Issue 28: a step on a server that connects per person, whose requester has no working connection, waits (it never
 * fails the run): found before the call (`connectionNeeded`, nothing stored as sent) or refused by the server
 * (`not_connected`, the attempt recorded as failed). The requester is asked once per wait; `connected` lets it start
 * with no new plan; Stop, Pause and an amendment treat it as any step not started.
 */
import { describe, expect, it } from 'vitest';
import { dispatchTransition, startDispatch } from '../../../src/engine/run/dispatch.ts';
import { createDispatchState, type DispatchState } from '../../../src/engine/run/dispatch-state.ts';
import { restoreDispatch } from '../../../src/engine/run/restore.ts';
import type { StepError } from '../../../src/engine/types.ts';
import { createPlan } from '../fixtures.ts';

const policy = { idempotent: false, timeoutMs: 1000, risk: 'low' as const, guardRefs: false, trustedRefFields: [] };
const refused: StepError = {
  code: 'not_connected',
  message: 'MCP server "tracker" needs the requester\'s own connection, and there is none that works.',
  retryable: true,
};

function setup() {
  const plan = createPlan([
    { id: 'mine', tool: 'tracker.whoami' },
    { id: 'also', tool: 'tracker.list' },
    { id: 'local', tool: 'files.read' },
    { id: 'after', tool: 'files.write', dependsOn: ['mine'] },
  ]);
  const policies = Object.fromEntries(plan.steps.map((s) => [s.id, { ...policy, perPerson: true as const }]));
  return { plan, policies, t: startDispatch(createDispatchState(plan, policies, { maxParallel: 4, maxAttempts: 3 })) };
}

const needed = (state: DispatchState, stepId: string) =>
  dispatchTransition(state, {
    type: 'connectionNeeded',
    stepId,
    attempt: state.steps[stepId]!.attempt,
    server: 'tracker',
  });

describe('a step waiting for its requester to connect', () => {
  it('found before the call: back to pending, nothing recorded, the requester asked once for the server', () => {
    let t = needed(setup().t.state, 'mine');
    expect(t.effects).toEqual([{ type: 'requestConnection', stepId: 'mine', server: 'tracker' }]);
    expect(t.state.steps.mine).toEqual({ status: 'pending', attempt: 0 });
    // A second step on the same server waits too, without asking again.
    t = needed(t.state, 'also');
    expect(t.effects).toEqual([]);
    expect(t.state.connecting).toEqual({ mine: 'tracker', also: 'tracker' });
    // Other steps go on, and the run does not end while one waits.
    t = dispatchTransition(t.state, { type: 'stepSucceeded', stepId: 'local', attempt: 1, output: {} });
    expect(t.effects.map((e) => e.type)).toEqual(['recordStepEnd']);
    expect(t.state.phase).toBe('running');
    // Connected: both start, as the next attempt of the same plan.
    t = dispatchTransition(t.state, { type: 'connected', server: 'tracker' });
    expect(t.effects).toEqual([
      expect.objectContaining({
        type: 'startStep',
        step: expect.objectContaining({ id: 'mine' }) as unknown,
        attempt: 1,
      }),
      expect.objectContaining({
        type: 'startStep',
        step: expect.objectContaining({ id: 'also' }) as unknown,
        attempt: 1,
      }),
    ]);
    expect(t.state.connecting).toEqual({});
  });

  it('refused by the server: the attempt is recorded failed, the step waits (the run neither halts nor pauses)', () => {
    const { t: started } = setup();
    const t = dispatchTransition(started.state, { type: 'stepFailed', stepId: 'mine', attempt: 1, error: refused });
    expect(t.effects).toEqual([
      {
        type: 'recordStepEnd',
        stepId: 'mine',
        attempt: 1,
        status: 'failed',
        detail: `${refused.message} It waits for the connection.`,
        error: refused,
      },
      { type: 'requestConnection', stepId: 'mine', server: 'tracker' },
    ]);
    expect(t.state).toMatchObject({ phase: 'running', haltedBy: null });
    const after = dispatchTransition(t.state, { type: 'connected', server: 'tracker' });
    expect(after.effects).toEqual([expect.objectContaining({ type: 'startStep', attempt: 2 })]);
  });

  it('another server connecting starts nothing; Pause holds the start after connecting until Resume', () => {
    let t = needed(setup().t.state, 'mine');
    expect(dispatchTransition(t.state, { type: 'connected', server: 'other' }).effects).toEqual([]);
    t = dispatchTransition(t.state, { type: 'pauseRequested' });
    t = dispatchTransition(t.state, { type: 'connected', server: 'tracker' });
    expect(t.effects).toEqual([]);
    t = dispatchTransition(t.state, { type: 'resumeRequested' });
    expect(t.effects).toEqual([expect.objectContaining({ type: 'startStep', attempt: 1 })]);
  });

  it('Stop while waiting ends the run: the waiting step never ran, its dependant neither', () => {
    let t = needed(setup().t.state, 'mine');
    t = needed(t.state, 'also');
    t = dispatchTransition(t.state, { type: 'stopRequested' });
    t = dispatchTransition(t.state, { type: 'stepSucceeded', stepId: 'local', attempt: 1, output: {} });
    expect(t.state).toMatchObject({ phase: 'done', outcome: 'stopped' });
    expect(t.state.steps.mine).toMatchObject({ status: 'pending', note: 'never ran' });
    expect(t.effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'stopped' });
  });

  it('after a restart, a step refused for want of a connection runs (or waits) again rather than failing the run', () => {
    const { plan, policies } = setup();
    const at = new Date();
    const restored = restoreDispatch(
      plan,
      policies,
      [
        {
          stepId: 'mine',
          attempt: 1,
          revision: 0,
          status: 'failed',
          args: {},
          output: null,
          error: refused,
          startedAt: at,
          endedAt: at,
        },
      ],
      'running',
      { maxParallel: 4, maxAttempts: 3, approvedRisk: 'high', breakpoints: [] },
    );
    expect(restored.state.steps.mine).toEqual({ status: 'pending', attempt: 1 });
    expect(restored.state.phase).toBe('running');
  });
});
