/**
 * The planner asked beside the front desk (issue 31), with quick answers on as the README's defaults have them: the
 * console, the real engine on PostgreSQL, the openai SDK streaming from the fake model, and the audit server, which
 * logs every call it receives. A request the front desk hands over finds its plan under way; the plan's steps wait
 * for the hand-over, and a request the front desk answers never runs them.
 */
import { describe, expect, it } from 'vitest';
import type { StewardSettings } from '../../src/engine/flows/steward.ts';
import { byRole, type FakeReply } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { onlyRun, type Harness, useAuditHarness } from './harness.ts';

const t = useAuditHarness();
const quickOn: Partial<StewardSettings> = { quickAnswers: { maxTurns: 4, maxTokens: 12_000 } };
const calls = () => t.audit.entries().filter((e) => e.type === 'call');
const roles = (h: Harness) => h.llm.requests.map((r) => r.role);

/** A compact plan whose steps stream first; the rest (its summary) is sent once `until` holds. */
function planHeldAfterSteps(steps: unknown[], atHold: () => void, until: () => boolean): FakeReply {
  const text = JSON.stringify({ steps, summary: 'Look it up' });
  const k = text.indexOf('"summary"');
  const beforeChunk = async (i: number) => {
    if (i !== 1) return;
    atHold();
    await waitUntil('the fact the plan is held for', until, { timeoutMs: 10_000 });
  };
  return { text, chunks: [text.slice(0, k), text.slice(k)], beforeChunk };
}

/**
 * A race the front desk loses by construction: the planner streams its one step (a lookup), and only then does the
 * front desk answer with `decide()`; on a serial front desk the planner is never asked before that answer, and the
 * wait times out. The plan's end is held until `until` holds.
 */
function planStreamsFirst(decide: () => FakeReply, until: () => boolean) {
  let stepsStreamed = false;
  return {
    butler: async () => {
      await waitUntil('the planner to stream its step while the front desk decides', () => stepsStreamed, {
        timeoutMs: 5_000,
      });
      return decide();
    },
    planner: [
      planHeldAfterSteps(
        [{ tool: 'audit.lookup', args: { answer: 'from the plan' } }],
        () => (stepsStreamed = true),
        until,
      ),
    ],
  };
}

describe('the planner asked beside the front desk (console, postgres)', () => {
  it('a request handed over finds its plan under way; its step starts only after the hand-over, and reports', async () => {
    let callsAtHandOver = -1;
    const handOver = (): FakeReply => {
      callsAtHandOver = calls().length;
      return { text: '', toolCalls: [{ id: 'call_1', name: 'plan_request', args: { reason: 'two steps' } }] };
    };
    const h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      settings: quickOn,
      // The plan's end waits for its step to reach the server: it started early, after the hand-over.
      script: byRole({
        ...planStreamsFirst(handOver, () => calls().length === 1),
        synthesizer: ['It is from the plan.'],
      }),
    });

    await h.type('Look it up, then tell me.');
    await h.waitFor(/=== Report \(completed\) ===\nIt is from the plan\./);

    expect(callsAtHandOver).toBe(0);
    expect(calls().map((c) => c.args)).toEqual([{ answer: 'from the plan' }]);
    // One planner call: the one asked beside the front desk, its plan used.
    expect(roles(h).filter((r) => r === 'planner')).toEqual(['planner']);
    const run = await onlyRun(h);
    expect(run.route).toBe('plan');
    expect(h.llm.failures).toEqual([]);
  });

  it('a request the front desk answers drops the plan under way: none of its streamed steps runs, no card', async () => {
    const h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      settings: quickOn,
      script: byRole(
        planStreamsFirst(
          () => 'Steward is here.',
          () => /^Steward is here\.$/m.test(h.output()),
        ),
      ),
    });

    await h.type('Are you there?');
    await h.waitFor(/^Steward is here\.$/m);
    await h.steward.idle();

    expect(calls()).toEqual([]);
    expect(h.output()).not.toMatch(/=== Plan/);
    const run = await onlyRun(h);
    expect([run.status, run.route]).toEqual(['completed', 'quick']);
    expect(await h.store.listRevisions(run.id)).toEqual([]);
    expect(await h.store.listStepAttempts(run.id)).toEqual([]);
    // The dropped call read its prompt, and is counted as such against the budgets and caps, never as free.
    const usage = await h.db.db
      .selectFrom('llm_usage')
      .select(['role', 'input_tokens', 'output_tokens'])
      .where('run_id', '=', run.id)
      .execute();
    const planner = usage.filter((u) => u.role === 'planner');
    expect(planner).toHaveLength(1);
    expect(planner[0]!.input_tokens).toBeGreaterThan(500);
    expect(planner[0]!.output_tokens).toBe(0);
  });
});
