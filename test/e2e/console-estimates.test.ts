/**
 * Estimates on the console's plan cards, end to end: the first card has no history to go on; after runs of the same
 * tools, a card estimates from what they took, says from which (the same arguments, similar ones, or any), and the
 * run's end says how long it took against that estimate. A card shown again after a restart carries an estimate too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlanEstimate } from '../../src/engine/estimate-history.ts';
import { HISTORY_TTL_MS } from '../../src/engine/flows/plan-estimates.ts';
import type { PricedModel } from '../../src/engine/model-cost.ts';
import { estimateLine } from '../../src/engine/run/estimates.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import { auditStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

const SLEEP_MS = 300;

// `chain` waits for `first`; `aside` runs beside them: the critical path is two sleeps, never three.
const plan = planReply([
  { id: 'first', tool: 'audit.sleep', args: { ms: SLEEP_MS } },
  { id: 'chain', tool: 'audit.sleep', args: { ms: SLEEP_MS }, dependsOn: ['first'] },
  { id: 'aside', tool: 'audit.sleep', args: { ms: SLEEP_MS } },
]);

const prices: PricedModel[] = [
  {
    name: 'planner',
    model: 'planner-model',
    prices: { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0 },
  },
  {
    name: 'synth',
    model: 'synth-model',
    prices: { inputPerMillion: 1, outputPerMillion: 4, cachedInputPerMillion: 0 },
  },
];

let h: Harness | undefined;
let folder: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe.each(['postgres', 'pglite'] as const)('estimates on plan cards, end to end on %s', (db) => {
  it('first "no history"; after two runs a card estimates from their durations, and the end shows estimate against actual', async () => {
    folder = await mkdtemp(join(tmpdir(), 'steward-estimates-'));
    // The engine's clock moves on past the history's cache when the test says so; the database keeps its own.
    let skew = 0;
    h = await startHarness({
      db,
      servers: [auditStdioConfig(join(folder, 'audit.jsonl'))],
      script: byRole({
        planner: { text: plan, usage: { input: 1_000, output: 200 } },
        synthesizer: { text: 'Slept three times.', usage: { input: 500, output: 50 } },
      }),
      settings: { modelPrices: prices },
      clock: () => new Date(Date.now() + skew),
      estimates: true,
      // Read whole, the plan starts when it is offered, so "took" spans every step (no step started while it streamed).
      modelStreams: false,
    });
    const harness = h;

    const run = async (): Promise<string> => {
      const from = harness.output().length;
      await harness.type('Sleep three times.');
      await harness.waitFor(/=== Report \(completed\) ===\nSlept three times\./, 15_000, from);
      await harness.steward.idle();
      return harness.output().slice(from);
    };

    const first = await run();
    // The run's own planning is history already (it was recorded before the card); the tool has none.
    expect(first).toMatch(/\nEstimate: duration unknown · [^\n]*no history for audit\.sleep\n/);
    // Nothing was estimated, so the end says only how long the run took.
    expect(first).toMatch(/\nTook \d+\.\d s\n/);
    // A card right after another reuses the history read for it (no new read within 30 s): still no history.
    expect(await run()).toContain('no history for audit.sleep');

    skew += HISTORY_TTL_MS + 1_000;
    const third = await run();
    const runs = await harness.db.db.selectFrom('runs').select('id').orderBy('created_at').execute();
    const lastRun = runs[2]!.id;
    const started = await harness.db.db
      .selectFrom('run_events')
      .select('payload')
      .where('run_id', '=', lastRun)
      .where('type', '=', 'autoApproved')
      .executeTakeFirstOrThrow();
    const estimate = (started.payload as unknown as { estimate: PlanEstimate }).estimate;
    // The card shows the estimate the run started with, stored with its start for the dashboard.
    expect(third).toContain(estimateLine(estimate));
    expect(estimate.noHistory).toEqual([]);

    // The range is made of what the earlier sleeps took: two of them in a row, at p50 and at p90.
    const earlier = await harness.db.db
      .selectFrom('step_attempts')
      .select('duration_ms')
      .where('run_id', 'in', [runs[0]!.id, runs[1]!.id])
      .execute();
    const took = earlier.map((a) => a.duration_ms!);
    expect(took).toHaveLength(6);
    const range = estimate.durationMs!;
    expect(range.low).toBeGreaterThanOrEqual(2 * SLEEP_MS);
    expect(range.low).toBeGreaterThanOrEqual(2 * Math.min(...took));
    expect(range.high).toBeLessThanOrEqual(2 * Math.max(...took));
    expect(range.high).toBeGreaterThanOrEqual(range.low);
    // Two runs of planning and reporting, priced by the catalog: 1,200 + 550 tokens each.
    expect(estimate.tokens).toEqual({ low: 1_750, high: 1_750 });
    expect(estimate.costMicroUsd).toEqual({ low: 2 * 1_000 + 8 * 200 + 500 + 4 * 50, high: 4_300 });

    // After the run: how long it took, against the estimate it started with.
    const end = /\nTook (\d+\.\d) s, estimated ([\d.]+(?:–[\d.]+)?) s\n/.exec(third);
    expect(end, third).not.toBeNull();
    expect(Number(end![1])).toBeGreaterThanOrEqual((2 * SLEEP_MS) / 1000);
    expect(estimateLine(estimate)).toContain(`Estimate: ${end![2]} s`);
  });

  it("the card says which history each step's estimate came from: the same arguments, similar ones (same names and types) or any", async () => {
    folder = await mkdtemp(join(tmpdir(), 'steward-estimates-'));
    let skew = 0;
    // History: three sleeps of 200 ms, and three shorter ones that also carry a label (another shape of arguments).
    const history = planReply([
      ...['h1', 'h2', 'h3'].map((id) => ({ id, tool: 'audit.sleep', args: { ms: 200 } })),
      ...['l1', 'l2', 'l3'].map((id) => ({ id, tool: 'audit.sleep', args: { ms: 20, label: id } })),
    ]);
    // Then: the same 200 ms; a new length; a new label; and a shape never seen (a number where the label was).
    const next = planReply([
      { id: 'same', tool: 'audit.sleep', args: { ms: 200 } },
      { id: 'longer', tool: 'audit.sleep', args: { ms: 150 }, dependsOn: ['same'] },
      { id: 'labelled', tool: 'audit.sleep', args: { ms: 20, label: 'new' } },
      { id: 'odd', tool: 'audit.sleep', args: { ms: 10, label: 7 } },
    ]);
    h = await startHarness({
      db,
      servers: [auditStdioConfig(join(folder, 'audit.jsonl'))],
      script: byRole({ planner: [history, next], synthesizer: 'Slept.' }),
      clock: () => new Date(Date.now() + skew),
      estimates: true,
      modelStreams: false,
    });
    await h.type('Sleep six times.');
    await h.waitFor(/=== Report \(completed\) ===\nSlept\./);
    await h.steward.idle();

    skew += HISTORY_TTL_MS + 1_000;
    const from = h.output().length;
    await h.type('Sleep four times.');
    await h.waitFor(/=== Report \(completed\) ===\nSlept\./, 15_000, from);
    const card = h.output().slice(from);
    expect(card).toMatch(
      /\nEstimate: [\d.]+(?:–[\d.]+)? s from past runs with similar arguments \(same: the same arguments; odd: any arguments\)( · |\n)/,
    );
    // The range: "same" then "longer" (each about 200 ms: the 200 ms calls, and sleeps given a length alone), beside
    // "labelled" (about 20 ms); not the tool's mix of 200 ms and 20 ms sleeps, which would put "longer" near 110 ms.
    const stored = await h.db.db
      .selectFrom('run_events')
      .select('payload')
      .where('type', '=', 'autoApproved')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const estimate = (stored.payload as unknown as { estimate: PlanEstimate }).estimate;
    expect(estimate.durationMs!.low).toBeGreaterThanOrEqual(400);
    expect(estimate.basis).toEqual([
      { step: 'same', from: 'args' },
      { step: 'longer', from: 'similar' },
      { step: 'labelled', from: 'similar' },
      { step: 'odd', from: 'tool' },
    ]);
    expect(card).toContain(estimateLine(estimate));
  });

  it('a reviewed plan stores the estimate the person approved as an "estimated" event of the approval', async () => {
    folder = await mkdtemp(join(tmpdir(), 'steward-estimates-'));
    const send = planReply([{ id: 'tell', tool: 'audit.send', args: { to: 'ops', body: 'hello' } }]);
    h = await startHarness({
      db,
      servers: [auditStdioConfig(join(folder, 'audit.jsonl'))],
      script: byRole({ planner: send, synthesizer: 'Sent.' }),
      settings: { modelPrices: prices },
      estimates: true,
      modelStreams: false,
    });
    await h.type('Tell ops hello.');
    const card = await h.waitFor(/=== Plan[\s\S]*?Type "approve"/);
    expect(card).toMatch(/\nEstimate: duration unknown · [^\n]*no history for audit\.send\n/);
    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===\nSent\./);
    await h.steward.idle();
    const events = await h.db.db
      .selectFrom('run_events')
      .select(['type', 'payload'])
      .where('type', '=', 'estimated')
      .execute();
    expect(events).toHaveLength(1);
    const payload = events[0]!.payload as unknown as { revision: number; estimate: PlanEstimate };
    expect(payload.revision).toBe(0);
    expect(card).toContain(estimateLine(payload.estimate));
    expect(payload.estimate.noHistory).toEqual(['audit.send']);
    // Nothing to compare a duration with yet: the end says how long it took, and no estimate.
    expect(h.output()).toMatch(/\nTook \d+\.\d s\n/);
  });

  it('a card shown again after a restart carries the estimate, as the first one did', async () => {
    folder = await mkdtemp(join(tmpdir(), 'steward-estimates-'));
    let skew = 0;
    h = await startHarness({
      db,
      servers: [auditStdioConfig(join(folder, 'audit.jsonl'))],
      script: byRole({ planner: plan, synthesizer: 'Slept three times.' }),
      settings: { modelPrices: prices },
      clock: () => new Date(Date.now() + skew),
      estimates: true,
      modelStreams: false,
    });
    // History: one run of the sleeps.
    await h.type('Sleep three times.');
    await h.waitFor(/=== Report \(completed\) ===\nSlept three times\./);
    await h.steward.idle();

    // A run left waiting for review by a process that died: no owner, so this process takes it over at start.
    const id = crypto.randomUUID();
    const at = new Date();
    await h.store.createRun({
      id,
      conversation: { channel: 'console', key: 'console' },
      requester: { id: 'ada', channel: 'console' },
      request: 'Sleep again.',
      at,
    });
    await h.store.saveRevision(id, 0, planSchema.parse(JSON.parse(plan)), 'planned', at);
    await h.store.transition(id, ['planning'], 'awaiting_review', { at });
    // Later than the history read for the first card stays fresh.
    skew += HISTORY_TTL_MS + 1_000;
    const from = h.output().length;
    await h.steward.recover();
    const card = await h.waitFor(/=== Plan[\s\S]*?Type "approve"/, 15_000, from);
    expect(card).toMatch(/\nEstimate: [\d.]+(?:–[\d.]+)? s from past runs with the same arguments · /);
    expect(card).not.toContain('no history for audit.sleep');
  });
});
