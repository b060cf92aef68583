/**
 * Steps that start while the plan is still being written: the planner's streamed steps go through the early-start
 * gate (`run/early-start.ts`) to the run's own driver, each step's tool pinned before the step is sent in. At the
 * end of the answer the gate's verdict is handed to the flow that owns the run (`ReviewFlow.offerEarly`).
 */
import type { Step } from '../plan/plan-schema.ts';
import { newPins } from '../plan/tool-pins.ts';
import type { RunRecords, StoredRun } from '../ports.ts';
import type { DispatchEvent, DispatchState } from '../run/dispatch-state.ts';
import {
  createEarlyStart,
  earlyStartTransition,
  type EarlyStartState,
  type EarlyStartTransition,
} from '../run/early-start.ts';
import type { Json, ReviewPreference, ToolInfo } from '../types.ts';
import type { PlanOutcome, PlanStreaming } from './planner.ts';
import type { StewardDeps } from './deps.ts';
import type { RunDriver } from './run-driver.ts';
import type { RunDrivers } from './run-drivers.ts';

/** The steps of a dispatch that started (a step skipped because its dependency failed never did). */
export function startedSteps(state: DispatchState): string[] {
  return Object.entries(state.steps)
    .filter(([, rt]) => rt.status !== 'pending' && rt.status !== 'skipped')
    .map(([id]) => id);
}

/** One run's plan being written, with the driver its early steps run on. */
export class EarlyRun implements PlanStreaming {
  private gate: EarlyStartState;
  /** Arrivals in order: a step's pins are stored before it is sent in, and the next arrival waits for that. */
  private chain: Promise<void> = Promise.resolve();
  private dropped = false;
  /** Steps that arrived while the previous batch was being let in: the next batch. */
  private arriving: Step[] = [];
  /**
   * The tools as the planner was shown them. Every pin of this run is taken from here: a step that starts early
   * (read-only by its own claim) could change another tool's definition before the plan is whole, and that change
   * must show as a change at its step, not be pinned as approved.
   */
  readonly catalog: readonly ToolInfo[];

  /** When the first step was let in to start (null while none was): the run's start, for its estimate. */
  firstStartedAt: Date | null = null;

  constructor(
    readonly run: StoredRun,
    readonly preference: ReviewPreference,
    readonly driver: RunDriver,
    private readonly deps: Pick<StewardDeps, 'tools' | 'clock' | 'log'> & { store: RunRecords; drivers: RunDrivers },
    /** The tools as the planner was shown them, when it was asked before this (by default, the tools now). */
    catalog?: readonly ToolInfo[],
  ) {
    this.gate = createEarlyStart(preference);
    this.catalog = catalog ?? deps.tools.listTools();
  }

  /** Whether the driver still runs (it was not dropped, nor let go at shutdown or a takeover). */
  get active(): boolean {
    return !this.dropped && this.deps.drivers.get(this.run.id) === this.driver;
  }

  /** The steps that started early so far. */
  started(): string[] {
    return startedSteps(this.driver.current);
  }

  onStep(step: Step): void {
    this.arriving.push(step);
    // A batch is already queued: it takes this step too.
    if (this.arriving.length > 1) return;
    this.chain = this.chain.then(async () => {
      const steps = this.arriving;
      this.arriving = [];
      try {
        await this.arrive(steps);
      } catch (err) {
        const ids = steps.map((s) => s.id).join(', ');
        this.deps.log('warn', `run ${this.run.id}: steps ${ids} not started early: ${(err as Error).message}`);
      }
    });
  }

  refused(): Step[] {
    const started = new Set(this.started());
    if (started.size === 0) this.drop();
    return this.driver.current.plan.steps.filter((s) => started.has(s.id));
  }

  /** Lets go of the driver; only while nothing started, so nothing is left unrecorded. */
  drop(): void {
    this.dropped = true;
    this.deps.drivers.letGo(this.run.id);
  }

  /**
   * The answer ended: the gate's verdict on the whole plan (with `forceReview`, it waits for a person whatever its
   * risk). Its dispatcher events are not sent yet (`send`).
   */
  async finish(planned: PlanOutcome, forceReview = false): Promise<EarlyStartTransition> {
    await this.chain;
    const plan = planned.ok ? planned : { ok: false as const, error: planned.error };
    const t = earlyStartTransition(
      this.gate,
      { type: 'planFinished', plan },
      // Judged, like the plan, by the tools the planner was shown; a definition changed since holds its step.
      { tools: this.catalog, dispatch: this.driver.current, forceReview },
    );
    this.gate = t.gate;
    return t;
  }

  /** Hands events to the driver, in order. */
  send(events: readonly DispatchEvent[]): void {
    for (const event of events) this.driver.send(event);
  }

  /**
   * Lets in the steps that arrived since the last batch, in order. Steps that arrive together (the steps held while
   * the front desk decided, a fan-out, or a delta that completed several) are pinned, recorded and sent in as one:
   * one statement each, and one dispatcher transition, whose wave stores all their starts in one statement; one by
   * one, sixteen steps took about 8 ms each to get going (bench section 11, fan-out of 16).
   */
  private async arrive(steps: readonly Step[]): Promise<void> {
    // Stopped (or let go): nothing more is let in, nor recorded as started.
    if (!this.active || this.driver.current.streaming !== true) return;
    const { tools, store, clock } = this.deps;
    const catalog = tools.listTools();
    const events: DispatchEvent[] = [];
    for (const step of steps) {
      // The gate reads no dispatcher state when a step arrives, so the batch goes through it before any is sent in.
      const t = earlyStartTransition(
        this.gate,
        { type: 'stepArrived', step },
        { tools: catalog, dispatch: this.driver.current },
      );
      this.gate = t.gate;
      events.push(...t.dispatch);
    }
    for (const event of joinArrivals(events)) {
      if (event.type === 'stepsArrived') {
        const pins = newPins({ ...this.driver.current.plan, steps: event.steps }, this.catalog, this.driver.pinned);
        // No step starts unpinned: a definition that changes after this holds the step, as after any approval.
        if (pins.length > 0) await store.pinTools(this.run.id, pins, clock());
        // What started before any plan was stored is on record all the same, whatever becomes of the plan.
        await store.appendEvent(this.run.id, 'stepsStartedEarly', { steps: event.steps as unknown as Json }, clock());
        if (!this.active) return;
        this.firstStartedAt ??= clock();
        this.driver.pin(pins);
      }
      this.driver.send(event);
    }
  }
}

/** The gate's events with each run of `stepsArrived` joined into one (same steps, same order). */
function joinArrivals(events: readonly DispatchEvent[]): DispatchEvent[] {
  const out: DispatchEvent[] = [];
  for (const event of events) {
    const last = out.at(-1);
    if (event.type === 'stepsArrived' && last?.type === 'stepsArrived') {
      out[out.length - 1] = {
        type: 'stepsArrived',
        steps: [...last.steps, ...event.steps],
        policies: { ...last.policies, ...event.policies },
      };
    } else out.push(event);
  }
  return out;
}
