/**
 * What an estimate is made from (recent step durations and model token counts, read by the store) and what it says
 * (ranges a plan card shows). Types and the port only; `run/estimates.ts` does the arithmetic.
 */
/** A low and a high end: p50 and p90 of what recent runs took. */
export interface Range {
  low: number;
  high: number;
}

/** Recent durations of one tool's ended attempts (or of `llm` steps), in milliseconds. */
export interface DurationStats {
  p50Ms: number;
  p90Ms: number;
  samples: number;
}

/**
 * Recent token counts of one model role: per run for the planner, classifier and synthesizer (what a run spends on
 * them), per call for `llm_step` (one per llm step). `model` is the provider's model id the role used most recently.
 */
export interface RoleTokenStats {
  input: Range;
  output: Range;
  samples: number;
  model: string;
  /** The catalog name the router knew the model by, when recorded. */
  modelName?: string;
}

/** The model roles a run's estimate counts (a subset of `ModelRole`; quick answers' butler is not planned work). */
export type EstimatedRole = 'planner' | 'classifier' | 'synthesizer' | 'llm_step';

/** `llm` is the key of `llm` steps' durations among the tools'. */
export const LLM_STEP_KEY = 'llm';

/**
 * Everything the estimator reads: per tool durations, the same per tool and arguments (`byArgs[tool][argsKey]`, the
 * key the canonical JSON of the step's arguments as the plan wrote them; only groups with enough samples), per tool
 * and arguments' shape (`byShape[tool][shapeKey]`, the key the canonical JSON of `argShape`: the top-level argument
 * names with their values' JSON types; only groups with enough samples, of tools called with more than one shape),
 * and per role token counts.
 */
export interface EstimateHistoryData {
  tools: Readonly<Record<string, DurationStats>>;
  byArgs?: Readonly<Record<string, Readonly<Record<string, DurationStats>>>>;
  byShape?: Readonly<Record<string, Readonly<Record<string, DurationStats>>>>;
  roles: Readonly<Partial<Record<EstimatedRole, RoleTokenStats>>>;
}

/**
 * Which history a step's duration came from: its tool's calls with the very same arguments (`args`), with arguments
 * of the same shape (`similar`: the same top-level names, each value of the same JSON type, a reference counting as
 * its own type), or all its tool's calls (`tool`).
 */
export type EstimateBasis = 'args' | 'similar' | 'tool';

/** One step's `EstimateBasis`. */
export interface StepBasis {
  step: string;
  from: EstimateBasis;
}

/** The port: reads recent history in one go (the store answers it in one statement). */
export interface EstimateHistory {
  readEstimateHistory(): Promise<EstimateHistoryData>;
}

/**
 * A plan's estimate. `durationMs` is the plan's span over p50 .. over p90, its steps scheduled as the dispatcher
 * would within `maxParallel` (null when no step has history);
 * `costMicroUsd` is null when a model had no price (unknown, never zero). `noHistory` names the tools (or `llm`)
 * nothing recent says anything about: their steps count as instant.
 */
export interface PlanEstimate {
  durationMs: Range | null;
  tokens: Range | null;
  costMicroUsd: Range | null;
  noHistory: string[];
  /**
   * The steps estimated from history (not ended, with history), in plan order, each with the history it came from;
   * absent when none was.
   */
  basis?: StepBasis[];
  /**
   * What the run's model calls once it is planned (the llm steps, a reply's classification, the report) would count
   * against spend caps: a model without a price at the default price. Absent with no token history.
   */
  spendMicroUsd?: Range;
}
