import { describe, expect, it } from 'vitest';
import { stepSchema } from '../../../src/engine/plan/plan-schema.ts';
import { createPlanStream } from '../../../src/engine/plan/plan-stream.ts';
import { validatePlan } from '../../../src/engine/plan/validate-plan.ts';
import { dispatchTransition, startDispatch } from '../../../src/engine/run/dispatch.ts';
import type { DispatchEffect, DispatchState } from '../../../src/engine/run/dispatch-state.ts';
import {
  createEarlyStart,
  createStreamingDispatch,
  earlyStartTransition,
  reviewNeeded,
  startsEarly,
  type EarlyStartEffect,
  type EarlyStartState,
  type EarlyStartTransition,
} from '../../../src/engine/run/early-start.ts';
import { describeHolds } from '../../../src/engine/run/holds.ts';
import { policiesFor } from '../../../src/engine/run/step-policies.ts';
import { toPlanCard } from '../../../src/engine/run/plan-card.ts';
import type { Json, ReviewPreference, ToolInfo } from '../../../src/engine/types.ts';
import { createPlan, createStepError, createTool } from '../fixtures.ts';

const pathArgs = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const readOnlyClosed = { readOnlyHint: true, openWorldHint: false };
const TOOLS: ToolInfo[] = [
  createTool('fs.read', { annotations: readOnlyClosed, inputSchema: pathArgs }),
  createTool('fs.list', { annotations: readOnlyClosed, inputSchema: pathArgs }),
  createTool('web.fetch', { annotations: { readOnlyHint: true, openWorldHint: true } }),
  createTool('db.query', { annotations: { readOnlyHint: true } }),
  createTool('fs.write', { annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } }),
  createTool('fs.delete', { annotations: { openWorldHint: false } }),
  createTool('fs.stat', { annotations: readOnlyClosed, policy: { allowed: true, timeoutMs: 1000, risk: 'medium' } }),
  createTool('vault.read', {
    annotations: readOnlyClosed,
    policy: { allowed: true, timeoutMs: 1000, sensitive: true },
  }),
  createTool('fs.hidden', { annotations: readOnlyClosed, policy: { allowed: false, timeoutMs: 1000 } }),
];

type Effect = DispatchEffect | EarlyStartEffect;

/**
 * A run whose plan streams in: steps arrive through the gate, whose dispatcher events go to a real dispatcher, and
 * tool outcomes go to the dispatcher, as the run driver would do. Effects are collected as the flow would see them.
 */
function createStreamingRun(preference: ReviewPreference = 'risky', tools: readonly ToolInfo[] = TOOLS) {
  let gate: EarlyStartState = createEarlyStart(preference);
  let dispatch: DispatchState = startDispatch(createStreamingDispatch({ maxParallel: 4, maxAttempts: 3 })).state;
  const raw: unknown[] = [];
  const apply = (t: EarlyStartTransition): Effect[] => {
    gate = t.gate;
    const effects: Effect[] = [...t.effects];
    for (const event of t.dispatch) {
      const next = dispatchTransition(dispatch, event);
      dispatch = next.state;
      effects.push(...next.effects);
    }
    return effects;
  };
  const send = (event: Parameters<typeof dispatchTransition>[1]): Effect[] => {
    const next = dispatchTransition(dispatch, event);
    dispatch = next.state;
    return next.effects;
  };
  return {
    get gate() {
      return gate;
    },
    get dispatch() {
      return dispatch;
    },
    arrive(step: Record<string, unknown>): Effect[] {
      raw.push(step);
      const full = stepSchema.parse(step);
      return apply(earlyStartTransition(gate, { type: 'stepArrived', step: full }, { tools, dispatch }));
    },
    succeed(stepId: string, output: Json = { content: [] }): Effect[] {
      return send({ type: 'stepSucceeded', stepId, attempt: dispatch.steps[stepId]?.attempt ?? 0, output });
    },
    fail(stepId: string): Effect[] {
      const error = createStepError({ code: 'tool_error', retryable: false, message: 'no such file' });
      return send({ type: 'stepFailed', stepId, attempt: dispatch.steps[stepId]?.attempt ?? 0, error });
    },
    /** The answer ended: the whole plan is checked as the planner flow checks it, and the gate decides. */
    finish(): Effect[] {
      const v = validatePlan(createPlan(raw), tools);
      const plan = v.ok ? v : { ok: false as const, error: v.error.join('\n') };
      return apply(earlyStartTransition(gate, { type: 'planFinished', plan }, { tools, dispatch }));
    },
    send,
  };
}

const started = (effects: Effect[]) => effects.flatMap((e) => (e.type === 'startStep' ? [e.step.id] : []));
const ofType = <T extends Effect['type']>(effects: Effect[], type: T) =>
  effects.filter((e): e is Extract<Effect, { type: T }> => e.type === type);

describe('early start while the plan streams', () => {
  it('starts a read-only, closed-world step as soon as it arrives, and the run cannot end while the plan streams', () => {
    const run = createStreamingRun();
    const effects = run.arrive({ id: 'a', tool: 'fs.read', args: { path: '/etc/hosts' } });
    expect(ofType(effects, 'startStep')).toMatchObject([
      { step: { id: 'a' }, attempt: 1, args: { path: '/etc/hosts' } },
    ]);
    const ended = run.succeed('a');
    expect(ended.map((e) => e.type)).toEqual(['recordStepEnd']);
    expect(run.dispatch.phase).toBe('running');
  });

  it('a step whose dependencies have not ended waits, and starts once they succeed, with their output', () => {
    const run = createStreamingRun();
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    const b = { id: 'b', tool: 'fs.read', dependsOn: ['a'], args: { path: { $ref: 'steps.a.output.first' } } };
    expect(started(run.arrive(b))).toEqual([]);
    expect(run.dispatch.steps.b?.status).toBe('pending');
    const after = run.succeed('a', { first: '/readme' });
    expect(ofType(after, 'startStep')).toMatchObject([{ step: { id: 'b' }, args: { path: '/readme' } }]);
  });

  it('a step whose dependency failed never starts: it is skipped, and does not count as started', () => {
    const run = createStreamingRun();
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' }, optional: true });
    run.arrive({ id: 'b', tool: 'fs.read', dependsOn: ['a'], args: { path: '/x' } });
    expect(started(run.fail('a'))).toEqual([]);
    expect(run.dispatch.steps.b?.status).toBe('skipped');
    const effects = run.finish();
    expect(ofType(effects, 'continueRun')).toEqual([{ type: 'continueRun', started: ['a'] }]);
    expect(effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'completed' });
  });

  it('a step that arrives before the step it depends on starts once that one is let in and has succeeded', () => {
    const run = createStreamingRun();
    expect(started(run.arrive({ id: 'b', tool: 'fs.read', dependsOn: ['a'], args: { path: '/x' } }))).toEqual([]);
    expect(run.gate.waiting.b).toBe('it depends on a, which has not arrived or cannot start early');
    expect(started(run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } }))).toEqual(['a']);
    expect(started(run.succeed('a'))).toEqual(['b']);
  });

  it('review "all" starts nothing early, and the whole plan then waits for review with nothing run', () => {
    const run = createStreamingRun('all');
    expect(started(run.arrive({ id: 'a', tool: 'fs.read', args: { path: '/x' } }))).toEqual([]);
    expect(run.finish()).toContainEqual({ type: 'holdForReview', ran: [], running: [], waiting: ['a'] });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an open-world read-only tool', { tool: 'web.fetch' }, 'its tool web.fetch is not read-only and closed-world'],
    ['a tool with no open-world hint', { tool: 'db.query' }, 'its tool db.query is not read-only and closed-world'],
    ['a tool that writes', { tool: 'fs.write' }, 'its tool fs.write is not read-only and closed-world'],
    ['a tool with no hints at all', { tool: 'fs.delete' }, 'its tool fs.delete is not read-only and closed-world'],
    [
      'a read-only tool the operator rates medium',
      { tool: 'fs.stat' },
      'its tool fs.stat is not read-only and closed-world',
    ],
    [
      'a read-only tool the operator marks sensitive',
      { tool: 'vault.read' },
      'its tool vault.read is not read-only and closed-world',
    ],
    ['a tool the operator does not allow', { tool: 'fs.hidden' }, 'its tool fs.hidden is not connected or not allowed'],
    ['an unknown tool', { tool: 'fs.nope' }, 'its tool fs.nope is not connected or not allowed'],
    [
      'arguments that do not fit',
      { tool: 'fs.read', args: { path: 7 } },
      'its arguments do not fit its tool: argument path must be string',
    ],
    [
      'a missing required argument',
      { tool: 'fs.read', args: {} },
      "its arguments do not fit its tool: arguments must have required property 'path'",
    ],
    [
      'an llm step',
      { kind: 'llm', args: { prompt: 'hi' } },
      'an llm step spends tokens, so it waits for the whole plan',
    ],
    [
      'a condition',
      { kind: 'condition', expression: '1 == 1', ifTrue: [] },
      'a condition chooses between later steps, so it waits for the whole plan',
    ],
  ])('does not start %s early', (_, step, why) => {
    const run = createStreamingRun('none');
    expect(started(run.arrive({ id: 'x', args: { path: '/x' }, ...step }))).toEqual([]);
    expect(run.gate.waiting.x).toBe(why);
    expect(run.dispatch.plan.steps).toEqual([]);
  });

  it('does not start a read-only step that refers to a step outside its dependencies, or depends on one that waits', () => {
    const run = createStreamingRun();
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    run.arrive({ id: 'b', tool: 'fs.read', args: { path: { $ref: 'steps.a.output.x' } } });
    expect(run.gate.waiting.b).toBe('it refers to a, which is not upstream of it');
    run.arrive({ id: 'w', tool: 'fs.write', args: {} });
    run.arrive({ id: 'c', tool: 'fs.read', dependsOn: ['w'], args: { path: '/x' } });
    expect(run.gate.waiting.c).toBe('it depends on w, which has not arrived or cannot start early');
    expect(Object.keys(run.gate.admitted)).toEqual(['a']);
  });

  it('once an id is used twice the plan cannot be valid: nothing more starts early', () => {
    const run = createStreamingRun();
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    expect(started(run.arrive({ id: 'a', tool: 'fs.read', args: { path: '/x' } }))).toEqual([]);
    expect(started(run.arrive({ id: 'b', tool: 'fs.read', args: { path: '/y' } }))).toEqual([]);
    expect(run.gate.waiting.a).toBe('its id is used twice');
  });

  it('past 100 steps, nothing more starts early', () => {
    const run = createStreamingRun();
    for (let i = 1; i <= 100; i++) run.arrive({ id: `w${i}`, tool: 'fs.write', args: {} });
    expect(started(run.arrive({ id: 'late', tool: 'fs.read', args: { path: '/x' } }))).toEqual([]);
    expect(run.gate.open).toBe(false);
  });

  it('a step cut in the middle of an argument is not started until the rest of it arrives', () => {
    const run = createStreamingRun();
    const stream = createPlanStream();
    const startedPerDelta = ['{"steps":[{"id":"a","tool":"fs.read","args":{"path":"/et', 'c/hosts"}', '}', ']}'].map(
      (delta) => {
        const read = stream.push(delta);
        if (!read.ok) throw new Error(read.error);
        return read.value.flatMap((s) => started(run.arrive(s.value as Record<string, unknown>)));
      },
    );
    expect(startedPerDelta).toEqual([[], [], ['a'], []]);
  });
});

describe('when the whole plan has arrived', () => {
  it('a risky step after read-only ones that ran: it waits for review, and the card shows those steps done', () => {
    const run = createStreamingRun('risky');
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    run.arrive({ id: 'b', tool: 'fs.read', args: { path: '/x' } });
    run.succeed('a');
    run.succeed('b');
    expect(started(run.arrive({ id: 'c', tool: 'fs.write', dependsOn: ['a', 'b'], args: {} }))).toEqual([]);
    const effects = run.finish();
    expect(ofType(effects, 'holdForReview')).toEqual([
      { type: 'holdForReview', ran: ['a', 'b'], running: [], waiting: ['c'] },
    ]);
    expect(started(effects)).toEqual([]);
    expect(ofType(effects, 'requestApproval')).toEqual([
      { type: 'requestApproval', holds: [{ stepId: 'c', why: 'review' }] },
    ]);
    expect(describeHolds(run.dispatch, run.dispatch.holds, TOOLS, new Map())).toEqual([
      'Step c (fs.write) waits for your review of the whole plan.',
    ]);
    const v = validatePlan(run.dispatch.plan, TOOLS);
    if (!v.ok) throw new Error(v.error.join());
    const card = toPlanCard('r1', 0, v.value, {
      needsReview: true,
      amendmentsLeft: 2,
      requester: { id: 'u', channel: 'console' },
      progress: run.dispatch.steps,
    });
    expect(card.steps.map((s) => [s.id, s.status])).toEqual([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
      ['c', undefined],
    ]);
  });

  it('after review, approving the held steps lets them run, and the run ends', () => {
    const run = createStreamingRun('risky');
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    run.succeed('a');
    run.arrive({ id: 'c', tool: 'fs.write', dependsOn: ['a'], args: {} });
    run.finish();
    expect(started(run.send({ type: 'holdsApproved', risk: 'medium' }))).toEqual(['c']);
    expect(run.succeed('c').at(-1)).toEqual({ type: 'finishRun', outcome: 'completed' });
  });

  it('a revision under that first review (an amendment) keeps every step not started waiting, even a read-only one', () => {
    const run = createStreamingRun('risky');
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    run.succeed('a');
    run.arrive({ id: 'c', tool: 'fs.write', dependsOn: ['a'], args: {} });
    run.finish();
    const revised = createPlan([
      { id: 'a', tool: 'fs.list', args: { path: '/' } },
      { id: 'b', tool: 'fs.read', args: { path: '/x' } },
      { id: 'c', tool: 'fs.write', dependsOn: ['a', 'b'], args: { path: '/y' } },
    ]);
    const effects = run.send({ type: 'planRevised', plan: revised, policies: policiesFor(revised, TOOLS) });
    expect(started(effects)).toEqual([]);
    expect(ofType(effects, 'requestApproval')).toEqual([
      {
        type: 'requestApproval',
        holds: [
          { stepId: 'b', why: 'review' },
          { stepId: 'c', why: 'review' },
        ],
      },
    ]);
    expect(started(run.send({ type: 'holdsApproved', risk: 'medium' }))).toEqual(['b']);
  });

  it('a step still running when review is needed goes on and is shown as running; nothing else starts', () => {
    const run = createStreamingRun('risky');
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    run.arrive({ id: 'b', tool: 'fs.read', dependsOn: ['a'], args: { path: '/x' } });
    run.arrive({ id: 'c', tool: 'fs.write', args: {} });
    const effects = run.finish();
    expect(ofType(effects, 'holdForReview')).toEqual([
      { type: 'holdForReview', ran: [], running: ['a'], waiting: ['b', 'c'] },
    ]);
    expect(started(run.succeed('a'))).toEqual([]);
    expect(run.dispatch.steps.b?.status).toBe('pending');
  });

  it('a plan that needs no review goes on: the rest starts, within what the preference allows', () => {
    const run = createStreamingRun('none');
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    run.arrive({ id: 'w', tool: 'fs.write', args: {} });
    run.arrive({ id: 's', kind: 'llm', args: { prompt: 'sum up' } });
    const effects = run.finish();
    expect(ofType(effects, 'continueRun')).toEqual([{ type: 'continueRun', started: ['a'] }]);
    expect(started(effects)).toEqual(['w', 's']);
    expect(run.dispatch.approvedRisk).toBe('medium');
    run.succeed('a');
    run.succeed('w');
    expect(run.succeed('s', { text: 'ok' }).at(-1)).toEqual({ type: 'finishRun', outcome: 'completed' });
  });

  it.each<[string, Record<string, unknown>[], RegExp]>([
    [
      'a duplicate id',
      [
        { id: 'a', tool: 'fs.list', args: { path: '/' } },
        { id: 'a', tool: 'fs.read', args: { path: '/x' } },
      ],
      /step a: the id is used twice/,
    ],
    [
      'a later step that refers to a missing id',
      [
        { id: 'a', tool: 'fs.list', args: { path: '/' } },
        { id: 'b', tool: 'fs.write', dependsOn: ['ghost'], args: {} },
      ],
      /step b: depends on ghost, which is not in the plan/,
    ],
    [
      'a cycle among later steps',
      [
        { id: 'a', tool: 'fs.list', args: { path: '/' } },
        { id: 'b', tool: 'fs.read', dependsOn: ['c'], args: { path: '/x' } },
        { id: 'c', tool: 'fs.read', dependsOn: ['b'], args: { path: '/y' } },
      ],
      /the steps b, c form a dependency cycle/,
    ],
  ])(
    'a plan that turns out invalid after a step started (%s): what started is stopped, and why is said',
    (_, steps, why) => {
      const run = createStreamingRun('none');
      const startedEarly = steps.flatMap((s) => started(run.arrive(s)));
      expect(startedEarly).toEqual(['a']);
      const effects = run.finish();
      const stop = ofType(effects, 'stopStarted');
      expect(stop).toHaveLength(1);
      expect(stop[0]?.reason).toMatch(why);
      expect(stop[0]?.started).toEqual(['a']);
      expect(ofType(effects, 'abortStep')).toEqual([{ type: 'abortStep', stepId: 'a', attempt: 1 }]);
      expect(started(effects)).toEqual([]);
      const cancelled = createStepError({ code: 'cancelled', message: 'stopped', retryable: false });
      const end = run.send({ type: 'stepFailed', stepId: 'a', attempt: 1, error: cancelled });
      expect(end.at(-1)).toEqual({ type: 'finishRun', outcome: 'stopped' });
    },
  );

  it('an invalid plan keeps what already finished and starts nothing more', () => {
    const run = createStreamingRun('none');
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    run.succeed('a');
    run.arrive({ id: 'b', tool: 'fs.read', args: { path: 3 } });
    const effects = run.finish();
    expect(ofType(effects, 'stopStarted')[0]?.started).toEqual(['a']);
    expect(effects.at(-1)).toEqual({ type: 'finishRun', outcome: 'stopped' });
    expect(run.dispatch.steps.a?.status).toBe('succeeded');
  });

  it('a plan whose whole form differs from a step that started is stopped', () => {
    const run = createStreamingRun('none');
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    const other = createPlan([{ id: 'a', tool: 'fs.list', args: { path: '/other' } }]);
    const v = validatePlan(other, TOOLS);
    if (!v.ok) throw new Error(v.error.join());
    const t = earlyStartTransition(
      run.gate,
      { type: 'planFinished', plan: v },
      { tools: TOOLS, dispatch: run.dispatch },
    );
    expect(t.effects).toEqual([
      {
        type: 'stopStarted',
        reason: 'step a started before the plan was complete, and the complete plan does not hold it as it started',
        started: ['a'],
      },
    ]);
    expect(t.dispatch).toEqual([{ type: 'stopRequested' }]);
  });

  it('Stop while the plan is still being written aborts what started and ends the run', () => {
    const run = createStreamingRun('none');
    run.arrive({ id: 'a', tool: 'fs.list', args: { path: '/' } });
    expect(run.send({ type: 'stopRequested' })).toEqual([{ type: 'abortStep', stepId: 'a', attempt: 1 }]);
    const cancelled = createStepError({ code: 'cancelled', message: 'stopped', retryable: false });
    expect(run.send({ type: 'stepFailed', stepId: 'a', attempt: 1, error: cancelled }).at(-1)).toEqual({
      type: 'finishRun',
      outcome: 'stopped',
    });
  });
});

describe('the rules the gate shares', () => {
  it('review is needed exactly as a plan offered whole would need it', () => {
    const table = (['all', 'risky', 'none'] as const).map((p) =>
      (['low', 'medium', 'high'] as const).map((r) => reviewNeeded(p, r)),
    );
    expect(table).toEqual([
      [true, true, true],
      [false, true, true],
      [false, false, true],
    ]);
    expect(reviewNeeded('none', 'low', true)).toBe(true);
  });

  it('only allowed, read-only, closed-world tools the operator left low and not sensitive start early', () => {
    expect(TOOLS.filter(startsEarly).map((t) => t.name)).toEqual(['fs.read', 'fs.list']);
  });
});
