/**
 * The order of the quick loop's writes, on which its crash story rests (quick-answer.ts): every call of a round is
 * on record as started before any is sent; the round's ends are one write, made beside the next model call; and
 * the loop returns (answered, or handed to the planner) only once its ends, its route and its settlements are
 * stored, a failure of any of them being the loop's.
 */
import { expect, it } from 'vitest';
import { QuickAnswers, type QuickOutcome } from '../../../src/engine/flows/quick-answer.ts';
import type { StewardDeps } from '../../../src/engine/flows/deps.ts';
import type {
  Ledgers,
  LlmResponse,
  RunHistory,
  RunRecords,
  StepAttemptWrite,
  StepLog,
} from '../../../src/engine/ports.ts';
import { createTool } from '../fixtures.ts';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** A loop over three lookups at once, then `last` (the answer by default); `ends` is what the ends' write does. */
function loop(ends: Promise<void>, last: LlmResponse = { text: 'Ada: 1', model: 'm', usage: usage() }) {
  const events: string[] = [];
  const store = {
    listRevisions: () => Promise.resolve([]),
    recordSteps: (w: StepAttemptWrite) => {
      if (w.revision) {
        events.push(`round ${w.started.map((s) => s.stepId).join(' ')}`);
        return Promise.resolve({ startsHeld: false });
      }
      events.push(`ends ${w.ended.map((e) => `${e.stepId}:${e.status}`).join(' ')}`);
      return ends.then(() => (events.push('ends stored'), { startsHeld: false }));
    },
    setRoute: () => (events.push('route'), Promise.resolve()),
    settleTokens: () => Promise.resolve(),
  } as unknown as RunRecords & StepLog & RunHistory & Ledgers;
  const tool = createTool('crm.lookup', { annotations: { readOnlyHint: true, openWorldHint: false } });
  const tools = {
    listTools: () => [tool],
    callTool: () => {
      events.push('sent');
      return Promise.resolve({ ok: true as const, value: { content: [{ type: 'text', text: 'Ada: 1' }] } });
    },
  } as unknown as StewardDeps['tools'];
  const call = (id: string) => ({ id, name: 'crm__lookup', args: { text: id } });
  const replies: LlmResponse[] = [
    { text: '', toolCalls: [call('a'), call('b'), call('c')], model: 'm', usage: usage() },
    last,
  ];
  const llm = {
    complete: () => {
      events.push('model');
      return Promise.resolve(replies.shift()!);
    },
  };
  const deps = { tools, clock: () => new Date(), log: () => undefined, store };
  const quick = new QuickAnswers(deps, () => llm, { maxTurns: 4, maxTokens: 12_000 });
  const run = { id: 'run-1', requester: { id: 'ada', channel: 'console' }, revision: 0 };
  return { events, answer: () => quick.answer(run, 'Look up Ada', new AbortController().signal) };
}

it("a round's calls are on record before any is sent; its ends are one write, beside the next turn; the answer waits for them", async () => {
  const ends = deferred();
  const { events, answer } = loop(ends.promise);
  let outcome: QuickOutcome | undefined;
  const answered = answer().then((o) => (outcome = o));
  await until(() => events.filter((e) => e === 'model').length === 2);
  // The next model call went out while the ends were being written, and the answer is not given before they are.
  await new Promise((r) => setImmediate(r));
  expect(outcome).toBeUndefined();
  ends.resolve();
  await answered;
  expect(outcome).toEqual({ route: 'quick', text: 'Ada: 1' });
  expect(events).toEqual([
    'route',
    'model',
    'round quick:1 quick:2 quick:3',
    'sent',
    'sent',
    'sent',
    'ends quick:1:succeeded quick:2:succeeded quick:3:succeeded',
    'model',
    'ends stored',
  ]);
});

it('a hand-over waits for the ends too, and a failed write of them is the loop’s failure, not an answer', async () => {
  const handOver = { text: '', toolCalls: [{ id: 'p', name: 'plan_request', args: {} }], model: 'm', usage: usage() };
  const ends = deferred();
  const { events, answer } = loop(ends.promise, handOver);
  const outcome = answer();
  await until(() => events.filter((e) => e === 'model').length === 2);
  ends.reject(new Error('the database is away'));
  await expect(outcome).rejects.toThrow('the database is away');

  const stored = loop(Promise.resolve(), handOver);
  expect(await stored.answer()).toEqual({ route: 'plan' });
  expect(stored.events).toContain('ends stored');
});

function usage() {
  return { inputTokens: 10, outputTokens: 2 };
}

async function until(fact: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !fact(); i++) await new Promise((r) => setImmediate(r));
  expect(fact()).toBe(true);
}
