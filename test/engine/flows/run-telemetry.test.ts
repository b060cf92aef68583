/**
 * What the engine tells the `RunTelemetry` port: a run's end once, when it is written (its report, or a terminal move
 * that owes none; not a move that lost its race, nor one whose report follows), and each model call of a run,
 * answered or failed, with its tokens and times, and each quick call from when it was sent.
 */
import { expect, it } from 'vitest';
import { meteredLlm } from '../../../src/engine/flows/metered-llm.ts';
import { QuickAnswers } from '../../../src/engine/flows/quick-answer.ts';
import { withRunEnds } from '../../../src/engine/flows/run-ends.ts';
import type { Ledgers, LlmRequest, RunStore } from '../../../src/engine/ports.ts';
import type {
  ModelCallTelemetry,
  RunEndTelemetry,
  RunTelemetry,
  StepAttemptTelemetry,
} from '../../../src/engine/run-telemetry.ts';
import type { StewardDeps } from '../../../src/engine/flows/deps.ts';
import type { LlmResponse, RunHistory, RunRecords, StepLog } from '../../../src/engine/ports.ts';
import { createTool } from '../fixtures.ts';

function told() {
  const ends: RunEndTelemetry[] = [];
  const calls: ModelCallTelemetry[] = [];
  const telemetry: RunTelemetry = {
    runEnded: (e) => ends.push(e),
    modelCalled: (c) => calls.push(c),
    stepAttemptEnded: () => undefined,
  };
  return { ends, calls, telemetry };
}

const at = new Date('2026-12-01T10:00:00Z');

it("tells a run's end when its report is stored or it ends owing none, not when it lost the race or a report follows", async () => {
  const { ends, telemetry } = told();
  let wins = true;
  const inner = {
    transition: () => Promise.resolve(wins),
    storeReport: (_id: string, report: string) => Promise.resolve(report),
    getRun: () => Promise.resolve(null),
  } as unknown as RunStore;
  const store = withRunEnds(inner, telemetry, () => at);
  await store.transition('r1', ['running'], 'completed', { at, reportDue: true });
  await store.transition('r1', ['running'], 'paused', { at });
  expect(ends).toEqual([]);
  expect(await store.storeReport('r1', 'done', 'completed', at)).toBe('done');
  await store.transition('r2', ['planning'], 'failed', { at });
  wins = false;
  await store.transition('r3', ['planning'], 'cancelled', { at });
  expect(ends).toEqual([
    { runId: 'r1', status: 'completed', at },
    { runId: 'r2', status: 'failed', at },
  ]);
  // The rest of the store is the store's own.
  expect(await store.getRun('r1')).toBeNull();
});

it('hands a report on with the settlement of the call that wrote it (the store settles the call with the report)', async () => {
  const { telemetry } = told();
  const given: unknown[][] = [];
  const inner = {
    storeReport: (...args: unknown[]) => (given.push(args), Promise.resolve('done')),
  } as unknown as RunStore;
  const store = withRunEnds(inner, telemetry, () => at);
  const settle = {
    op: 'op-1',
    runId: 'r1',
    actor: { id: 'U1', channel: 'slack' },
    day: '2026-12-01',
    delta: -5,
    usage: null,
  };
  await store.storeReport('r1', 'done', 'completed', at, 3, settle);
  expect(given).toEqual([['r1', 'done', 'completed', at, 3, settle]]);
});

it('tells each model call of a run, answered or failed, with its model, tokens and times', async () => {
  const { calls, telemetry } = told();
  const store = {
    reserveTokens: () => Promise.resolve({ ok: true, cap: 100 }),
    settleTokens: () => Promise.resolve(),
  } as unknown as Ledgers;
  let second = 0;
  const clock = () => new Date(at.getTime() + 1000 * second++);
  let fail = false;
  const llm = {
    complete: (r: LlmRequest) =>
      fail
        ? Promise.reject(new Error('the model is down'))
        : Promise.resolve({ text: 'ok', model: `answered-${r.role}`, usage: { inputTokens: 12, outputTokens: 3 } }),
  };
  const metered = meteredLlm({ llm, store, clock, telemetry }, 'run-1', { channel: 'console', id: 'ada' });
  const request: LlmRequest = { role: 'synthesizer', system: 's', messages: [{ role: 'user', content: 'u' }] };
  await metered.complete(request);
  fail = true;
  await expect(metered.complete({ ...request, model: 'catalog-name' })).rejects.toThrow('the model is down');
  expect(calls).toHaveLength(2);
  expect(calls[0]).toMatchObject({ runId: 'run-1', role: 'synthesizer', model: 'answered-synthesizer' });
  expect(calls[0]).toMatchObject({ inputTokens: 12, outputTokens: 3 });
  expect(calls[0]?.endedAt.getTime()).toBeGreaterThan(calls[0]?.startedAt.getTime() ?? Infinity);
  expect(calls[1]).toMatchObject({ model: 'catalog-name', inputTokens: 0, error: 'the model is down' });
});

it("tells each quick call from when it was sent: its round's write is Steward's own time, not the tool's", async () => {
  const attempts: StepAttemptTelemetry[] = [];
  const telemetry: RunTelemetry = {
    runEnded: () => undefined,
    modelCalled: () => undefined,
    stepAttemptEnded: (a) => attempts.push(a),
  };
  // Each reading of the clock is a second later, so what happens between two readings shows in the times told.
  let second = 0;
  const clock = () => new Date(at.getTime() + 1000 * second++);
  let written: Date | undefined;
  const store = {
    listRevisions: () => Promise.resolve([]),
    // The round's write (the one that saves its revision), not its ends'.
    recordSteps: (w: { revision?: unknown }) => {
      if (w.revision) written = clock();
      return Promise.resolve({ startsHeld: false });
    },
    setRoute: () => Promise.resolve(),
    settleTokens: () => Promise.resolve(),
  } as unknown as RunRecords & StepLog & RunHistory & Ledgers;
  const tool = createTool('crm.lookup', { annotations: { readOnlyHint: true, openWorldHint: false } });
  const tools = {
    listTools: () => [tool],
    callTool: () => Promise.resolve({ ok: true as const, value: { content: [{ type: 'text', text: 'Ada: 1' }] } }),
  } as unknown as StewardDeps['tools'];
  const replies: LlmResponse[] = [
    { text: '', toolCalls: [{ id: 'c1', name: 'crm__lookup', args: { text: 'ada' } }], model: 'm', usage: usage() },
    { text: 'Ada: 1', model: 'm', usage: usage() },
  ];
  const llm = { complete: () => Promise.resolve(replies.shift()!) };
  const quick = new QuickAnswers({ tools, clock, log: () => undefined, telemetry, store }, () => llm, {
    maxTurns: 4,
    maxTokens: 12_000,
  });
  const run = { id: 'run-1', requester: { id: 'ada', channel: 'console' } };
  expect(await quick.answer(run, 'Look up Ada', new AbortController().signal)).toEqual({
    route: 'quick',
    text: 'Ada: 1',
  });
  expect(attempts).toHaveLength(1);
  expect(attempts[0]).toMatchObject({ runId: 'run-1', stepId: 'quick:1', tool: 'crm.lookup', outcome: 'ok' });
  expect(attempts[0]?.startedAt.getTime()).toBeGreaterThan(written?.getTime() ?? Infinity);
  expect(attempts[0]?.endedAt.getTime()).toBeGreaterThan(attempts[0]?.startedAt.getTime() ?? Infinity);
});

function usage() {
  return { inputTokens: 10, outputTokens: 2 };
}
