/**
 * Forgiving parsing on the early-start path: the planner's first answer streams, each complete step goes through the
 * early-start gate to a real dispatcher, and a step written with a null for a key it may leave out, a trailing comma
 * or a tool named without its server must start while the answer is still streaming, and stay started once the whole
 * answer is read.
 */
import { describe, expect, it } from 'vitest';
import { writePlan } from '../../../src/engine/flows/planner.ts';
import type { Step } from '../../../src/engine/plan/plan-schema.ts';
import type { LlmRequest, LlmResponse } from '../../../src/engine/ports.ts';
import { dispatchTransition, startDispatch } from '../../../src/engine/run/dispatch.ts';
import type { DispatchEffect, DispatchState } from '../../../src/engine/run/dispatch-state.ts';
import {
  createEarlyStart,
  createStreamingDispatch,
  earlyStartTransition,
  type EarlyStartEffect,
  type EarlyStartState,
  type EarlyStartTransition,
} from '../../../src/engine/run/early-start.ts';
import type { ToolInfo } from '../../../src/engine/types.ts';
import { createTool } from '../fixtures.ts';

const pathArgs = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const readOnlyClosed = { readOnlyHint: true, openWorldHint: false };
const tools: ToolInfo[] = [
  createTool('fs.read_text_file', { annotations: readOnlyClosed, inputSchema: pathArgs }),
  createTool('fs.list_directory', { annotations: readOnlyClosed, inputSchema: pathArgs }),
  createTool('everything.echo', { annotations: readOnlyClosed }),
];

type Effect = DispatchEffect | EarlyStartEffect;

/**
 * A planner streaming one answer in pieces of `size` characters, the steps it hands on going through the gate to a
 * dispatcher as the run's early start does; `startedWhileStreaming` are the steps started before the answer ended.
 */
function streamingRun(answer: string, size: number) {
  let gate: EarlyStartState = createEarlyStart('risky');
  let dispatch: DispatchState = startDispatch(createStreamingDispatch({ maxParallel: 4, maxAttempts: 3 })).state;
  let streaming = true;
  const startedWhileStreaming: string[] = [];
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
  const llm = {
    complete(req: LlmRequest): Promise<LlmResponse> {
      for (let i = 0; i < answer.length; i += size) req.onText?.(answer.slice(i, i + size));
      streaming = false;
      return Promise.resolve({ model: 'm', text: answer, usage: { inputTokens: 10, outputTokens: 10 } });
    },
  };
  const onStep = (step: Step) => {
    const effects = apply(earlyStartTransition(gate, { type: 'stepArrived', step }, { tools, dispatch }));
    for (const e of effects) if (e.type === 'startStep' && streaming) startedWhileStreaming.push(e.step.id);
  };
  return {
    startedWhileStreaming,
    waiting: () => gate.waiting,
    async plan() {
      const planned = await writePlan(
        llm,
        { request: 'read', tools },
        { maxRepairs: 0, streaming: { onStep, refused: () => [] } },
      );
      const plan = planned.ok ? planned : { ok: false as const, error: planned.error };
      return {
        planned,
        effects: apply(earlyStartTransition(gate, { type: 'planFinished', plan }, { tools, dispatch })),
      };
    },
  };
}

describe('steps start while the plan streams, read as forgivingly as the whole plan', () => {
  it('starts a full step written with "dependsOn": null and "description": null, and keeps it at the end', async () => {
    const answer = JSON.stringify({
      steps: [
        { id: 'a', kind: 'tool', tool: 'fs.list_directory', args: { path: '/' }, dependsOn: null, description: null },
        { id: 'b', kind: 'tool', tool: 'fs.read_text_file', args: { path: '/x' }, dependsOn: ['a'], optional: null },
      ],
      summary: 'List, then read',
      needsTools: true,
      rationale: null,
    });
    const run = streamingRun(answer, 9);
    const { planned, effects } = await run.plan();
    expect(run.startedWhileStreaming).toEqual(['a']);
    expect(run.waiting()).toEqual({});
    expect(planned.ok && planned.value.plan.steps.map((s) => [s.id, s.dependsOn, s.description])).toEqual([
      ['a', [], ''],
      ['b', ['a'], ''],
    ]);
    expect(effects.filter((e) => e.type === 'stopStarted')).toEqual([]);
    expect(effects).toContainEqual({ type: 'continueRun', started: ['a'] });
  });

  it('starts a compact step naming its tool without the server, after a trailing comma, in a fence', async () => {
    const answer =
      'Here is the plan:\n```json\n{"steps":[{"tool":"list_directory","args":{"path":"/",},},' +
      '{"tool":"read_text_file","args":{"path":"/x"},"note":null},],"summary":"Two reads",}\n```';
    const run = streamingRun(answer, 5);
    const { planned, effects } = await run.plan();
    expect(run.startedWhileStreaming).toEqual(['s1', 's2']);
    expect(planned.ok && planned.value.plan.steps.map((s) => (s.kind === 'tool' ? s.tool : s.kind))).toEqual([
      'fs.list_directory',
      'fs.read_text_file',
    ]);
    expect(effects).toContainEqual({ type: 'continueRun', started: ['s1', 's2'] });
  });

  it('starts every call of a fan-out once its list is read, and the steps after it under the ids of their places', async () => {
    const answer = JSON.stringify({
      steps: [
        { tool: 'fs.read_text_file', each: [{ path: '/a' }, { path: '/b' }, { path: '/c' }] },
        { tool: 'everything.echo', args: { message: { $ref: 's2.content[0].text' } } },
        { tool: 'fs.list_directory', args: { path: '/' } },
      ],
      summary: 'Read three, echo one',
    });
    const run = streamingRun(answer, 6);
    const { planned, effects } = await run.plan();
    expect(run.startedWhileStreaming).toEqual(['s1', 's2', 's3', 's5']);
    expect(planned.ok && planned.value.plan.steps.map((s) => [s.id, s.dependsOn])).toEqual([
      ['s1', []],
      ['s2', []],
      ['s3', []],
      ['s4', ['s2']],
      ['s5', []],
    ]);
    // What started while streaming is the plan as read whole: nothing is stopped.
    expect(effects.filter((e) => e.type === 'stopStarted')).toEqual([]);
    expect(effects).toContainEqual({ type: 'continueRun', started: ['s1', 's2', 's3', 's5'] });
  });

  it('reads the whole answer when a brace in the prose before it stopped the stream; nothing started early', async () => {
    const answer = 'I will read the {path} you gave:\n{"steps":[{"tool":"fs.read_text_file","args":{"path":"/x"}}]}';
    const run = streamingRun(answer, 7);
    const { planned, effects } = await run.plan();
    expect(run.startedWhileStreaming).toEqual([]);
    expect(planned.ok && planned.value.plan.steps.map((s) => s.id)).toEqual(['s1']);
    expect(effects).toContainEqual({ type: 'continueRun', started: [] });
  });
});
