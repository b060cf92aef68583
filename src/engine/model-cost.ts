/**
 * What a model call cost, from its token usage and the model's prices (given as data: the engine reads no files).
 * Costs are whole micro-dollars (millionths of a US dollar), so sums over many calls are exact integer sums.
 */
import type { LlmUsage, ModelRole } from './ports.ts';

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

/**
 * The price of a model the catalog does not price, in US dollars per million tokens (input and output alike), when
 * the operator sets none: about what the dearest common models charge for output, so an unpriced model is never
 * counted as cheaper than it may be.
 */
export const DEFAULT_PRICE_PER_MILLION = 15;

/** Each role's model as the router sends it: the provider's id, and its catalog name when it has one. */
export type RoleModels = Partial<Readonly<Record<ModelRole, { model: string; modelName?: string }>>>;

/** A model's prices, or the default price for input, cached input and output alike. */
export function pricesOrDefault(prices: ModelPrices | undefined, defaultPerMillion: number): ModelPrices {
  return (
    prices ?? {
      inputPerMillion: defaultPerMillion,
      outputPerMillion: defaultPerMillion,
      cachedInputPerMillion: defaultPerMillion,
    }
  );
}

/**
 * The prices a request will be charged at, known before it is sent: those of the catalog model it names, else of
 * its role's model; undefined when that model has no price (then the default price applies).
 */
export function requestPrices(
  request: { role: ModelRole; model?: string },
  models: readonly PricedModel[],
  roleModels: RoleModels | undefined,
): ModelPrices | undefined {
  if (request.model !== undefined) return pricesFor(models, { model: request.model, modelName: request.model });
  // The butler takes the classifier's model unless it has its own, as the router sends it.
  const routed = roleModels?.[request.role] ?? (request.role === 'butler' ? roleModels?.classifier : undefined);
  return routed ? pricesFor(models, routed) : undefined;
}

/** What a finished call counts against spend caps: its cost at its model's prices, else its tokens at the default. */
export function chargeMicroUsd(usage: LlmUsage, prices: ModelPrices | undefined, defaultPerMillion: number): number {
  return costMicroUsd(usage, pricesOrDefault(prices, defaultPerMillion));
}
