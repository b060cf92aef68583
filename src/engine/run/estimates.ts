/**
 * The estimate on a plan card (pure): how long the plan will take, as its span when its steps are scheduled as the
 * dispatcher does (each as soon as its dependencies ended and one of `maxParallel` slots is free, in plan order) over
 * each step's recent p50 and p90 durations (those of its tool called with the same arguments when there are enough,
 * else with arguments of the same shape, else its tool's; the card says which), and what the run's model calls will
 * spend, from recent per-role token counts and the catalog's prices. A step with no history counts as instant and is
 * named, so the range never pretends.
 */
import {
  LLM_STEP_KEY,
  type DurationStats,
  type EstimateBasis,
  type StepBasis,
  type EstimateHistoryData,
  type PlanEstimate,
  type Range,
  type RoleTokenStats,
} from '../estimate-history.ts';
import {
  costMicroUsd,
  DEFAULT_PRICE_PER_MILLION,
  pricesFor,
  pricesOrDefault,
  type PricedModel,
} from '../model-cost.ts';
import { canonicalJson } from '../plan/canonical-json.ts';
import type { Step } from '../plan/plan-schema.ts';
import type { ValidatedPlan } from '../plan/validate-plan.ts';
import type { Json } from '../types.ts';

/** Roles a run spends tokens on once, whatever its steps: planning, classifying replies, the report. */
const PER_RUN_ROLES = ['planner', 'classifier', 'synthesizer'] as const;

/**
 * What to leave out: steps that already ended (a card shown mid-run estimates what is left); and how many steps run
 * at once (the dispatcher's `maxParallel`; unlimited if unset, which makes the span the critical path).
 */
export interface EstimateOptions {
  done?: ReadonlySet<string>;
  maxParallel?: number;
  /** The price of a model without one, for what the run would spend against caps (default `DEFAULT_PRICE_PER_MILLION`). */
  defaultPricePerMillion?: number;
}

/** The plan's estimate from recent history; `prices` are the model catalog's (none: cost unknown). */
export function estimatePlan(
  v: ValidatedPlan,
  history: EstimateHistoryData,
  prices: readonly PricedModel[],
  options: EstimateOptions = {},
): PlanEstimate {
  const done = options.done ?? new Set<string>();
  const noHistory = new Set<string>();
  const low = new Map<string, number>();
  const high = new Map<string, number>();
  const basis: StepBasis[] = [];
  let known = 0;
  let llmSteps = 0;
  for (const s of v.plan.steps) {
    const key = s.kind === 'tool' ? s.tool : s.kind === 'llm' ? LLM_STEP_KEY : null;
    if (s.kind === 'llm' && !done.has(s.id)) llmSteps += 1;
    const found = key === null || done.has(s.id) ? undefined : durationsOf(history, key, s);
    const stats = found?.stats;
    if (key !== null && !done.has(s.id) && !stats) noHistory.add(key);
    if (found) {
      known += 1;
      basis.push({ step: s.id, from: found.basis });
    }
    low.set(s.id, stats?.p50Ms ?? 0);
    high.set(s.id, Math.max(stats?.p90Ms ?? 0, stats?.p50Ms ?? 0));
  }
  const slots = options.maxParallel ?? Infinity;
  const durationMs = known > 0 ? { low: scheduledSpan(v, low, slots), high: scheduledSpan(v, high, slots) } : null;
  const spend = tokenSpend(history, llmSteps, prices, options.defaultPricePerMillion ?? DEFAULT_PRICE_PER_MILLION);
  const estimate: PlanEstimate = { durationMs, ...spend, noHistory: [...noHistory].sort() };
  return known > 0 ? { ...estimate, basis } : estimate;
}

/**
 * A step's recent durations and where they came from: its tool's with these very arguments (as written, references
 * unresolved), else with arguments of the same shape (`argShape`), else its tool's.
 */
function durationsOf(
  history: EstimateHistoryData,
  key: string,
  step: Step,
): { stats: DurationStats; basis: EstimateBasis } | undefined {
  const args = step.kind === 'condition' ? {} : step.args;
  const exact = history.byArgs?.[key]?.[canonicalJson(args)];
  if (exact) return { stats: exact, basis: 'args' };
  const similar = history.byShape?.[key]?.[canonicalJson(argShape(args))];
  if (similar) return { stats: similar, basis: 'similar' };
  const tool = history.tools[key];
  return tool ? { stats: tool, basis: 'tool' } : undefined;
}

/**
 * The shape of a step's arguments: each top-level name with its value's JSON type (`string`, `number`, `boolean`,
 * `null`, `array`, `object`), a reference (`{"$ref": ...}`) counting as `ref`: `{path: "/a"}` and `{path: "/b"}` are
 * alike, `{path: "/a", pattern: "*.md"}` and `{path: {$ref: ...}}` are not. The store groups history by the same
 * shape in SQL (`jsonb_typeof`), so the two must name types alike.
 */
export function argShape(args: Readonly<Record<string, Json>>): Record<string, string> {
  const shape: Record<string, string> = {};
  for (const [name, value] of Object.entries(args)) shape[name] = jsonType(value);
  return shape;
}

function jsonType(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return '$ref' in value ? 'ref' : 'object';
  return typeof value;
}

/**
 * How long the plan takes when each step starts as soon as every step it depends on has ended and fewer than
 * `maxParallel` steps are running, ready steps taking free slots in plan order (as the dispatcher's `schedule`).
 * A step that takes no time (already ended, no history, a condition) needs no slot. With slots for every step
 * that could run at once, this is the critical path.
 */
export function scheduledSpan(
  v: ValidatedPlan,
  durations: ReadonlyMap<string, number>,
  maxParallel: number = Infinity,
): number {
  const slots = Math.max(1, maxParallel);
  const steps = v.plan.steps;
  const started = new Set<string>();
  const ended = new Set<string>();
  let running: { id: string; end: number }[] = [];
  let now = 0;
  for (;;) {
    let changed = true;
    while (changed) {
      changed = false;
      for (const s of steps) {
        if (started.has(s.id) || !s.dependsOn.every((d) => ended.has(d))) continue;
        const ms = durations.get(s.id) ?? 0;
        if (ms > 0 && running.length >= slots) continue;
        started.add(s.id);
        if (ms > 0) running.push({ id: s.id, end: now + ms });
        else ended.add(s.id);
        changed = true;
      }
    }
    if (running.length === 0) return now;
    now = Math.min(...running.map((r) => r.end));
    for (const r of running) if (r.end <= now) ended.add(r.id);
    running = running.filter((r) => r.end > now);
  }
}

/** The longest path through the DAG, each step weighing its duration (steps in `layers` order: dependencies first). */
export function criticalPath(v: ValidatedPlan, durations: ReadonlyMap<string, number>): number {
  const finish = new Map<string, number>();
  const deps = new Map(v.plan.steps.map((s) => [s.id, s.dependsOn]));
  let longest = 0;
  for (const layer of v.layers) {
    for (const id of layer) {
      const start = Math.max(0, ...(deps.get(id) ?? []).map((d) => finish.get(d) ?? 0));
      const end = start + (durations.get(id) ?? 0);
      finish.set(id, end);
      longest = Math.max(longest, end);
    }
  }
  return longest;
}

/**
 * Tokens and cost: each per-run role once, `llm_step` once per llm step; cost unknown if any role has no price. What
 * the run would spend against caps leaves the planner out (it has spent by the time a card is shown) and prices a
 * model without a price at the default.
 */
function tokenSpend(
  history: EstimateHistoryData,
  llmSteps: number,
  prices: readonly PricedModel[],
  defaultPrice: number,
): Pick<PlanEstimate, 'tokens' | 'costMicroUsd' | 'spendMicroUsd'> {
  const parts: { stats: RoleTokenStats; times: number; planning: boolean }[] = [];
  for (const role of PER_RUN_ROLES) {
    const stats = history.roles[role];
    if (stats) parts.push({ stats, times: 1, planning: role === 'planner' });
  }
  const step = history.roles.llm_step;
  if (step && llmSteps > 0) parts.push({ stats: step, times: llmSteps, planning: false });
  if (parts.length === 0) return { tokens: null, costMicroUsd: null };
  const tokens = { low: 0, high: 0 };
  let cost: Range | null = { low: 0, high: 0 };
  const spend = { low: 0, high: 0 };
  for (const { stats, times, planning } of parts) {
    tokens.low += times * (stats.input.low + stats.output.low);
    tokens.high += times * (stats.input.high + stats.output.high);
    const price = pricesFor(prices, { model: stats.model, modelName: stats.modelName });
    const low = { inputTokens: stats.input.low, outputTokens: stats.output.low };
    const high = { inputTokens: stats.input.high, outputTokens: stats.output.high };
    if (!planning) {
      const charged = pricesOrDefault(price, defaultPrice);
      spend.low += times * costMicroUsd(low, charged);
      spend.high += times * costMicroUsd(high, charged);
    }
    if (!price || !cost) {
      cost = null;
      continue;
    }
    cost.low += times * costMicroUsd(low, price);
    cost.high += times * costMicroUsd(high, price);
  }
  return { tokens: rounded(tokens), costMicroUsd: cost, spendMicroUsd: rounded(spend) };
}

function rounded(r: Range): Range {
  return { low: Math.round(r.low), high: Math.round(Math.max(r.high, r.low)) };
}

/**
 * The card's one line: `Estimate: 3–8 s from past runs with the same arguments · 2.1k–3.4k tokens · $0.0020–0.0040 ·
 * no history for fs.write_file`. The duration says what history it came from (`basisWords`).
 */
export function estimateLine(e: PlanEstimate): string {
  const parts: string[] = [];
  const from = e.basis ? basisWords(e.basis) : '';
  parts.push(e.durationMs ? `${span(e.durationMs, seconds)} s${from && ` ${from}`}` : 'duration unknown');
  if (e.tokens) parts.push(`${span(e.tokens, thousands)} tokens`);
  if (e.tokens) parts.push(e.costMicroUsd ? `$${span(e.costMicroUsd, dollars)}` : 'cost unknown');
  if (e.noHistory.length > 0) parts.push(`no history for ${e.noHistory.join(', ')}`);
  return `Estimate: ${parts.join(' · ')}`;
}

const BASIS_WORDS: Record<EstimateBasis, string> = {
  args: 'the same arguments',
  similar: 'similar arguments',
  tool: 'any arguments',
};

/** Most precise first: a tie for the most steps goes to the more precise history. */
const BASES: readonly EstimateBasis[] = ['args', 'similar', 'tool'];

/** More steps than this on another history are counted (`4 steps: any arguments`) instead of named. */
const NAMED_STEPS = 3;

/**
 * What history the duration came from, per plan when every step's came from the same kind (`from past runs with the
 * same arguments`), else the kind most steps had with the other steps named after it (`from past runs with the same
 * arguments (s3: similar arguments; s4, s5: any arguments)`), in plan order.
 */
export function basisWords(basis: readonly StepBasis[]): string {
  const steps = (b: EstimateBasis) => basis.filter((s) => s.from === b).map((s) => s.step);
  const counts = BASES.map((b) => ({ b, ids: steps(b) })).filter((g) => g.ids.length > 0);
  if (counts.length === 0) return '';
  const main = counts.reduce((best, g) => (g.ids.length > best.ids.length ? g : best));
  const others = counts
    .filter((g) => g !== main)
    .map(({ b, ids }) => `${ids.length > NAMED_STEPS ? `${ids.length} steps` : ids.join(', ')}: ${BASIS_WORDS[b]}`);
  const head = `from past runs with ${BASIS_WORDS[main.b]}`;
  return others.length > 0 ? `${head} (${others.join('; ')})` : head;
}

/** After the run: `Took 5.2 s, estimated 3–8 s` (or the duration alone when nothing was estimated). */
export function tookLine(tookMs: number, estimate: PlanEstimate | undefined): string {
  const took = `Took ${seconds(tookMs)} s`;
  return estimate?.durationMs ? `${took}, estimated ${span(estimate.durationMs, seconds)} s` : took;
}

function span(r: Range, format: (n: number) => string): string {
  const low = format(r.low);
  const high = format(r.high);
  return low === high ? low : `${low}–${high}`;
}

/** Seconds with one decimal below a minute's worth of precision that matters (under 10 s), else whole. */
function seconds(ms: number): string {
  const s = ms / 1000;
  return s < 10 ? s.toFixed(1) : String(Math.round(s));
}

function thousands(n: number): string {
  return n < 1000 ? String(n) : `${(n / 1000).toFixed(1)}k`;
}

function dollars(micro: number): string {
  return (micro / 1_000_000).toFixed(4);
}

/** The estimate as stored in a run event (`estimated`, or `autoApproved`'s `estimate`), for the dashboard to compare. */
export function estimateJson(e: PlanEstimate): Json {
  const range = (r: Range | null): Json => (r ? { low: r.low, high: r.high } : null);
  return {
    durationMs: range(e.durationMs),
    tokens: range(e.tokens),
    costMicroUsd: range(e.costMicroUsd),
    noHistory: [...e.noHistory],
    ...(e.basis && { basis: e.basis.map((b) => ({ step: b.step, from: b.from })) }),
  };
}
