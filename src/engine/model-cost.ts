/**
 * What a model call cost, from its token usage and the model's prices (given as data: the engine reads no files).
 * Costs are whole micro-dollars (millionths of a US dollar), so sums over many calls are exact integer sums.
 */
import type { LlmUsage } from './ports.ts';

/** A model's prices in US dollars per million tokens; cached input is what the provider bills for cache reads. */
export interface ModelPrices {
  inputPerMillion: number;
  outputPerMillion: number;
  cachedInputPerMillion: number;
}

/** A priced model of the catalog: its catalog name, the provider's model id, and its prices. */
export interface PricedModel {
  name: string;
  /** The provider's model id (`gpt-4.1-mini`), as requests name it. */
  model: string;
  prices: ModelPrices;
}

/**
 * The prices of the model that answered: by its catalog name when the router knows it, else by the provider's model
 * id, exactly or as a dated snapshot of it (`gpt-4.1-mini-2025-04-14` is priced as `gpt-4.1-mini`). Undefined when
 * nothing matches: the cost is unknown, never zero.
 */
export function pricesFor(
  models: readonly PricedModel[],
  answered: { model: string; modelName?: string },
): ModelPrices | undefined {
  if (answered.modelName !== undefined) {
    const named = models.find((m) => m.name === answered.modelName);
    if (named) return named.prices;
  }
  const exact = models.find((m) => m.model === answered.model);
  if (exact) return exact.prices;
  // The longest id that prefixes the answer, so `gpt-4.1-mini-…` is not priced as `gpt-4.1`.
  const snapshots = models
    .filter((m) => answered.model.startsWith(`${m.model}-`))
    .sort((a, b) => b.model.length - a.model.length);
  return snapshots[0]?.prices;
}

/**
 * A call's cost in micro-dollars, rounded to the nearest: uncached input, cached input and output, each at its price.
 * A price per million tokens in dollars is a price per token in micro-dollars, so no scaling is needed.
 */
export function costMicroUsd(usage: LlmUsage, prices: ModelPrices): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  const cost =
    uncached * prices.inputPerMillion +
    cached * prices.cachedInputPerMillion +
    usage.outputTokens * prices.outputPerMillion;
  return Math.round(cost);
}

/** A cost as people read it: `$0.0123` (four decimals, so a cheap call is not shown as $0.00), or `cost unknown`. */
export function formatCost(micro: number | null): string {
  return micro === null ? 'cost unknown' : `$${(micro / 1_000_000).toFixed(4)}`;
}
