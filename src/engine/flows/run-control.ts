/**
 * Steering a run after approval: Pause / Resume / Stop, breakpoints, and edits and amendments of the steps not yet
 * run. The store decides every status change; the dispatcher is told only after it did.
 */
import type { InboundDecision } from '../channel.ts';
import { describeBreakpoints, setAfter, setBefore, type Breakpoint } from '../plan/breakpoints.ts';
import { parseEdit } from '../plan/plan-edit.ts';
import type { Plan } from '../plan/plan-schema.ts';
import { riskAbove } from '../plan/risk.ts';
import { checkRevision } from '../plan/revise.ts';
import { newPins } from '../plan/tool-pins.ts';
import { validatePlan, type ValidatedPlan } from '../plan/validate-plan.ts';
import type { RunRecords, RunSteering, StoredRun } from '../ports.ts';
import { outputsOf } from '../run/dispatch-schedule.ts';
import type { DispatchState } from '../run/dispatch-state.ts';
import { interventionTools } from '../run/holds.ts';
import { toPlanCard } from '../run/plan-card.ts';
import { actionsFor, atFirstReview, heldActions, isApprover, sentence, who } from '../run/run-actions.ts';
import { policiesFor } from '../run/step-policies.ts';
import { startedSteps, stepSummaries } from '../run/step-summaries.ts';
import { STEERABLE_STATUSES, type DecisionAction, type RunStatus } from '../types.ts';
import { toolsForRun } from './assistant-grants.ts';
import { breakpointOffers } from './breakpoint-offers.ts';
import type { StewardDeps } from './deps.ts';
import type { PlanEstimates } from './plan-estimates.ts';
import type { PlanWriter } from './planner.ts';
import type { RunDriver } from './run-driver.ts';
import type { RunDrivers } from './run-drivers.ts';
import type { RunMessages } from './run-messages.ts';

type ControlAction = Extract<DecisionAction, 'pause' | 'resume' | 'stop'>;

/** Each control decision: the statuses it may leave, where it goes, what the dispatcher is told, and what people read. */
const MOVES: Record<
  ControlAction,
  { from: RunStatus[]; to: RunStatus; event: 'pauseRequested' | 'resumeRequested' | 'stopRequested'; words: string }
> = {
  pause: {
    from: ['running'],
    to: 'paused',
    event: 'pauseRequested',
    words: 'Paused: steps already running will finish; nothing new starts until you resume.',
  },
  resume: { from: ['paused'], to: 'running', event: 'resumeRequested', words: 'Resumed.' },
  stop: {
    from: [...STEERABLE_STATUSES],
    to: 'stopping',
    event: 'stopRequested',
    words: 'Stopping: steps in flight are cancelled; finished results are kept.',
  },
};

/** Decisions on a running (or paused, or held) run. Handlers return null when accepted, else the refusal. */
export class RunControl {
  constructor(
    private readonly deps: Pick<StewardDeps, 'tools' | 'clock' | 'settings'> & {
      store: RunRecords & RunSteering;
      estimates?: PlanEstimates;
    },
    private readonly drivers: RunDrivers,
    private readonly messages: RunMessages,
    private readonly writePlan: PlanWriter,
  ) {}

  /** Pause, Resume (also Continue after a breakpoint) and Stop. */
  async control(run: StoredRun, d: InboundDecision & { action: ControlAction }): Promise<string | null> {
    const move = MOVES[d.action];
    const driver = this.drivers.get(run.id);
    if (!driver) return `Cannot ${d.action}: the run is not running in this process.`;
    // The run ended on its own (the press crossed its last step finishing): it ends as it is, its report to come. A
    // run this very Stop ended already (stopped locally, before the database was asked) goes on to be accepted below.
    const { phase, outcome } = driver.current;
    if (phase === 'done' && !(d.action === 'stop' && outcome === 'stopped'))
      return `Cannot ${d.action}: every step has already finished; the report is coming.`;
    // What was running or next when the person intervened, read before Stop changes it.
    const tools = interventionTools(driver.current);
    // What the decision does is said before what it did: the steps it cancels are shown after its notice.
    const release = driver.holdMessages();
    try {
      // Stop cannot be undone and this process drives the run, so in-flight calls are aborted before the database
      // is asked: at once, and even while the database is away. Pause and Resume wait for its verdict.
      if (d.action === 'stop') driver.send({ type: move.event });
      // An approver's Resume of a run a spend cap paused lets it go past the caps (its token budget still holds).
      const pastCaps =
        d.action === 'resume' && spendHeld(driver.current) && isApprover(d.actor, this.deps.settings.approvers ?? []);
      const moved = { at: this.deps.clock(), ...(pastCaps && { spendExempt: true }) };
      if (!(await this.deps.store.transition(run.id, move.from, move.to, moved))) {
        if (!(d.action === 'stop' && (await this.endedByThisStop(run)))) {
          return `Cannot ${d.action}: the run is ${run.status === move.to ? 'already ' : ''}${run.status.replace('_', ' ')}.`;
        }
      }
      // Stored: whoever drives the run next (after a crash here, too) finds it stopping or paused.
      d.accepted?.();
      if (d.action === 'pause') driver.send({ type: move.event });
      const words = pastCaps ? 'Resumed past the spend caps.' : move.words;
      await this.messages.notice(run, 'info', sentence`${words} (${d.actor})`);
      await this.messages.status(run, move.to);
      // Resumed only once "running" is out: a step that then holds shows its card after it, and a live card (Slack,
      // Discord) is never turned back to "running" by this status arriving after the hold's card.
      if (d.action === 'resume') driver.send({ type: move.event });
    } finally {
      release();
    }
    if (d.action !== 'resume') await this.recordIntervention(run, d, tools);
    return null;
  }

  /**
   * Records a Pause or Resume that reached the driver while the database was away (`Steward` told the person then):
   * the status moves and the card follows, with no second notice. `tools`: what was running or next at the press. A run that moved on meanwhile (ended, or held for
   * a person) keeps its newer status; the decision stands as applied.
   */
  async storeApplied(
    run: StoredRun,
    d: InboundDecision & { action: 'pause' | 'resume' },
    tools: string[],
  ): Promise<void> {
    const { store, clock } = this.deps;
    const move = MOVES[d.action];
    const moved = await store.transition(run.id, move.from, move.to, { at: clock() });
    const note = 'applied while the database was unreachable';
    await store.recordDecision({
      runId: d.runId,
      revision: d.revision,
      actor: d.actor,
      action: d.action,
      accepted: true,
      note,
      at: clock(),
    });
    if (moved) await this.messages.status(run, move.to);
    if (d.action === 'pause') await this.recordIntervention(run, d, tools);
  }

  /**
   * Stop aborts the run's calls before its move to `stopping` is stored, so a run with nothing left to wait for can
   * end `stopped` first: that Stop was accepted, and the person hears so rather than a refusal.
   */
  private async endedByThisStop(run: StoredRun): Promise<boolean> {
    if (run.status === 'stopped') return false;
    return (await this.deps.store.getRun(run.id))?.status === 'stopped';
  }

  /** Sets or clears breakpoints on steps not yet started (at review, or while running), or takes the suggested ones. */
  async setBreakpoints(run: StoredRun, d: InboundDecision): Promise<string | null> {
    const driver = this.drivers.get(run.id);
    // Step ids are read off one revision: a newer one may use the same id for another step.
    const revision = driver?.revision ?? run.revision;
    if (d.revision !== revision)
      return `That card shows revision ${d.revision}, but the plan is now at revision ${revision}; use the newest card.`;
    if (d.suggested) return this.takeSuggestions(run, driver);
    const ids = d.stepIds ?? [];
    const known = new Set(run.plan?.steps.map((s) => s.id) ?? []);
    const unknown = ids.filter((id) => !known.has(id));
    if (ids.length === 0 || unknown.length > 0) return `No such step: ${unknown.join(', ') || '(none given)'}.`;
    let next: Breakpoint[];
    if (driver) {
      driver.send({ type: 'breakpointsSet', stepIds: ids, on: d.on !== false });
      next = driver.current.breakpoints;
    } else {
      next = setAfter(run.breakpoints, ids, d.on !== false);
    }
    return this.breakpointsStored(run, next);
  }

  /**
   * Sets the breakpoints the card offered, before their steps. They are worked out again by the same rule (the card
   * named this revision, so the same steps), which also keeps the press free of step ids a platform could not carry.
   */
  private async takeSuggestions(run: StoredRun, driver: RunDriver | undefined): Promise<string | null> {
    if (!run.plan) return 'There is no plan to set breakpoints on.';
    const started = driver ? startedSteps(driver.current) : [];
    const set = driver?.current.breakpoints ?? run.breakpoints;
    const offers = await breakpointOffers(this.deps, run.requester, run.plan, { set, started, asked: true });
    if (offers.length === 0) return 'No breakpoints are suggested on this plan now.';
    const ids = offers.map((o) => o.stepId);
    let next: Breakpoint[];
    if (driver) {
      driver.send({ type: 'breakpointsSet', stepIds: ids, on: true, when: 'before' });
      next = driver.current.breakpoints;
    } else {
      next = setBefore(run.breakpoints, ids);
    }
    return this.breakpointsStored(run, next);
  }

  /** Stores the run's breakpoints and says what they are now. */
  private async breakpointsStored(run: StoredRun, next: Breakpoint[]): Promise<null> {
    await this.deps.store.setBreakpoints(run.id, next, this.deps.clock());
    const text = next.length > 0 ? `Breakpoints: ${describeBreakpoints(next)}.` : 'No breakpoints.';
    await this.messages.notice(run, 'info', text);
    return null;
  }

  /** Edit while running or held: rewrite the steps not yet run; steps that started cannot change. */
  async edit(run: StoredRun, d: InboundDecision): Promise<string | null> {
    const driver = this.drivers.get(run.id);
    if (!driver) return 'This run cannot be edited now.';
    // An edit is a whole plan read from one revision: laid over a newer one it would undo that revision's changes.
    if (d.revision !== driver.revision)
      return `That edit was made on revision ${d.revision}, but the plan is now at revision ${driver.revision}; edit the newest card.`;
    const parsed = parseEdit(driver.current.plan, d.plan);
    if (!parsed.ok) return parsed.error;
    const tools = interventionTools(driver.current);
    // Hold new starts while the edit is checked and stored, so the check stays true until it applies.
    driver.send({ type: 'amendStarted' });
    const problem = await this.applyRevision(run, driver, parsed.value, `edited by ${who(d.actor)}`);
    if (!problem) await this.recordIntervention(run, d, tools);
    return problem;
  }

  /** Amend while running: one planner call with the results so far; only steps not yet run may change. */
  async amend(run: StoredRun, text: string): Promise<string | null> {
    const { store, clock, settings } = this.deps;
    const driver = this.drivers.get(run.id);
    if (!driver || !run.plan) return 'This run cannot be amended now.';
    const round = await store.takeAmendmentRound(run.id, settings.amendmentCap);
    if (round === null) return `No amendment rounds left (the limit is ${settings.amendmentCap}).`;
    const event = { round, text: text.slice(0, 2000), running: true };
    await store.appendEvent(run.id, 'amendmentRequested', event, clock());
    // Nothing new starts while the planner thinks; steps already running may finish.
    driver.send({ type: 'amendStarted' });
    await this.messages.notice(
      run,
      'info',
      'Re-planning the steps not yet run; nothing new starts until the revision is in.',
    );
    const state = driver.current;
    const progress = { started: startedSteps(state), results: stepSummaries(state, 500) };
    const planned = await this.writePlan(run, run.request, { plan: state.plan, text, progress });
    if (!planned.ok) {
      driver.send({ type: 'amendEnded' });
      return `The amendment could not be applied (${planned.error}); ${goesOn(run).toLowerCase()}`;
    }
    return this.applyRevision(run, driver, planned.value.plan, `amendment ${round}`, true);
  }

  /**
   * Applies a revision of the steps not yet run. `byPlanner`: the planner saw tool outputs when it wrote it, so
   * every new or rewritten step that is not low risk waits for a person, whatever was approved before.
   */
  private async applyRevision(
    run: StoredRun,
    driver: RunDriver,
    next: Plan,
    reason: string,
    byPlanner = false,
  ): Promise<string | null> {
    const { store, clock, tools } = this.deps;
    const v = validatePlan(next, await toolsForRun(this.deps, run));
    const state = driver.current;
    const errors = v.ok ? checkRevision(state.plan, next, new Set(startedSteps(state))) : v.error;
    if (!v.ok || errors.length > 0) {
      driver.send({ type: 'amendEnded' });
      return `That revision was refused: ${errors.join('; ')}. ${goesOn(run)}`;
    }
    const current = (await store.getRun(run.id)) ?? run;
    const revision = Math.max(current.revision, driver.revision) + 1;
    await store.saveRevision(run.id, revision, v.value.plan, reason, clock());
    const pins = newPins(v.value.plan, tools.listTools(), driver.pinned);
    await store.pinTools(run.id, pins, clock());
    const policies = policiesFor(v.value.plan, tools.listTools());
    const before = new Map(state.plan.steps.map((s) => [s.id, JSON.stringify(s)]));
    const rewritten = v.value.plan.steps.filter((s) => before.get(s.id) !== JSON.stringify(s));
    const approvalNeeded = byPlanner ? rewritten.filter((s) => policies[s.id]?.risk !== 'low').map((s) => s.id) : [];
    driver.revise(revision, pins, { plan: v.value.plan, policies, approvalNeeded });
    let shown = current;
    if (current.status === 'awaiting_review') {
      // Steps still wait (always under a first review): the dispatcher asked again, and that card
      // (`RunLifecycle.onHold`) is the one shown. A revision that left nothing waiting runs on.
      if (driver.current.holds.length > 0) return null;
      if (await store.transition(run.id, ['awaiting_review'], 'running', { at: clock() })) {
        await this.messages.status(current, 'running');
        shown = { ...current, status: 'running' };
      }
    }
    await this.showRunning(shown, revision, v.value, driver.current);
    return null;
  }

  /** A card for a revision that is already running (after an edit or amendment mid-run). */
  private async showRunning(run: StoredRun, revision: number, v: ValidatedPlan, state: DispatchState): Promise<void> {
    const needsApproval = run.approvedRisk !== null && riskAbove(v.risk, run.approvedRisk);
    // The stored status decides the buttons: an amendment while paused keeps Resume, an edit at a hold keeps Approve.
    const held = run.status === 'awaiting_review';
    const estimate = await this.deps.estimates?.forCard(run.id, revision, v, state.steps);
    const card = toPlanCard(run.id, revision, v, {
      assistant: run.assistant,
      delegatedBy: run.parentRunId,
      needsReview: held,
      amendmentsLeft: this.messages.amendmentsLeft(run),
      requester: run.requester,
      actions: held
        ? heldActions(this.messages.amendmentsLeft(run))
        : actionsFor(run.status === 'paused' ? 'paused' : 'running', 0),
      note: needsApproval ? 'Steps riskier than what was approved will wait for approval.' : undefined,
      outputs: outputsOf(state),
      progress: state.steps,
      estimate,
    });
    await this.messages.send(run.conversation, card);
  }

  /** Remembers which tools were running or next when a person paused, stopped or edited (for suggestions). */
  private async recordIntervention(run: StoredRun, d: InboundDecision, tools: string[]): Promise<void> {
    const payload = { actorId: d.actor.id, channel: d.actor.channel, action: d.action, tools };
    await this.deps.store.appendEvent(run.id, 'intervened', payload, this.deps.clock());
  }
}

/** What happens after a refused revision: the plan as it stands goes on, or still waits for its first review. */
function goesOn(run: Pick<StoredRun, 'status' | 'approvedRisk'>): string {
  return atFirstReview(run)
    ? 'The plan as it stands still waits for your review.'
    : 'The run goes on with the current plan.';
}

/** Whether a spend cap paused the run: a step waits that the cap refused. */
function spendHeld(state: DispatchState): boolean {
  return Object.values(state.steps).some((s) => s.status === 'pending' && s.error?.code === 'spend_capped');
}
