import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_PARALLEL } from '../../src/config.ts';
import type { StoredStepAttempt } from '../../src/engine/ports.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply, type Harness, useAuditHarness } from './harness.ts';

// Runs through the real engine and store against the audit fixture, which logs every call it really receives with
// the number of calls it had in flight as that one arrived.
const t = useAuditHarness();
let h: Harness | undefined;

const actor = { id: 'ada', channel: 'test' };
const conv = (k: string) => ({ channel: 'test', key: `thread-${k}` });
const fanOut = (prefix: string, n: number, ms: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i + 1}`, tool: 'audit.sleep', args: { ms: ms + i } }));
const calls = () => t.audit.entries().filter((e) => e.type === 'call');
const maxInFlight = () => Math.max(0, ...calls().map((e) => e.inFlight ?? 0));

/** Starts one run per key (its plan chosen by the key in the request) and approves each; returns run ids by key. */
async function startRuns(
  harness: Harness,
  keys: string[],
  /** Waited on after each approval, so the runs reach the server in the order given. */
  afterEach?: (key: string) => Promise<unknown>,
): Promise<Record<string, string>> {
  await harness.store.setReviewPreference(actor, 'all', new Date());
  for (const k of keys) await harness.steward.message({ conversation: conv(k), actor, text: `run ${k}` });
  const rows = await harness.db.db.selectFrom('runs').select(['id', 'conversation_key']).execute();
  const ids = Object.fromEntries(rows.map((r) => [r.conversation_key.slice('thread-'.length), r.id]));
  for (const k of keys) {
    await harness.steward.decision({ runId: ids[k]!, revision: 0, action: 'approve', actor });
    await afterEach?.(k);
  }
  return ids;
}

/** The most steps of one run that were running at the same moment, from their stored start and end times. */
function mostAtOnce(attempts: StoredStepAttempt[]): number {
  const spans = attempts.map((a) => [a.startedAt.getTime(), a.endedAt?.getTime() ?? Infinity] as const);
  return Math.max(0, ...spans.map(([t]) => spans.filter(([s, e]) => s <= t && t < e).length));
}

const planFor = (plans: Record<string, unknown[]>) =>
  byRole({
    planner: (req) => planReply(plans[/run (\w+)/.exec(req.lastUserText)?.[1] ?? ''] ?? []),
    synthesizer: 'done',
  });

describe('parallel steps and server limits, seen from the MCP server (postgres)', () => {
  it('the default maxParallel sends all 8 calls of an 8-way fan-out to the server at once', async () => {
    h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      settings: { maxParallel: DEFAULT_MAX_PARALLEL },
      script: planFor({ A: fanOut('s', 8, 400) }),
    });
    const ids = await startRuns(h, ['A']);
    await h.steward.idle();
    expect((await h.store.getRun(ids.A!))?.status).toBe('completed');
    expect(calls()).toHaveLength(8);
    expect(maxInFlight()).toBe(8);
  });

  it('two runs on a server with maxConcurrency 2: it never has more than 2 calls, each run starts only 2, all succeed', async () => {
    h = await t.start({
      db: 'postgres',
      servers: [t.audit.config({ overrides: { maxConcurrency: 2 } })],
      settings: { maxParallel: DEFAULT_MAX_PARALLEL },
      script: planFor({ A: fanOut('a', 4, 150), B: fanOut('b', 4, 250) }),
    });
    const ids = await startRuns(h, ['A', 'B']);
    await h.steward.idle();
    for (const k of ['A', 'B']) {
      expect((await h.store.getRun(ids[k]!))?.status).toBe('completed');
      const attempts = await h.store.listStepAttempts(ids[k]!);
      expect(attempts.map((a) => [a.stepId, a.status]).sort()).toEqual(
        [1, 2, 3, 4].map((i) => [`${k.toLowerCase()}${i}`, 'succeeded']),
      );
      // Steps beyond the limit waited unstarted (shown waiting, timeout not running) instead of queueing as running.
      expect(mostAtOnce(attempts)).toBe(2);
    }
    expect(calls()).toHaveLength(8);
    expect(maxInFlight()).toBe(2);
  });

  it('stop on a run whose call waits for a slot ends it at once, and the call never reaches the server', async () => {
    h = await t.start({
      db: 'postgres',
      servers: [t.audit.config({ overrides: { maxConcurrency: 1 } })],
      script: planFor({ A: fanOut('a', 1, 20_000), B: fanOut('b', 1, 100) }),
    });
    // A first, so it holds the one slot: approvals are quick, and B's call could otherwise reach the host first.
    const ids = await startRuns(h, ['A', 'B'], (k) =>
      k === 'A' ? waitUntil('A to hold the one slot at the server', () => calls().length === 1) : Promise.resolve(),
    );
    // B's step has started in its run (no other call of that run is in flight): its call waits in the host.
    await waitUntil('B to start its step', async () => (await h!.store.listStepAttempts(ids.B!)).length === 1);
    await h.steward.decision({ runId: ids.B!, revision: 0, action: 'stop', actor });
    await h.waitFor(/=== Report \(stopped\) ===/);
    const [stopped] = await h.store.listStepAttempts(ids.B!);
    expect([stopped?.status, stopped?.error?.code]).toEqual(['cancelled', 'cancelled']);
    await h.steward.decision({ runId: ids.A!, revision: 0, action: 'stop', actor });
    await h.steward.idle();
    expect(calls().map((e) => e.args)).toEqual([{ ms: 20_000 }]);
  });
});
