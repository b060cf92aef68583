import { afterEach, describe, expect, it } from 'vitest';
import type { PricedModel } from '../../src/engine/model-cost.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

// The harness's roles answer as `planner-model` and `synth-model`; prices arrive as settings, as the app gives them.
const plannerPrices: PricedModel = {
  name: 'planner',
  model: 'planner-model',
  prices: { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5 },
};
const synthPrices: PricedModel = {
  name: 'synth',
  model: 'synth-model',
  prices: { inputPerMillion: 0.4, outputPerMillion: 1.6, cachedInputPerMillion: 0.1 },
};

const plan = planReply([{ id: 'sum', tool: 'everything.get-sum', args: { a: 2, b: 3 } }]);
const script = () =>
  byRole({
    planner: [{ text: plan, usage: { input: 12_000, cached: 2_000, output: 3_000 } }],
    synthesizer: [{ text: '2 + 3 = 5.', usage: { input: 5_000, output: 400 } }],
  });

async function runAndShowHistory(harness: Harness): Promise<{ runId: string; history: string }> {
  await harness.type('What is 2 + 3?');
  await harness.waitFor(/=== Report \(completed\) ===\n2 \+ 3 = 5\./);
  await harness.steward.idle();
  const from = harness.output().length;
  await harness.type('history');
  const history = await harness.waitFor(/Model use: [^\n]*\n/, undefined, from);
  return { runId: (await onlyRun(harness)).id, history };
}

async function storedCosts(harness: Harness, runId: string) {
  const rows = await harness.db.db
    .selectFrom('llm_usage')
    .select(['role', 'cost_micro_usd'])
    .where('run_id', '=', runId)
    .orderBy('id')
    .execute();
  // bigint arrives as a string from pg and a number from PGlite.
  return rows.map((r) => [r.role, r.cost_micro_usd === null ? null : Number(r.cost_micro_usd)]);
}

describe.each(['postgres', 'pglite'] as const)('model cost, end to end on %s', (db) => {
  it("stores each call's cost and shows the run's total in its history", async () => {
    h = await startHarness({
      db,
      servers: [everythingStdioConfig()],
      script: script(),
      settings: { modelPrices: [plannerPrices, synthPrices] },
    });
    const { runId, history } = await runAndShowHistory(h);

    // Planner: 10,000 × $2 + 2,000 cached × $0.50 + 3,000 × $8 per million = 45,000 micro-dollars;
    // synthesizer: 5,000 × $0.40 + 400 × $1.60 = 2,640.
    expect(await storedCosts(h, runId)).toEqual([
      ['planner', 45_000],
      ['synthesizer', 2_640],
    ]);
    expect((await h.store.llmUsageForRun(runId)).costMicroUsd).toBe(47_640);
    expect(history).toContain('Model use: 2 calls, 20,400 tokens (2,000 cached), $0.0476.');
    expect(h.llm.failures).toEqual([]);
  });

  it('says "cost unknown" when a model of the run has no price, and stores null for it, not zero', async () => {
    h = await startHarness({
      db,
      servers: [everythingStdioConfig()],
      script: script(),
      settings: { modelPrices: [plannerPrices] },
    });
    const { runId, history } = await runAndShowHistory(h);

    expect(await storedCosts(h, runId)).toEqual([
      ['planner', 45_000],
      ['synthesizer', null],
    ]);
    const usage = await h.store.llmUsageForRun(runId);
    expect(usage.costMicroUsd).toBeNull();
    expect(usage.byRole.planner?.costMicroUsd).toBe(45_000);
    expect(history).toContain('Model use: 2 calls, 20,400 tokens (2,000 cached), cost unknown.');
    expect(history).not.toContain('$');
  });
});
