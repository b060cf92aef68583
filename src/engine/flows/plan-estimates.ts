/**
 * Estimates for plan cards, and what each run was promised. History costs a statement, so it is read at most once
 * per `HISTORY_TTL_MS` per process: a card right after another reuses it. The estimate given at approval is kept
 * in memory until the run ends, so its end can say "took 5.2 s, estimated 3–8 s".
 */
import type { EstimateHistory, EstimateHistoryData, PlanEstimate } from '../estimate-history.ts';
import type { PricedModel } from '../model-cost.ts';
import type { ValidatedPlan } from '../plan/validate-plan.ts';
import type { StepRuntime } from '../run/dispatch-state.ts';
import { estimatePlan } from '../run/estimates.ts';
import type { Log } from './deps.ts';

/** How long one read of the history serves the cards that follow. */
export const HISTORY_TTL_MS = 30_000;

/** How long a run took from its start, and what its card estimated when it started. */
export interface RunTook {
  ms: number;
  estimate?: PlanEstimate;
}

/** The estimates of one process: the history cache, the last card's estimate per run, and each run's start. */
export class PlanEstimates {
  private cache: { at: number; data: Promise<EstimateHistoryData | undefined> } | undefined;
  private readonly shown = new Map<string, { revision: number; estimate: PlanEstimate }>();
  private readonly started = new Map<string, { at: number; estimate: PlanEstimate }>();

  constructor(
    private readonly deps: {
      history?: EstimateHistory;
      clock: () => Date;
      log: Log;
      prices: readonly PricedModel[];
      /** The dispatcher's `maxParallel` (settings), so the span counts the waves a wide fan-out runs in. */
      maxParallel?: number;
      /** The price of a model without one, for what a run would spend against caps. */
      defaultPricePerMillion?: number;
    },
  ) {}

  /**
   * The estimate for a card of this revision (steps already ended left out), remembered for its approval; undefined
   * without history (no port, or the read failed: a card is never held up for want of an estimate).
   */
  async forCard(
    runId: string,
    revision: number,
    v: ValidatedPlan,
    progress?: Readonly<Record<string, StepRuntime>>,
  ): Promise<PlanEstimate | undefined> {
    const done = new Set(
      Object.entries(progress ?? {})
        .filter(([, s]) => s.status !== 'pending' && s.status !== 'running')
        .map(([id]) => id),
    );
    const estimate = await this.of(v, done);
    if (estimate) this.shown.set(runId, { revision, estimate });
    return estimate;
  }

  /**
   * The estimate of a plan none of whose steps ended, not remembered for any run: a workflow's fire stores it with
   * its claim (before it knows whether it won it), then starts with it. Undefined without history.
   */
  async of(v: ValidatedPlan, done: ReadonlySet<string> = new Set()): Promise<PlanEstimate | undefined> {
    const history = await this.history();
    if (!history) return undefined;
    const { prices, maxParallel, defaultPricePerMillion } = this.deps;
    return estimatePlan(v, history, prices, { done, maxParallel, defaultPricePerMillion });
  }

  /** The estimate the person saw on the card they approve (that revision's), else one made now (say, after a restart). */
  async atApproval(runId: string, revision: number, v: ValidatedPlan): Promise<PlanEstimate | undefined> {
    const shown = this.shown.get(runId);
    if (shown?.revision === revision) return shown.estimate;
    return this.forCard(runId, revision, v);
  }

  /**
   * The run started (now, or `at`) with this estimate (the first start counts: a later approval of held steps does
   * not).
   * Without one (no history to read) nothing is kept: the run's end then says nothing about estimates.
   */
  runStarted(runId: string, estimate: PlanEstimate | undefined, at: Date = this.deps.clock()): void {
    this.shown.delete(runId);
    if (estimate && !this.started.has(runId)) this.started.set(runId, { at: at.getTime(), estimate });
  }

  /** The run ended now: how long it took and what was estimated (undefined if it did not start in this process). */
  ended(runId: string): RunTook | undefined {
    const start = this.started.get(runId);
    this.forget(runId);
    if (!start) return undefined;
    const ms = Math.max(0, this.deps.clock().getTime() - start.at);
    return { ms, estimate: start.estimate };
  }

  /** The run is no longer this process's: nothing about it is kept. */
  forget(runId: string): void {
    this.shown.delete(runId);
    this.started.delete(runId);
  }

  private history(): Promise<EstimateHistoryData | undefined> {
    const { history, clock, log } = this.deps;
    if (!history) return Promise.resolve(undefined);
    const now = clock().getTime();
    if (this.cache && now - this.cache.at < HISTORY_TTL_MS) return this.cache.data;
    const data = history.readEstimateHistory().catch((err: unknown) => {
      log('warn', `plan estimates: history could not be read (${(err as Error).message}); cards show none`);
      this.cache = undefined;
      return undefined;
    });
    this.cache = { at: now, data };
    return data;
  }
}
