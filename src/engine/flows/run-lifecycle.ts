/**
 * A run from approval to report: starts its driver, answers the dispatcher's holds (a breakpoint pauses the run and
 * shows the step; steps waiting for approval re-open review), and at the end stores the outcome and the report.
 */
import { planWarnings } from '../plan/tool-warnings.ts';
import { validatePlan, type ValidatedPlan } from '../plan/validate-plan.ts';
import type {
  Ledgers,
  PinnedTool,
  RunEndWrite,
  RunOwnership,
  RunRecords,
  RunSteering,
  StepLog,
  StoredRun,
} from '../ports.ts';
import type { SpendLedger } from '../spend.ts';
import { createDispatchState, type DispatchState } from '../run/dispatch-state.ts';
import { createStreamingDispatch } from '../run/early-start.ts';
import { outputsOf } from '../run/dispatch-schedule.ts';
import { producedFiles } from '../run/produced-files.ts';
import { breakpointView, describeHolds } from '../run/holds.ts';
import { toPlanCard } from '../run/plan-card.ts';
import { atFirstReview, heldActions } from '../run/run-actions.ts';
import { policiesFor } from '../run/step-policies.ts';
import { cut } from '../text.ts';
import {
  PLANNED_STATUSES,
  STEERABLE_STATUSES,
  type ReviewPreference,
  type RunStatus,
  type ToolInfo,
} from '../types.ts';
import { grantCheckFor } from './assistant-grants.ts';
import type { LlmForRun, StewardDeps } from './deps.ts';
import type { PlanEstimates } from './plan-estimates.ts';
import { breakpointOffers } from './breakpoint-offers.ts';
import { EarlyRun, startedSteps } from './early-run.ts';
import { HeldSettlement } from './metered-llm.ts';
import { headedStream, reportHeading, writeReport } from './report.ts';
import { untilStored } from './until-stored.ts';
import type { ReviewTimers } from './review-timers.ts';
import { RunDriver, type HoldEffect } from './run-driver.ts';
import type { RunDrivers } from './run-drivers.ts';
import type { RunLeases } from './run-leases.ts';
import type { RunMessages } from './run-messages.ts';
import { spendOutlookFor } from './spend-check.ts';
import type { ConnectionWaits } from './connection-waits.ts';

/** Starts and finishes the runs of this process. */
export class RunLifecycle {
  constructor(
    private readonly deps: Pick<
      StewardDeps,
      'tools' | 'notifier' | 'clock' | 'log' | 'settings' | 'telemetry' | 'newId'
    > & {
      store: RunRecords & StepLog & RunSteering & RunOwnership & SpendLedger & Pick<Ledgers, 'settleTokens'>;
      estimates?: PlanEstimates;
    },
    private readonly llmFor: LlmForRun,
    private readonly drivers: RunDrivers,
    private readonly leases: RunLeases,
    private readonly timers: ReviewTimers,
    private readonly messages: RunMessages,
    /**
     * Told as a driver starts, so decisions queued while it was starting are applied (and a delegated run whose
     * parent is paused starts paused); for a restored or delegated run, before it starts anything.
     */
    private readonly hooks: {
      /** `fresh`: a run that had no driver before (started from planning or review here), not restored or delegated. */
      afterStart: (run: StoredRun, fresh: boolean) => Promise<void>;
      /** Applies the decisions other processes queued for a run held here (a step's start was held by one). */
      applyQueued?: (runId: string) => Promise<void>;
      /** Told once a run's report is sent and it owes nothing more (a delegate step waiting for it looks again). */
      afterReport?: (runId: string, requester: StoredRun['requester']) => void;
      /** Steps waiting for their requester to connect a server that connects per person. */
      waits?: ConnectionWaits;
    } = { afterStart: async () => undefined },
  ) {}

  /**
   * Starts driving an approved run (or continues one restored after a restart, given its state), under the lease
   * this process holds on it; a run this process does not hold is left alone (its holder drives it).
   */
  start(run: StoredRun, v: ValidatedPlan, pins: readonly PinnedTool[], state?: DispatchState): void {
    const { settings, tools } = this.deps;
    const initial =
      state ??
      createDispatchState(v.plan, policiesFor(v.plan, tools.listTools()), {
        maxParallel: settings.maxParallel,
        maxAttempts: settings.maxAttempts,
        approvedRisk: run.approvedRisk ?? v.risk,
        breakpoints: run.breakpoints,
      });
    this.drive(run, initial, pins, (final, ended) => this.finish(run, final, ended), true, state !== undefined);
  }

  /**
   * Starts driving a run whose plan is still being written (revision 0, no steps yet), so steps let in early start
   * through it and Stop, shutdown and takeovers treat it as any run. Undefined when the preference reviews every
   * plan (nothing may start early) or this process does not hold the run. `catalog`: the tools as the planner was
   * shown them, when it was asked before now (the steps that start early are pinned from these).
   */
  async startStreaming(run: StoredRun, catalog?: readonly ToolInfo[]): Promise<EarlyRun | undefined> {
    const { store, settings } = this.deps;
    const preference = await reviewPreferenceOf(store, run);
    if (preference === 'all' || this.leases.fenceOf(run.id) === undefined) return undefined;
    // An Assistant's steps start only after its plan is checked against its grants as a whole.
    if (run.assistant) return undefined;
    const initial = createStreamingDispatch({ maxParallel: settings.maxParallel, maxAttempts: settings.maxAttempts });
    // A run stopped before its plan was whole ends as any run; one still planning or cancelled ends nowhere here.
    const finish = async (final: DispatchState) => {
      const now = await store.getRun(run.id);
      if (now && (PLANNED_STATUSES as readonly RunStatus[]).includes(now.status)) await this.finish(run, final);
    };
    // No decisions queue for a run being planned here (they are decided at once), so none are drained.
    // Its end is not written with its last steps' ends: the run may still be planning (then nothing ends here).
    const driver = this.drive({ ...run, revision: 0 }, initial, [], finish, false, false, false);
    return driver && new EarlyRun(run, preference, driver, { ...this.deps, drivers: this.drivers }, catalog);
  }

  private drive(
    run: StoredRun,
    initial: DispatchState,
    pins: readonly PinnedTool[],
    finish: (final: DispatchState, ended: boolean) => Promise<void>,
    drain = true,
    restored = false,
    endWithSteps = true,
  ): RunDriver | undefined {
    const fence = this.leases.fenceOf(run.id);
    if (fence === undefined) {
      this.deps.log('error', `run ${run.id}: not started here: this process does not hold its lease`);
      return undefined;
    }
    // Steps on servers that connect per person run as the requester: never as whoever approved or steered the run.
    const driven = { runId: run.id, revision: run.revision, conversation: run.conversation, pins, fence };
    const driver = new RunDriver({ ...driven, actingAs: run.requester }, initial, {
      ...this.deps,
      llm: this.llmFor(run),
      onHold: (d, hold) =>
        void this.onHold(run, d, hold).catch((err: unknown) =>
          this.deps.log('error', `run ${run.id}: hold not handled: ${(err as Error).message}`),
        ),
      onConnection: (d, wait) =>
        void this.hooks.waits
          ?.ask(run, d, wait)
          .catch((err: unknown) =>
            this.deps.log('error', `run ${run.id}: the connect link was not sent: ${(err as Error).message}`),
          ),
      onLost: () => this.lose(run.id),
      checkGrant: grantCheckFor(this.deps, run),
      applyQueued: () => this.hooks.applyQueued?.(run.id) ?? Promise.resolve(),
      ...(endWithSteps && { runEnd: (outcome: RunStatus) => this.endWrite(outcome) }),
    });
    this.drivers.track(
      driver,
      run,
      (final) => finish(final, driver.endStored),
      (err) => {
        this.deps.log(
          'error',
          `run ${run.id}: could not finish: ${(err as Error).message}; letting it go to be taken over`,
        );
        this.abandon(run.id);
      },
    );
    if (drain && (restored || run.parentRunId !== undefined)) {
      // A run taken over or restored may have decisions queued while it had no driver (a Stop pressed through another
      // process while its holder was down): they apply before anything starts, so no call goes out after that Stop.
      // Likewise a delegated run approved while its parent is paused: it is paused before its first call.
      void this.hooks.afterStart(run, false).finally(() => {
        if (driver.current.phase !== 'done') driver.start();
      });
    } else {
      driver.start();
      if (drain) void this.hooks.afterStart(run, true);
    }
    return driver;
  }

  /**
   * Work on a held run ended here without finishing it (the database or the channel failed past their retries): its
   * lease is let go, so a process (this one too) takes it over and carries it on. Kept, it would be renewed for as long
   * as this process lives with nobody driving the run.
   */
  abandon(runId: string): void {
    // Left to lapse rather than released: a fault that persists is then tried again once a lease, not in a tight loop.
    this.leases.forget(runId);
  }

  /** Another process took the run over: stop driving it here, at once, recording nothing more. */
  lose(runId: string): void {
    if (!this.drivers.has(runId)) return;
    this.deps.log('warn', `run ${runId}: another process took it over; letting it go here`);
    this.drivers.letGo(runId);
    this.hooks.waits?.forget(runId);
    this.deps.estimates?.forget(runId);
    this.timers.clear(runId);
    this.leases.forget(runId);
  }

  /**
   * The run ended: store its status, then write, store and send its report. The report is noted as owed with the
   * status change, so a kill at any point leaves a run that is still active (recovery drives it to its end again)
   * or one that ended owing its report (recovery writes it, or sends the one stored).
   */
  private async finish(run: StoredRun, final: DispatchState, ended = false): Promise<void> {
    const { store } = this.deps;
    const status: RunStatus = final.outcome ?? 'failed';
    // The database may be away as the run ends: the end waits for it rather than leaving the run ownerless.
    const patiently = <T>(write: () => Promise<T>) => this.patiently(run, write);
    const fence = this.leases.fenceOf(run.id);
    this.hooks.waits?.forget(run.id);
    if (fence === undefined) return;
    // Fenced: a process that lost the run ends nothing (a `fenced` error); its new holder finishes it. The report is
    // noted as owed in the same write, so the run is never seen ended without owing it. Usually that write was the
    // one that stored the last steps' ends (`ended`).
    if (!ended) {
      const { from, event, at } = this.endWrite(status);
      await patiently(() => store.transition(run.id, from, status, { at, fence, reportDue: true, event }));
    }
    await this.messages.status(run, status, this.deps.estimates?.ended(run.id));
    await this.report(run, status, { final });
  }

  /** How a run's end is stored: from any status a plan is in, with the report owed and the dispatcher's outcome. */
  private endWrite(status: RunStatus): RunEndWrite {
    const event = { type: 'dispatchFinished', payload: { outcome: status } };
    return { status, from: [...PLANNED_STATUSES], event, at: this.deps.clock() };
  }

  private patiently<T>(run: StoredRun, write: () => Promise<T>): Promise<T> {
    return untilStored(write, {
      signal: this.drivers.closing,
      onWait: (err) => this.deps.log('warn', `run ${run.id}: cannot store its end (${err.message}); retrying`),
    });
  }

  /**
   * Reports an ended run: writes the report from its final state (the synthesizer, else a plain one) and stores it,
   * the first stored report standing; or takes the report already stored. Then sends it and clears what the run owed.
   */
  async report(run: StoredRun, status: RunStatus, from: { final: DispatchState } | { stored: string }): Promise<void> {
    const { store, clock } = this.deps;
    // A process that lost the run (it stalled past its lease) must not post the report its new holder posts.
    const fence = this.leases.fenceOf(run.id);
    // A report written now is shown as it is written where the channel can; a stored one is sent whole.
    const preview = 'final' in from ? this.messages.openReport(run, status) : null;
    let delivered = false;
    try {
      let text: string;
      if ('stored' in from) {
        text = from.stored;
        if (fence !== undefined) await this.patiently(run, () => store.assertHeld(run.id, fence));
      } else {
        const input = { request: run.request, state: from.final, outcome: status };
        // An Assistant's report says whose it is, in every channel and in the stored text alike: streamed too.
        const heading = reportHeading(run.assistant);
        // The synthesizer's call is settled by the statement that stores the report, which follows it at once (a
        // kill between the two leaves its reservation standing, as a kill during the call does). Any other call
        // settles on its own.
        const held = new HeldSettlement(store, this.deps.newId);
        const written = await writeReport(
          this.llmFor(run, { settle: held.settle }),
          preview ? { ...input, onText: headedStream(heading, (d) => preview.append(d)) } : input,
        );
        // The same statement reads the lease: a process that lost the run stores and posts nothing.
        const said = heading + written;
        const settled = held.take();
        text = await this.patiently(run, () => store.storeReport(run.id, said, status, clock(), fence, settled));
      }
      // The preview only showed the model's words: finishing it delivers the stored report, exactly as send would.
      const report = { kind: 'report' as const, runId: run.id, status, text, ...('stored' in from && { again: true }) };
      await (preview ? preview.finish(report) : this.messages.send(run.conversation, report));
      delivered = true;
      this.deps.log('info', `run ${run.id}: report sent (${status}, fence ${fence ?? 'none'})`);
      if ('final' in from) await this.sendFiles(run, from.final);
    } finally {
      if (preview && !delivered) await preview.fail().catch(() => undefined);
    }
    await this.patiently(run, () => store.markReportSent(run.id, clock()));
    this.leases.forget(run.id);
    this.hooks.afterReport?.(run.id, run.requester);
  }

  /** The files the run produced, after its report; a failure to attach them is logged and the report stands. */
  private async sendFiles(run: StoredRun, final: DispatchState): Promise<void> {
    const files = producedFiles(final);
    if (files.length === 0) return;
    try {
      await this.messages.send(run.conversation, { kind: 'files', runId: run.id, files });
    } catch (err) {
      this.deps.log('warn', `run ${run.id}: its files were not attached (${(err as Error).message})`);
    }
  }

  /** The dispatcher holds: at a breakpoint the run pauses and shows the step; riskier steps ask for approval. */
  private async onHold(run: StoredRun, driver: RunDriver, hold: HoldEffect): Promise<void> {
    const { store, clock, tools } = this.deps;
    const current = (await store.getRun(run.id)) ?? run;
    if (hold.type === 'showBreakpoint') {
      await store.transition(run.id, ['running'], 'paused', { at: clock() });
      await this.messages.status(current, 'paused');
      await this.messages.send(run.conversation, {
        kind: 'breakpoint',
        runId: run.id,
        revision: driver.revision,
        stepId: hold.stepId,
        before: hold.when === 'before',
        output: cut(breakpointView(driver.current, hold.stepId, hold.when), 2500),
        actions: ['resume', 'stop', 'edit'],
      });
      return;
    }
    // From awaiting_review too: after a restart the hold is found again and must be shown again.
    const moved = await store.transition(run.id, [...STEERABLE_STATUSES], 'awaiting_review', {
      at: clock(),
    });
    if (!moved) return;
    const v = validatePlan(driver.current.plan, tools.listTools());
    if (!v.ok) return;
    // Nobody approved this plan yet (steps started early while it was written): an ordinary review card, with
    // Approve, Amend, Edit and Cancel, what ran shown done. Otherwise a card for the steps held mid-run.
    const first = atFirstReview(current);
    const holds = first ? hold.holds.filter((h) => h.why !== 'review') : hold.holds;
    const why = describeHolds(driver.current, holds, tools.listTools(), driver.pinned);
    const estimate = await this.deps.estimates?.forCard(run.id, driver.revision, v.value, driver.current.steps);
    // A first review says what the run would spend against the caps (it may wait for an approver because of one).
    const spend = first ? await spendOutlookFor(this.deps, run, estimate) : undefined;
    // A first review offers suggested breakpoints as any review card does (on the steps not started).
    const started = startedSteps(driver.current);
    const set = driver.current.breakpoints;
    const offers = first ? await breakpointOffers(this.deps, run.requester, v.value.plan, { set, started }) : [];
    await this.messages.send(
      run.conversation,
      toPlanCard(run.id, driver.revision, v.value, {
        breakpoints: set,
        suggestedBreakpoints: offers,
        assistant: run.assistant,
        delegatedBy: run.parentRunId,
        needsReview: true,
        amendmentsLeft: this.messages.amendmentsLeft(current),
        requester: run.requester,
        ...(first ? {} : { actions: heldActions(this.messages.amendmentsLeft(current)) }),
        warnings: planWarnings(v.value.plan, tools.listTools()),
        note: [...(first ? [ranEarlyNote(driver.current)] : []), ...why].join('\n') || undefined,
        outputs: outputsOf(driver.current),
        progress: driver.current.steps,
        estimate,
        spend,
      }),
    );
    // A hold found again after a takeover keeps the deadline it had; a new hold gets a new one.
    const kept = current.status === 'awaiting_review' ? (current.reviewDueAt ?? undefined) : undefined;
    this.timers.arm({ ...current, revision: driver.revision }, driver.revision, v.value.risk === 'high', kept);
  }
}

/** The requester's review preference: as read with the run when it was (`getRun`), else read now; `risky` unset. */
export async function reviewPreferenceOf(
  store: Pick<RunSteering, 'getReviewPreference'>,
  run: Pick<StoredRun, 'requester' | 'reviewPreference'>,
): Promise<ReviewPreference> {
  const read =
    run.reviewPreference !== undefined ? run.reviewPreference : await store.getReviewPreference(run.requester);
  return read ?? 'risky';
}

/** What a first review says of the steps that ran while its plan was written (read-only, closed-world lookups). */
function ranEarlyNote(state: DispatchState): string {
  const started = startedSteps(state);
  // After a restart, steps that were in flight wait to run again with the rest: then nothing is said of them here.
  if (started.length === 0) return 'Nothing else runs until you approve.';
  const running = started.filter((id) => state.steps[id]?.status === 'running');
  const what = started.length === 1 ? 'read-only step' : 'read-only steps';
  const still = running.length > 0 ? ` (${running.join(', ')} still running)` : '';
  return `${started.join(', ')} started while the plan was written: ${what}, their results kept${still}. Nothing else runs until you approve; an amendment or edit changes only what has not run.`;
}
