import { describe, expect, it } from 'vitest';
import { meteredLlm } from '../../src/engine/flows/metered-llm.ts';
import { costMicroUsd, formatCost, pricesFor, type PricedModel } from '../../src/engine/model-cost.ts';
import type { LlmResponse, Ledgers } from '../../src/engine/ports.ts';
import { describeUsage } from '../../src/engine/run/run-status.ts';

const mini = { inputPerMillion: 0.4, outputPerMillion: 1.6, cachedInputPerMillion: 0.1 };
const full = { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5 };
const catalog: PricedModel[] = [
  { name: 'full', model: 'gpt-4.1', prices: full },
  { name: 'mini', model: 'gpt-4.1-mini', prices: mini },
];

describe("a model call's cost", () => {
  it('prices uncached input, cached input and output each at its own price, in whole micro-dollars', () => {
    // 8,000 uncached × $2 + 2,000 cached × $0.50 + 3,000 out × $8, per million: $0.016 + $0.001 + $0.024.
    expect(costMicroUsd({ inputTokens: 10_000, cachedInputTokens: 2_000, outputTokens: 3_000 }, full)).toBe(41_000);
    // 7 × 0.4 + 1 × 1.6 = 4.4 micro-dollars, rounded.
    expect(costMicroUsd({ inputTokens: 7, outputTokens: 1 }, mini)).toBe(4);
    expect(costMicroUsd({ inputTokens: 0, outputTokens: 0 }, full)).toBe(0);
  });

  it('finds prices by catalog name first, then by the provider id or a dated snapshot of it (the longest id)', () => {
    expect(pricesFor(catalog, { model: 'anything', modelName: 'mini' })).toBe(mini);
    expect(pricesFor(catalog, { model: 'gpt-4.1' })).toBe(full);
    expect(pricesFor(catalog, { model: 'gpt-4.1-mini-2025-04-14' })).toBe(mini);
    expect(pricesFor(catalog, { model: 'gpt-4.1-2025-04-14' })).toBe(full);
  });

  it('is unknown, not zero, for a model without a price', () => {
    expect(pricesFor(catalog, { model: 'llama3.1' })).toBeUndefined();
    expect(pricesFor([], { model: 'gpt-4.1', modelName: 'full' })).toBeUndefined();
    expect(formatCost(null)).toBe('cost unknown');
    expect(formatCost(0)).toBe('$0.0000');
    expect(formatCost(12_345)).toBe('$0.0123');
    expect(formatCost(2_500_000)).toBe('$2.5000');
  });

  it('is said with the calls and tokens of a run', () => {
    const usage = { calls: 3, inputTokens: 1_200, cachedInputTokens: 200, outputTokens: 34, costMicroUsd: 12_345 };
    expect(describeUsage({ ...usage, byRole: {} })).toBe('Model use: 3 calls, 1,234 tokens (200 cached), $0.0123.');
    expect(describeUsage({ ...usage, calls: 1, cachedInputTokens: 0, costMicroUsd: null, byRole: {} })).toBe(
      'Model use: 1 call, 1,234 tokens, cost unknown.',
    );
  });
});

describe('the metered client', () => {
  it("records each call's cost from the answering model's prices, and null for a model without one", async () => {
    const settled: unknown[] = [];
    const store = {
      reserveTokens: () => Promise.resolve({ ok: true, cap: 1_000 }),
      settleTokens: (s: { usage: unknown }) => {
        settled.push(s.usage);
        return Promise.resolve();
      },
    } as unknown as Ledgers;
    const answers: LlmResponse[] = [
      { text: 'a', model: 'gpt-4.1-2025-04-14', usage: { inputTokens: 1_000, outputTokens: 100 } },
      { text: 'b', model: 'whatever', modelName: 'mini', usage: { inputTokens: 1_000, outputTokens: 100 } },
      { text: 'c', model: 'llama3.1', usage: { inputTokens: 1_000, outputTokens: 100 } },
    ];
    const llm = { complete: () => Promise.resolve(answers.shift()!) };
    const metered = meteredLlm({ llm, store, clock: () => new Date(0), prices: catalog }, 'run_1', {
      channel: 'console',
      id: 'ada',
    });
    for (let i = 0; i < 3; i++) await metered.complete({ role: 'llm_step', system: 's', messages: [] });
    expect(settled.map((u) => (u as { costMicroUsd: number | null }).costMicroUsd)).toEqual([2_800, 560, null]);
  });
});
