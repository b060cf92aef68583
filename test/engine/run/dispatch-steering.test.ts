import { describe, expect, it } from 'vitest';
import { dispatchTransition, startDispatch } from '../../../src/engine/run/dispatch.ts';
import {
  createDispatchState,
  type DispatchEffect,
  type DispatchState,
} from '../../../src/engine/run/dispatch-state.ts';
import type { Breakpoint } from '../../../src/engine/plan/breakpoints.ts';
import type { StepPolicy } from '../../../src/engine/run/step-policies.ts';
import type { RiskLevel } from '../../../src/engine/types.ts';
import { checkRevision } from '../../../src/engine/plan/revise.ts';
import { createPlan } from '../fixtures.ts';

function setup(
  steps: unknown[],
  opts: { approvedRisk?: RiskLevel; risk?: Record<string, RiskLevel>; breakpoints?: Breakpoint[] } = {},
) {
  const plan = createPlan(steps);
  const policies = Object.fromEntries(
    plan.steps.map((s) => [
      s.id,
      {
        idempotent: false,
        timeoutMs: 1000,
        risk: opts.risk?.[s.id] ?? 'low',
        guardRefs: false,
        trustedRefFields: [],
      },
    ]),
  );
  return startDispatch(
    createDispatchState(plan, policies, {
      maxParallel: 4,
      maxAttempts: 1,
      approvedRisk: opts.approvedRisk ?? 'low',
      breakpoints: opts.breakpoints,
    }),
  );
}
const started = (effects: DispatchEffect[]) => effects.flatMap((e) => (e.type === 'startStep' ? [e.step.id] : []));
const ok = (state: DispatchState, stepId: string, output: unknown = { content: [] }) =>
  dispatchTransition(state, {
    type: 'stepSucceeded',
    stepId,
    attempt: state.steps[stepId]!.attempt,
    output: output as never,
  });
const chain = [
  { id: 'a', tool: 't.x' },
  { id: 'b', tool: 't.x', dependsOn: ['a'] },
  { id: 'c', tool: 't.x', dependsOn: ['b'] },
];

describe('dispatcher steering', () => {
  it('a breakpoint holds everything after its step and reports the step', () => {
    let t = setup(chain, { breakpoints: [{ stepId: 'a', when: 'after' }] });
    t = ok(t.state, 'a', { v: 1 });
    expect(t.effects).toContainEqual({ type: 'showBreakpoint', stepId: 'a', when: 'after' });
    expect(started(t.effects)).toEqual([]);
    expect(t.state).toMatchObject({ phase: 'paused', pausedBy: 'breakpoint', heldAt: 'a' });
    t = dispatchTransition(t.state, { type: 'resumeRequested' });
    expect(started(t.effects)).toEqual(['b']);
  });

  it('a breakpoint after the last step holds the run before it ends (it used to show and then complete at once)', () => {
    let t = setup(chain.slice(0, 1), { breakpoints: [{ stepId: 'a', when: 'after' }] });
    t = ok(t.state, 'a', { v: 1 });
    expect(t.effects).toContainEqual({ type: 'showBreakpoint', stepId: 'a', when: 'after' });
    expect(t.effects.some((e) => e.type === 'finishRun')).toBe(false);
    expect(t.state.phase).toBe('paused');
    t = dispatchTransition(t.state, { type: 'resumeRequested' });
    expect(t.effects).toEqual([{ type: 'finishRun', outcome: 'completed' }]);
  });

  it('a before-breakpoint holds the run as its step is about to start; resume starts it', () => {
    let t = setup(chain, { breakpoints: [{ stepId: 'b', when: 'before' }] });
    t = ok(t.state, 'a');
    expect(started(t.effects)).toEqual([]);
    expect(t.effects).toContainEqual({ type: 'showBreakpoint', stepId: 'b', when: 'before' });
    t = dispatchTransition(t.state, { type: 'resumeRequested' });
    expect(started(t.effects)).toEqual(['b']);
  });

  it('breakpoints can be set only on steps not yet started', () => {
    let t = setup(chain);
    t = dispatchTransition(t.state, { type: 'breakpointsSet', stepIds: ['a', 'b'], on: true });
    expect(t.state.breakpoints).toEqual([{ stepId: 'b', when: 'after' }]);
    t = dispatchTransition(t.state, { type: 'breakpointsSet', stepIds: ['b'], on: false });
    expect(t.state.breakpoints).toEqual([]);
  });

  it('taken suggestions set breakpoints before steps not yet started, keeping those after; the run holds there', () => {
    let t = setup(chain);
    t = dispatchTransition(t.state, { type: 'breakpointsSet', stepIds: ['b'], on: true });
    t = dispatchTransition(t.state, { type: 'breakpointsSet', stepIds: ['a', 'b'], on: true, when: 'before' });
    expect(t.state.breakpoints).toEqual([
      { stepId: 'b', when: 'after' },
      { stepId: 'b', when: 'before' },
    ]);
    t = ok(t.state, 'a');
    expect(started(t.effects)).toEqual([]);
    expect(t.state.heldAt).toBe('b');
  });

  it('while an amendment is planned nothing new starts and the run cannot end; the revision then runs', () => {
    let t = setup(chain);
    t = dispatchTransition(t.state, { type: 'amendStarted' });
    t = ok(t.state, 'a');
    expect(started(t.effects)).toEqual([]);
    const revised = createPlan([
      ...chain.slice(0, 2),
      { id: 'c', tool: 't.x', dependsOn: ['b'], args: { text: 'changed' } },
      { id: 'd', tool: 't.x', dependsOn: ['c'] },
    ]);
    const policies: Record<string, StepPolicy> = Object.fromEntries(
      revised.steps.map((s) => [
        s.id,
        { idempotent: false, timeoutMs: 1000, risk: 'low', guardRefs: false, trustedRefFields: [] },
      ]),
    );
    t = dispatchTransition(t.state, { type: 'planRevised', plan: revised, policies });
    expect(t.state.steps.a!.status).toBe('succeeded');
    expect(started(t.effects)).toEqual(['b']);
    t = ok(t.state, 'b');
    expect(t.effects.find((e) => e.type === 'startStep')).toMatchObject({
      step: { id: 'c' },
      args: { text: 'changed' },
    });
  });

  it('an amendment that fails lets the old plan go on', () => {
    let t = setup(chain);
    t = dispatchTransition(t.state, { type: 'amendStarted' });
    t = ok(t.state, 'a');
    t = dispatchTransition(t.state, { type: 'amendEnded' });
    expect(started(t.effects)).toEqual(['b']);
  });

  it('a step riskier than what was approved waits (others go on) until its risk is approved', () => {
    let t = setup(
      [
        { id: 'read', tool: 't.x' },
        { id: 'write', tool: 't.x' },
      ],
      { approvedRisk: 'low', risk: { write: 'high' } },
    );
    expect(started(t.effects)).toEqual(['read']);
    expect(t.effects).toContainEqual({ type: 'requestApproval', holds: [{ stepId: 'write', why: 'risk' }] });
    t = ok(t.state, 'read');
    expect(t.effects.some((e) => e.type === 'finishRun')).toBe(false);
    expect(t.effects.some((e) => e.type === 'showBreakpoint' || e.type === 'requestApproval')).toBe(false);
    t = dispatchTransition(t.state, { type: 'holdsApproved', risk: 'high' });
    expect(started(t.effects)).toEqual(['write']);
  });

  it('a revision may not change or drop a step that started', () => {
    const before = createPlan(chain);
    const changed = createPlan([{ id: 'a', tool: 't.x', args: { text: 'new' } }, ...chain.slice(1)]);
    const dropped = createPlan(chain.slice(1).map((s) => ({ ...s, dependsOn: [] })));
    expect(checkRevision(before, changed, new Set(['a']))).toEqual([
      'step a already ran (or is running) and cannot be changed',
    ]);
    expect(checkRevision(before, dropped, new Set(['a']))).toEqual([
      'step a already ran (or is running) and cannot be removed',
    ]);
    expect(checkRevision(before, changed, new Set())).toEqual([]);
  });
});

describe('dispatcher data-flow and amendment holds', () => {
  const guarded = (steps: unknown[], trusted: string[] = []) => {
    const plan = createPlan(steps);
    const policies: Record<string, StepPolicy> = Object.fromEntries(
      plan.steps.map((s) => [
        s.id,
        {
          idempotent: false,
          timeoutMs: 1000,
          risk: 'low',
          guardRefs: s.id === 'send',
          trustedRefFields: trusted,
        },
      ]),
    );
    return startDispatch(createDispatchState(plan, policies, { maxParallel: 4, maxAttempts: 1, approvedRisk: 'high' }));
  };
  const flow = [
    { id: 'read', tool: 't.x' },
    { id: 'send', tool: 't.y', args: { to: { $ref: 'steps.read.output.addr' }, body: 'hi' }, dependsOn: ['read'] },
  ];

  it('a guarded step fed by an earlier output waits with the exact values it would send, then sends them', () => {
    let t = guarded(flow);
    t = ok(t.state, 'read', { addr: 'mallory@evil.example' });
    expect(started(t.effects)).toEqual([]);
    expect(t.effects).toContainEqual({
      type: 'requestApproval',
      holds: [{ stepId: 'send', why: 'confirm', args: { to: 'mallory@evil.example', body: 'hi' } }],
    });
    t = dispatchTransition(t.state, { type: 'holdsApproved', risk: 'high' });
    expect(t.effects.find((e) => e.type === 'startStep')).toMatchObject({
      step: { id: 'send' },
      args: { to: 'mallory@evil.example', body: 'hi' },
    });
  });

  it('trusted fields need no confirmation', () => {
    let t = guarded(flow, ['to']);
    t = ok(t.state, 'read', { addr: 'team@example.com' });
    expect(started(t.effects)).toEqual(['send']);
  });

  it('a confirmation does not survive a rewrite of the step; steps an amendment adds can be held for approval', () => {
    let t = guarded(flow);
    t = ok(t.state, 'read', { addr: 'a@example.com' });
    t = dispatchTransition(t.state, { type: 'pauseRequested' });
    t = dispatchTransition(t.state, { type: 'holdsApproved', risk: 'high' });
    expect(t.state.confirmed).toEqual(['send']);
    const rewritten = createPlan([
      flow[0],
      { ...flow[1], args: { to: { $ref: 'steps.read.output.addr' }, body: 'changed' } },
      { id: 'extra', tool: 't.z', dependsOn: ['read'] },
    ]);
    t = dispatchTransition(t.state, {
      type: 'planRevised',
      plan: rewritten,
      policies: t.state.policies,
      approvalNeeded: ['extra'],
    });
    expect(t.state.confirmed).toEqual([]);
    expect(t.state.holds).toContainEqual({ stepId: 'extra', why: 'amended' });
  });

  it('an amended guarded step is shown with the values it would send, so one approval sends them (not a second hold)', () => {
    let t = guarded(flow);
    t = ok(t.state, 'read', { addr: 'a@example.com' });
    t = dispatchTransition(t.state, { type: 'amendStarted' });
    const rewritten = createPlan([flow[0], { ...flow[1], args: { ...flow[1]!.args, body: 'changed' } }]);
    t = dispatchTransition(t.state, {
      type: 'planRevised',
      plan: rewritten,
      policies: t.state.policies,
      approvalNeeded: ['send'],
    });
    expect(t.effects).toContainEqual({
      type: 'requestApproval',
      holds: [{ stepId: 'send', why: 'amended', args: { to: 'a@example.com', body: 'changed' } }],
    });
    t = dispatchTransition(t.state, { type: 'holdsApproved', risk: 'high' });
    expect(started(t.effects)).toEqual(['send']);
  });

  it('a start held by a Pause or Stop that came first is not sent: the step waits again and goes as the phase decides', () => {
    const t = ok(setup(chain).state, 'a');
    expect(started(t.effects)).toEqual(['b']);
    const held = (state: DispatchState) => dispatchTransition(state, { type: 'startHeld', stepId: 'b', attempt: 1 });

    // The Pause that held it reached the dispatcher: the step waits, and starts on Resume as the same attempt (the
    // held one was never written, never sent).
    const paused = held(dispatchTransition(t.state, { type: 'pauseRequested' }).state);
    expect(paused.state.steps.b).toEqual({ status: 'pending', attempt: 0 });
    expect(started(paused.effects)).toEqual([]);
    const resumed = dispatchTransition(paused.state, { type: 'resumeRequested' });
    expect(resumed.effects).toContainEqual(expect.objectContaining({ type: 'startStep', attempt: 1 }));

    // A Stop: the run ends with the step never started.
    const stopped = held(dispatchTransition(t.state, { type: 'stopRequested' }).state);
    expect(stopped.effects).toContainEqual({ type: 'finishRun', outcome: 'stopped' });
    expect(started(stopped.effects)).toEqual([]);

    // Still running here (the decision that held it was refused, or is not here yet): it is tried again.
    expect(started(held(t.state).effects)).toEqual(['b']);
    // A repeat for an attempt no longer running changes nothing.
    expect(held(paused.state).effects).toEqual([]);
  });
});
