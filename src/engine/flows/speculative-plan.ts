/**
 * The planner started beside the front desk (issue 31). A request that needs a plan used to pay the front desk's whole
 * round trip before the planner was even asked; now both are asked at once. The plan's streamed steps are held here
 * until the front desk hands the request over, so nothing starts for a request it answers; an answered request drops
 * the planner call (what the provider charged for it is counted like any call cut short).
 */
import type { Step } from '../plan/plan-schema.ts';
import type { ToolInfo } from '../types.ts';
import type { PlanOutcome, PlanStreaming } from './planner.ts';

/** Why a dropped planner call was abandoned (its signal's reason). */
export const ANSWERED_BY_FRONT_DESK = 'the front desk answered the request';

export class SpeculativePlan implements PlanStreaming {
  private readonly dropper = new AbortController();
  /** Steps streamed before the hand-over, in order. */
  private held: Step[] = [];
  private handedOver = false;
  private target: PlanStreaming | undefined;
  /** The first answer was refused before the hand-over: its steps are gone, and none will come. */
  private refusedEarly = false;
  /** The tools as the planner was shown them: the steps that start early are pinned from these. */
  readonly catalog: readonly ToolInfo[];
  private readonly outcome: Promise<PlanOutcome>;

  constructor(
    write: (signal: AbortSignal, streaming: PlanStreaming) => Promise<PlanOutcome>,
    signal: AbortSignal,
    catalog: readonly ToolInfo[],
  ) {
    this.catalog = catalog;
    this.outcome = write(AbortSignal.any([signal, this.dropper.signal]), this);
    // Dropped or not, a failure is read by whoever hands over; never left unhandled.
    this.outcome.catch(() => undefined);
  }

  onStep(step: Step): void {
    if (this.handedOver) this.target?.onStep(step);
    else if (!this.refusedEarly) this.held.push(step);
  }

  refused(): Step[] {
    if (this.handedOver) return this.target?.refused() ?? [];
    // Nothing held ever started.
    this.refusedEarly = true;
    this.held = [];
    return [];
  }

  /**
   * The front desk handed the request over: the steps streamed so far go to `target` (the run's early start, if it
   * may start steps), in order, and those still to come as they arrive. Resolves with the plan.
   */
  handOver(target: PlanStreaming | undefined): Promise<PlanOutcome> {
    this.handedOver = true;
    this.target = target;
    const held = this.held;
    this.held = [];
    for (const step of held) target?.onStep(step);
    return this.outcome;
  }

  /** The front desk answered: the planner call is abandoned, and nothing it streamed starts. */
  drop(): void {
    this.held = [];
    this.dropper.abort(new Error(ANSWERED_BY_FRONT_DESK));
  }
}
