/**
 * Review: show a plan, then approve, amend (re-plan, capped), edit (JSON, no model call) or cancel it.
 * Every decision names the revision it saw; the store refuses decisions on a stale revision.
 */
import type { InboundDecision } from '../channel.ts';
import { parseEdit } from '../plan/plan-edit.ts';
import type { Plan } from '../plan/plan-schema.ts';
import { newPins } from '../plan/tool-pins.ts';
import { planWarnings } from '../plan/tool-warnings.ts';
import { validatePlan, type ValidatedPlan } from '../plan/validate-plan.ts';
import type { PinnedTool, RunRecords, RunSteering, StoredRun } from '../ports.ts';
import type { SpendLedger } from '../spend.ts';
import { reviewNeeded } from '../run/early-start.ts';
import { outputsOf } from '../run/dispatch-schedule.ts';
import { changedTools } from '../run/holds.ts';
import type { PlanCardOptions } from '../run/plan-card.ts';
import { toPlanCard } from '../run/plan-card.ts';
import { atFirstReview, sentence, who } from '../run/run-actions.ts';
import { describeStatus } from '../run/run-status.ts';
import { estimateJson } from '../run/estimates.ts';
import { policiesFor } from '../run/step-policies.ts';
import type { RunStatus } from '../types.ts';
import { toolsForRun } from './assistant-grants.ts';
import { breakpointOffers } from './breakpoint-offers.ts';
import type { StewardDeps } from './deps.ts';
import type { PlanEstimates } from './plan-estimates.ts';
import type { PlanEstimate } from '../estimate-history.ts';
import type { EarlyRun } from './early-run.ts';
import type { PlanOutcome, PlanWriter } from './planner.ts';
import type { ReviewTimers } from './review-timers.ts';
import type { RunDrivers } from './run-drivers.ts';
import { reviewPreferenceOf, type RunLifecycle } from './run-lifecycle.ts';
import type { RunMessages } from './run-messages.ts';
import { brakeCardParts } from './brake-raise.ts';
import { spendApproval, spendOutlookFor } from './spend-check.ts';

/** Who must look at a plan before it runs: the requester's preference, always, or nobody (a workflow's saved approval). */
export type ReviewRule = 'preference' | 'always' | 'saved';

/** Planning and review of a run's plan. Decision handlers return null when accepted, else the refusal. */
export class ReviewFlow {
  constructor(
    private readonly deps: Pick<StewardDeps, 'tools' | 'clock' | 'log' | 'settings' | 'delegations'> & {
      store: RunRecords & RunSteering & SpendLedger;
      estimates?: PlanEstimates;
    },
    private readonly writePlan: PlanWriter,
    private readonly drivers: RunDrivers,
    private readonly timers: ReviewTimers,
    private readonly messages: RunMessages,
    private readonly lifecycle: RunLifecycle,
  ) {}

  /**
   * Shows a validated revision: starts it at once when its review rule allows, else waits for review. The rule:
   * the requester's preference (a new plan), `always` (amended and edited plans), or `saved` (a workflow's fire,
   * approved when the workflow was saved; `fire-review.ts` decided it needs no person now).
   */
  async offer(
    of: string | StoredRun,
    revision: number,
    v: ValidatedPlan,
    from: RunStatus,
    rule: ReviewRule = 'preference',
    note?: string,
  ): Promise<void> {
    const { store, clock } = this.deps;
    // A run as the write of its revision just left it needs no read (`saveRevision` returns it); an id is read.
    const run = typeof of === 'string' ? await store.getRun(of) : of;
    if (!run) return;
    const runId = run.id;
    const preference = rule === 'preference' ? await reviewPreferenceOf(store, run) : null;
    const estimate = await this.deps.estimates?.forCard(runId, revision, v);
    const spend = await spendOutlookFor(this.deps, run, estimate);
    // High risk always waits for a person, whatever the preference: fail closed. The same rule ends early start.
    // A plan that would pass a spend cap waits too, for an approver, rather than being stopped midway.
    const review =
      (preference ? reviewNeeded(preference, v.risk) : rule === 'always' || v.risk === 'high') || !!spend?.over;
    if (!review) {
      // One write: the run starts with its approved risk, its tools pinned, the reason it needed no review and the
      // estimate it started with (kept for comparing with what it took).
      const pins = newPins(v.plan, this.deps.tools.listTools(), new Map());
      const payload = { revision, risk: v.risk, preference: preference ?? rule };
      const event = {
        type: 'autoApproved',
        payload: estimate ? { ...payload, estimate: estimateJson(estimate) } : payload,
      };
      if (!(await store.transition(runId, [from], 'running', { at: clock(), approvedRisk: v.risk, pins, event }))) {
        return;
      }
      this.deps.estimates?.runStarted(runId, estimate);
      const shown = await this.showCard(run, 'running', revision, v, {
        needsReview: false,
        autoStarted: true,
        note,
        estimate,
        spend,
      });
      if (shown) this.lifecycle.start({ ...run, revision, approvedRisk: v.risk }, v, pins);
      return;
    }
    // The person's own breakpoints on steps still in the plan; suggested ones are only offered on the card.
    const breakpoints = run.breakpoints.filter((b) => v.plan.steps.some((s) => s.id === b.stepId));
    await store.setBreakpoints(runId, breakpoints, clock());
    const suggestedBreakpoints = await breakpointOffers(this.deps, run.requester, v.plan, { set: breakpoints });
    if (!(await store.transition(runId, [from], 'awaiting_review', { at: clock() }))) return;
    const shown = await this.showCard(run, 'awaiting_review', revision, v, {
      needsReview: true,
      breakpoints,
      suggestedBreakpoints,
      note,
      estimate,
      spend,
    });
    if (shown) this.timers.arm(run, revision, v.risk === 'high');
  }

  /**
   * Starts a run already moved to `running` on an approval given earlier (a workflow's fire, started as it was
   * claimed, with the estimate stored in its claim): its card, then its driver; a card the platform refuses fails the
   * run, as for any auto-approved plan.
   */
  async startApproved(
    run: StoredRun,
    v: ValidatedPlan,
    pins: PinnedTool[],
    note: string,
    estimate: PlanEstimate | undefined,
  ): Promise<void> {
    this.deps.estimates?.runStarted(run.id, estimate);
    const shown = await this.showCard(run, 'running', run.revision, v, {
      needsReview: false,
      autoStarted: true,
      note,
      estimate,
    });
    if (shown) this.lifecycle.start(run, v, pins);
  }

  /**
   * The plan's answer ended while steps of it had started early (`early-run.ts`): the run goes on as auto-approved,
   * waits for review with what ran shown done, or (the plan invalid) stops. False when nothing started: the early
   * driver is dropped and the plan goes the usual way (repaired or offered) as if nothing had streamed.
   */
  async offerEarly(early: EarlyRun, planned: PlanOutcome): Promise<boolean> {
    const { store, clock } = this.deps;
    // A plan that would pass a spend cap waits for review (an approver's), even when it could go on unreviewed.
    const estimate = planned.ok ? await this.deps.estimates?.forCard(early.run.id, 0, planned.value) : undefined;
    const spend = planned.ok ? await spendOutlookFor(this.deps, early.run, estimate) : undefined;
    // Only while something is left to start: a plan whose every step already ran has only its report to write.
    const left = planned.ok && planned.value.plan.steps.some((st) => !early.started().includes(st.id));
    const t = await early.finish(planned, !!spend?.over && left);
    const effect = t.effects[0];
    const started = early.started();
    if (!effect || started.length === 0 || !early.active) {
      early.drop();
      return false;
    }
    const { run } = early;
    if (effect.type === 'stopStarted') {
      // Stored as it ran, so the history, a restart and the report see the steps that started.
      await store.saveRevision(
        run.id,
        0,
        early.driver.current.plan,
        'started early; the whole plan was invalid',
        clock(),
      );
      if (!(await store.transition(run.id, ['planning'], 'stopping', { at: clock() }))) return true;
      early.send(t.dispatch);
      const text = `The plan turned out invalid after read-only steps had started (${started.join(', ')}): ${effect.reason}. They are stopped and nothing else runs; finished results are kept.`;
      await this.messages.notice(run, 'error', text);
      await this.messages.status(run, 'stopping');
      return true;
    }
    if (!planned.ok) return true;
    const v = planned.value;
    await store.saveRevision(run.id, 0, v.plan, 'planned', clock());
    // The rest of the plan's tools, pinned as the planner was shown them (an early step may have changed one since).
    const pins = newPins(v.plan, early.catalog, early.driver.pinned);
    if (effect.type === 'holdForReview') {
      // Nobody approved any of it: the approved risk stays unset (also what a restart reads as "first review"), and
      // every step not started waits for the review the whole plan needs; `RunLifecycle.onHold` shows the card.
      const held = { at: clock(), pins };
      if (!(await store.transition(run.id, ['planning'], 'awaiting_review', held))) return true;
      early.driver.pin(pins);
      early.send(t.dispatch);
      return true;
    }
    // One write, as for any auto-approved run: the move, its approved risk, the remaining pins, the reason and the
    // estimate. The estimate is of the whole plan, timed from the first early step's start: what ran early counts.
    const payload = { revision: 0, risk: v.risk, preference: early.preference, startedEarly: started };
    const event = {
      type: 'autoApproved',
      payload: estimate ? { ...payload, estimate: estimateJson(estimate) } : payload,
    };
    const moved = { at: clock(), approvedRisk: v.risk, pins, event };
    if (!(await store.transition(run.id, ['planning'], 'running', moved))) return true;
    this.deps.estimates?.runStarted(run.id, estimate, early.firstStartedAt ?? undefined);
    early.driver.pin(pins);
    const progress = { progress: early.driver.current.steps, outputs: outputsOf(early.driver.current) };
    const shown = await this.showCard(run, 'running', 0, v, {
      needsReview: false,
      autoStarted: true,
      ...progress,
      estimate,
      spend,
    });
    early.send(shown ? t.dispatch : [{ type: 'stopRequested' }]);
    return true;
  }

  /** Approve: at first review it starts the run; mid-run it lets steps of a newly added, riskier revision start. */
  async approve(run: StoredRun, d: InboundDecision): Promise<string | null> {
    const { store, clock, tools } = this.deps;
    if (!run.plan) return 'There is no plan to approve.';
    // An Assistant's plan is checked against its grants as they are now: one revoked since planning refuses it.
    const v = validatePlan(run.plan, await toolsForRun(this.deps, run));
    if (!v.ok) return `The plan is no longer valid: ${v.error.join('; ')}`;
    // A first approval stores the estimate the person approved, in the same write, to compare with what the run took.
    const first = !this.drivers.get(run.id);
    // A run that would pass a spend cap starts only on an approver's Approve, which exempts it from the caps. That is
    // judged at its first approval (steps that started early while its plan was written are read-only lookups).
    const firstReview = atFirstReview(run);
    const estimate =
      first || firstReview ? await this.deps.estimates?.atApproval(run.id, d.revision, v.value) : undefined;
    const outlook = firstReview ? await spendOutlookFor(this.deps, run, estimate) : undefined;
    const spend = firstReview ? spendApproval(outlook, d.actor, this.deps.settings, run.requester) : undefined;
    if (spend && !spend.ok) return spend.refusal;
    // A first approval stores the estimate the person approved, in the same write, to compare with what the run took.
    const event = first &&
      estimate && {
        type: 'estimated',
        payload: { revision: d.revision, estimate: estimateJson(estimate) },
      };
    const moved = await store.transition(run.id, ['awaiting_review'], 'running', {
      revision: d.revision,
      at: clock(),
      ...(event ? { event } : {}),
      ...(spend?.exempt && { spendExempt: true }),
    });
    if (!moved) return this.stale(run, d);
    this.timers.clear(run.id);
    await store.setApprovedRisk(run.id, v.value.risk, clock());
    const past = spend?.exempt ? ` past ${spend.cap ?? 'the spend caps'}` : '';
    await this.messages.notice(
      run,
      'info',
      sentence`Approved by ${d.actor}${past}; running ${run.plan.steps.length} steps.`,
    );
    await this.messages.status(run, 'running');
    const driver = this.drivers.get(run.id);
    if (!driver) {
      this.deps.estimates?.runStarted(run.id, estimate);
      const pins = await this.pinPlan(run.id, v.value.plan);
      this.lifecycle.start({ ...run, approvedRisk: v.value.risk }, v.value, pins);
      return null;
    }
    // The person saw the changes: pin the definitions of held tools as they are now.
    const changed = changedTools(driver.current);
    const repins = tools
      .listTools()
      .filter((t) => changed.has(t.name))
      .map((t) => ({ tool: t.name, fingerprint: t.fingerprint, definition: t.definition }));
    // A plan held for review after steps started early has tools nobody pinned yet.
    repins.push(...newPins(v.value.plan, tools.listTools(), driver.pinned).filter((p) => !changed.has(p.tool)));
    await store.pinTools(run.id, repins, clock());
    driver.approveHolds(repins, v.value.risk, policiesFor(driver.current.plan, tools.listTools()));
    // The run is now "running" in the database; a pause or breakpoint from before the hold ends with the approval.
    driver.send({ type: 'resumeRequested' });
    return null;
  }

  /** Cancel at review. Mid-run (steps waiting for approval) it stops the run and keeps what finished. */
  async cancel(run: StoredRun, d: InboundDecision): Promise<string | null> {
    const { store, clock } = this.deps;
    const driver = this.drivers.get(run.id);
    const to: RunStatus = driver ? 'stopping' : 'cancelled';
    if (!(await store.transition(run.id, ['awaiting_review'], to, { revision: d.revision, at: clock() }))) {
      return this.stale(run, d);
    }
    this.timers.clear(run.id);
    driver?.send({ type: 'stopRequested' });
    const text = driver
      ? sentence`Cancelled by ${d.actor}: steps waiting for approval will not run; finished results are kept.`
      : sentence`Cancelled by ${d.actor}. Nothing was run.`;
    await this.messages.notice(run, 'info', text);
    await this.messages.status(run, to);
    return null;
  }

  /** Amend at review: one planner call with the current plan and the person's words, then review again. */
  async amend(run: StoredRun, d: InboundDecision, text: string): Promise<string | null> {
    const { store, clock, settings, tools } = this.deps;
    if (!run.plan) return 'There is no plan to amend.';
    // Claim the revision first, so two amendments (or an amendment racing an approval) cannot both win.
    if (!(await store.transition(run.id, ['awaiting_review'], 'planning', { revision: d.revision, at: clock() }))) {
      return this.stale(run, d);
    }
    const round = await store.takeAmendmentRound(run.id, settings.amendmentCap);
    const previous = validatePlan(run.plan, tools.listTools());
    if (round === null) {
      await store.transition(run.id, ['planning'], 'awaiting_review', { at: clock() });
      return `No amendment rounds left (the limit is ${settings.amendmentCap}). Approve or cancel this plan.`;
    }
    this.timers.clear(run.id);
    await store.appendEvent(run.id, 'amendmentRequested', { round, text: text.slice(0, 2000) }, clock());
    const planned = await this.writePlan(run, run.request, { plan: run.plan, text });
    if (!planned.ok || !planned.value.plan.needsTools) {
      const why = planned.ok ? 'the revised plan had no steps' : planned.error;
      if (!previous.ok) {
        await store.transition(run.id, ['planning'], 'failed', { at: clock() });
        const invalid = previous.error.join('; ');
        return `The amendment could not be applied (${why}), and the previous plan is no longer valid (${invalid}). Please ask again.`;
      }
      await this.offer(run.id, run.revision, previous.value, 'planning', 'always');
      return `The amendment could not be applied (${why}); the previous plan stands.`;
    }
    await store.saveRevision(run.id, run.revision + 1, planned.value.plan, `amendment ${round}`, clock());
    // The person is reviewing: the amended plan waits for their approval even when it is low risk.
    await this.offer(run.id, run.revision + 1, planned.value, 'planning', 'always');
    return null;
  }

  /** Edit at review: the person's JSON replaces the plan (no model call), validated like any plan, reviewed again. */
  async edit(run: StoredRun, d: InboundDecision): Promise<string | null> {
    const { store, clock } = this.deps;
    const parsed = parseEdit(run.plan, d.plan);
    if (!parsed.ok) return parsed.error;
    const v = validatePlan(parsed.value, await toolsForRun(this.deps, run));
    if (!v.ok) return `That edit was refused: ${v.error.join('; ')}`;
    if (!(await store.transition(run.id, ['awaiting_review'], 'planning', { revision: d.revision, at: clock() }))) {
      return this.stale(run, d);
    }
    this.timers.clear(run.id);
    await store.saveRevision(run.id, run.revision + 1, v.value.plan, `edited by ${who(d.actor)}`, clock());
    await this.offer(run.id, run.revision + 1, v.value, 'planning', 'always');
    return null;
  }

  /** Why a decision lost: read the run again, since another decision may have just changed it. */
  private async stale(run: StoredRun, d: InboundDecision): Promise<string> {
    const now = (await this.deps.store.getRun(run.id)) ?? run;
    if (now.revision !== d.revision) {
      return `That card shows revision ${d.revision}, but the plan is now at revision ${now.revision}; use the newest card.`;
    }
    return `That plan is ${describeStatus(now.status)}; nothing changed.`;
  }

  /**
   * Sends a plan card. If the platform refuses it (say, rate limits outlasting the client's retries), the run must
   * not sit in `status` unseen and undriven: it fails, with the reason in its history, and nothing runs; the requester
   * is told privately (posting in the conversation is what failed).
   */
  private async showCard(
    run: StoredRun,
    status: RunStatus,
    revision: number,
    v: ValidatedPlan,
    options: Pick<
      PlanCardOptions,
      | 'needsReview'
      | 'autoStarted'
      | 'breakpoints'
      | 'suggestedBreakpoints'
      | 'progress'
      | 'outputs'
      | 'note'
      | 'estimate'
      | 'spend'
    >,
  ): Promise<boolean> {
    // A step asking to delegate deeper than the setting: said on the card, with Raise depth for an approver.
    const brakes = await brakeCardParts(this.deps, run, v.plan, options.needsReview);
    const card = toPlanCard(run.id, revision, v, {
      ...options,
      amendmentsLeft: this.messages.amendmentsLeft(run),
      requester: run.requester,
      warnings: [...planWarnings(v.plan, this.deps.tools.listTools()), ...brakes.warnings],
      raisable: brakes.raisable,
      widenable: brakes.widenable,
      assistant: run.assistant,
      delegatedBy: run.parentRunId,
    });
    try {
      await this.messages.send(run.conversation, card);
      return true;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      const { store, clock, log } = this.deps;
      log('error', `run ${run.id}: the plan card could not be delivered, so the run fails: ${reason}`);
      await store.transition(run.id, [status], 'failed', { at: clock() });
      await store.appendEvent(run.id, 'cardNotDelivered', { reason: reason.slice(0, 500) }, clock());
      const text = `I could not show the plan here (${reason.slice(0, 200)}), so nothing was run. Please ask again.`;
      await this.messages
        .tellRequester(run, 'error', text, true)
        .catch((e: unknown) => log('error', `run ${run.id}: the requester could not be told: ${(e as Error).message}`));
      return false;
    }
  }

  /** Pins the definitions of the plan's tools as approved now. */
  private async pinPlan(runId: string, p: Plan): Promise<PinnedTool[]> {
    const pins = newPins(p, this.deps.tools.listTools(), new Map());
    await this.deps.store.pinTools(runId, pins, this.deps.clock());
    return pins;
  }
}
