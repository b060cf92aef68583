/**
 * Fires of recurring workflows. A timer wakes the process at the earliest scheduled time (and every few seconds
 * anyway, for schedules another process added); each due schedule is decided by `fire-rules.ts`, and the fires are
 * claimed in the database in one batch (`WorkflowStore.claimFires`), which creates their runs: a fire claimed by
 * another process is simply not ours. Each fired run is then offered like a planned one, with no planner call:
 * started on the approval given when the workflow was saved, or held for a person (`fire-review.ts`).
 */
import { newPins } from '../plan/tool-pins.ts';
import { validatePlan, type ValidatedPlan } from '../plan/validate-plan.ts';
import type { RunRecords, StoredRun } from '../ports.ts';
import { sentence } from '../run/run-actions.ts';
import { bindFireParams, type FireValues } from '../workflow/fire-params.ts';
import { fireReview } from '../workflow/fire-review.ts';
import { decideFire, missedWords, type FireDecision } from '../workflow/fire-rules.ts';
import { zoneShort } from '../workflow/zone-time.ts';
import type {
  CronCalendar,
  DueSchedule,
  FireClaim,
  FireOutcome,
  StoredFire,
  StoredWorkflow,
  WorkflowStore,
  WorkflowVersion,
} from '../workflows.ts';
import type { StewardDeps } from './deps.ts';
import type { PlanEstimates } from './plan-estimates.ts';
import type { ReviewFlow } from './review-flow.ts';
import type { RunLeases } from './run-leases.ts';
import type { RunMessages } from './run-messages.ts';
import { WakeTimer } from './wake-timer.ts';

/** Schedules looked at per round; a round repeats while a full batch keeps winning fires. */
const BATCH = 1_000;
/** Fired runs offered at once: each sends a card and starts a driver. */
const OFFERS_AT_ONCE = 16;
/** How long a fire waits for a server's tool list before judging it by the definitions already known. */
const REFRESH_MS = 5_000;
/** The longest the timer sleeps: a schedule added by another process is seen within this. */
export const POLL_MS = 5_000;

/** What the fires need: the ports, and the owners that start runs. */
export interface WorkflowFiresDeps extends Pick<StewardDeps, 'tools' | 'clock' | 'newId' | 'log'> {
  store: RunRecords;
  workflows: WorkflowStore;
  calendar: CronCalendar;
  leases: RunLeases;
  review: ReviewFlow;
  messages: RunMessages;
  /** Most fires of one workflow that start a run in any 24 hours (`ScheduleLimits.firesPerDay`). */
  firesPerDay: number;
  /** The estimate a fire that starts at once shows on its card and stores with its claim. */
  estimates?: PlanEstimates;
}

/** A fire decided here and about to be claimed, with its plan as validated (null: invalid, or skipped). */
type Prepared = FireClaim & { validated: ValidatedPlan | null };

/** The scheduler of one process. */
export class WorkflowFires {
  private readonly timer: WakeTimer;

  constructor(private readonly deps: WorkflowFiresDeps) {
    const round = async () => {
      await this.tick();
      return deps.workflows.nextDue();
    };
    this.timer = new WakeTimer(round, {
      clock: deps.clock,
      log: deps.log,
      pollMs: POLL_MS,
      what: 'workflow schedules',
    });
  }

  /** Starts the timer: a round now, then at each scheduled time. */
  start(): void {
    this.timer.start();
  }

  /** A round now (or right after the one under way): a schedule was added, resumed or changed here. */
  soon(): void {
    this.timer.soon();
  }

  /** Stops the timer and waits for the round under way. */
  async stop(): Promise<void> {
    await this.timer.stop();
  }

  /** Claims every fire due now and offers their runs. */
  async tick(): Promise<void> {
    const { workflows, clock, leases } = this.deps;
    for (;;) {
      const due = await workflows.dueSchedules(clock(), BATCH);
      await this.refresh(due.map((d) => d.version));
      // Schedules alike (the same expression, zone, policies and time due) are decided once per round.
      const now = clock();
      const decisions = new Map<string, FireDecision>();
      // Runs each workflow has started in the last 24 hours, this round's included as they are decided.
      const started = new Map(due.map((d) => [d.workflow.id, d.firesToday]));
      const claims = due.flatMap((d) => this.decideSafely(d, now, decisions, started));
      await this.estimate(claims);
      const won = new Set(claims.length > 0 ? await workflows.claimFires(claims, clock(), leases.ttlMs) : []);
      const fired = claims.filter((c) => won.has(c.fire.id));
      for (const c of fired) if (c.fire.run) leases.hold(c.fire.run.id, 0);
      await eachAtMost(OFFERS_AT_ONCE, fired, (c) => this.offerClaimed(c));
      if (due.length < BATCH || won.size === 0) return;
    }
  }

  /** Runs a workflow now, outside its schedules; resolves to the fire as recorded, once its run was offered. */
  async runNow(workflow: StoredWorkflow, version: WorkflowVersion, previous: Date | null, timeZone: string) {
    const { workflows, clock, leases } = this.deps;
    await this.refresh([version]);
    const now = clock();
    const { fire, validated } = this.prepare(workflow, version, { time: now, previous, timeZone }, true);
    const claim = { scheduleId: null, expectedNext: null, nextFireAt: null, fire, validated };
    await this.estimate([claim]);
    await workflows.claimFires([claim], now, leases.ttlMs);
    if (fire.run) leases.hold(fire.run.id, 0);
    await this.offerClaimed(claim);
    return fire;
  }

  /**
   * The estimate of each fire that starts at once, kept with its approval: the claim stores it in the run's
   * `autoApproved` event (so the dashboard scores the fire as any run, at no statement of its own) and its card shows
   * it. The history is read at most once per 30 s, however many fires.
   */
  private async estimate(claims: readonly Prepared[]): Promise<void> {
    const { estimates } = this.deps;
    if (!estimates) return;
    for (const c of claims) {
      const approved = c.fire.run?.approved;
      if (approved && c.validated) approved.estimate = await estimates.of(c.validated);
    }
  }

  /**
   * Reads the tool lists of the servers these versions use again (once per server), so a definition changed since
   * the last call is seen before a fire is judged, not only when its step is about to start.
   */
  private async refresh(versions: readonly WorkflowVersion[]): Promise<void> {
    const { tools } = this.deps;
    if (!tools.refreshTool) return;
    const byServer = new Map<string, string>();
    for (const v of versions)
      for (const s of v.plan.steps) if (s.kind === 'tool') byServer.set(s.tool.slice(0, s.tool.indexOf('.')), s.tool);
    const options = { signal: AbortSignal.timeout(REFRESH_MS), timeoutMs: REFRESH_MS };
    await Promise.all([...byServer.values()].map((tool) => tools.refreshTool!(tool, options)));
  }

  /**
   * One schedule that cannot be decided (a zone this machine's time-zone data no longer knows, a stored expression
   * the cron library now refuses) is logged and left due; it never holds back the others' fires.
   */
  private decideSafely(
    d: DueSchedule,
    now: Date,
    decisions: Map<string, FireDecision>,
    started: Map<string, number>,
  ): Prepared[] {
    try {
      return this.decide(d, now, decisions, started);
    } catch (err) {
      const what = `workflow ${d.workflow.name}, schedule \`${d.schedule.cron}\` in ${d.schedule.timeZone}`;
      this.deps.log('error', `${what} cannot fire: ${(err as Error).message}`);
      return [];
    }
  }

  /** A due schedule's claim, if it has one now (a queued fire waits, claiming nothing). */
  private decide(
    d: DueSchedule,
    now: Date,
    decisions: Map<string, FireDecision>,
    started: Map<string, number>,
  ): Prepared[] {
    const { schedule, workflow, version } = d;
    const s = schedule;
    const key = [s.cron, s.timeZone, s.nextFireAt?.getTime(), s.catchUp, s.overlap, s.paused, d.active].join('\n');
    let decision = decisions.get(key);
    if (!decision) {
      decision = decideFire({ schedule, active: d.active, now, calendar: this.deps.calendar });
      decisions.set(key, decision);
    }
    if (decision.kind === 'notDue' || decision.kind === 'wait') return [];
    const base = { scheduleId: schedule.id, expectedNext: schedule.nextFireAt, nextFireAt: decision.nextFireAt };
    const skipped = (outcome: FireOutcome, note: string): Prepared[] => [
      {
        ...base,
        validated: null,
        fire: {
          id: this.deps.newId(),
          workflowId: workflow.id,
          version: version.version,
          outcome,
          note,
          scheduledAt: decision.scheduledAt,
          run: null,
        },
      },
    ];
    const before = decision.missed > 0 ? `, with ${missedWords(decision.missed)} before it` : '';
    if (decision.kind === 'skipMissed')
      return skipped('skipped_missed', `missed while Steward was not running${before}`);
    if (decision.kind === 'skipOverlap') {
      return skipped('skipped_overlap', 'the previous fire of this workflow had not finished (running or waiting)');
    }
    const today = started.get(workflow.id) ?? 0;
    if (today >= this.deps.firesPerDay) {
      return skipped(
        'skipped_limit',
        `this workflow started ${today} runs in the last 24 hours, its limit (the operator's STEWARD_WORKFLOW_FIRES_PER_DAY)`,
      );
    }
    const values = { time: decision.scheduledAt, previous: decision.previousAt, timeZone: schedule.timeZone };
    const { fire, validated } = this.prepare(workflow, version, values, false);
    if (fire.run) started.set(workflow.id, today + 1);
    // A late fire caught up: what it stands for is said with it (the earlier times are only counted).
    if (decision.missed > 0) fire.note = [`caught up late${before}`, fire.note].filter(Boolean).join('; ');
    return [{ ...base, fire, validated }];
  }

  /**
   * A fire's run: the version's plan with its parameters bound, and whether it may start without a person. One that
   * may is claimed already running (`FireRun.approved`): its start costs no statement of its own.
   */
  private prepare(
    workflow: StoredWorkflow,
    version: WorkflowVersion,
    values: FireValues,
    runNow: boolean,
  ): { fire: FireClaim['fire']; validated: ValidatedPlan | null } {
    const { tools, newId } = this.deps;
    const plan = bindFireParams(version.plan, values);
    const catalog = tools.listTools();
    const v = validatePlan(plan, catalog);
    const review = v.ok
      ? fireReview({ review: workflow.review, version, risk: v.value.risk, plan, tools: catalog })
      : null;
    const outcome: FireOutcome = !v.ok ? 'failed' : review?.hold ? 'held' : 'started';
    const note = !v.ok ? v.error.join('; ') : (review?.reasons.join(' ') ?? '');
    const when = `${zoneShort(values.time, values.timeZone)} (${values.timeZone})`;
    const request = `Workflow ${workflow.name} v${version.version}: ${runNow ? 'run now' : 'the fire'} of ${when}`;
    const approved =
      v.ok && outcome === 'started' ? { risk: v.value.risk, pins: newPins(plan, catalog, new Map()) } : undefined;
    const run = {
      id: newId(),
      conversation: workflow.conversation,
      requester: workflow.owner,
      request,
      plan,
      approved,
    };
    const fire = {
      id: newId(),
      workflowId: workflow.id,
      version: version.version,
      scheduledAt: values.time,
      outcome,
      note,
      run,
    };
    return { fire, validated: v.ok ? v.value : null };
  }

  /** A claimed fire's run: started on its saved approval (already running in the database), or offered. */
  private async offerClaimed(c: Prepared): Promise<void> {
    const { store, clock, review, log } = this.deps;
    const fired = c.fire.run;
    if (!fired) return;
    if (fired.approved && c.validated) {
      const run: StoredRun = {
        id: fired.id,
        status: 'running',
        conversation: fired.conversation,
        requester: fired.requester,
        request: fired.request,
        revision: 0,
        amendmentRounds: 0,
        plan: fired.plan,
        breakpoints: [],
        approvedRisk: fired.approved.risk,
        createdAt: clock(),
      };
      // The card says where the run came from: no person asked for it just now.
      const { pins, estimate } = fired.approved;
      return review.startApproved(run, c.validated, pins, `${fired.request}.`, estimate).catch((err: unknown) => {
        log('error', `run ${run.id}: the workflow fire could not start: ${(err as Error).message}`);
      });
    }
    const run = await store.getRun(fired.id);
    if (run) await this.offerFire(run, c.fire);
  }

  /**
   * Offers a fired run (also one taken over from a process that died after claiming it): checked again against the
   * tools connected now, then started on the saved approval, or held for a person with the reasons told.
   */
  async offerFire(
    run: StoredRun,
    fire: Pick<StoredFire, 'workflowId' | 'version' | 'outcome' | 'note'>,
  ): Promise<void> {
    const { store, clock, log, tools, workflows, review, messages } = this.deps;
    try {
      const v = run.plan ? validatePlan(run.plan, tools.listTools()) : null;
      if (!v?.ok || fire.outcome === 'failed') {
        const why = v && !v.ok ? v.error.join('; ') : fire.note || 'it has no plan';
        if (await store.transition(run.id, ['planning'], 'failed', { at: clock() })) {
          await messages.tellRequester(run, 'error', `${run.request} could not run: ${why}`);
        }
        return;
      }
      let reasons = fire.outcome === 'held' ? [fire.note] : [];
      const version = reasons.length === 0 ? await workflows.getVersion(fire.workflowId, fire.version) : null;
      // Checked again: a tool may have changed between the claim and now (or a restart came between them).
      if (version) {
        const again = fireReview({
          review: 'saved',
          version,
          risk: v.value.risk,
          plan: v.value.plan,
          tools: tools.listTools(),
        });
        reasons = again.reasons;
      }
      // The card says where the run came from: no person asked for it just now.
      if (reasons.length === 0) return await review.offer(run.id, 0, v.value, 'planning', 'saved', `${run.request}.`);
      const text = sentence`${run.requester}: ${run.request} waits for your approval. ${reasons.join(' ')}`;
      // A conversation that refuses the notice (Steward removed from the channel) refuses the card too: the card's
      // refusal keeps the reason with the run and tells the owner privately, so the notice's own is only logged.
      await messages
        .notice(run, 'warning', text)
        .catch((err: unknown) =>
          log('warn', `run ${run.id}: the approval notice was not shown: ${(err as Error).message}`),
        );
      await review.offer(run.id, 0, v.value, 'planning', 'always', `${run.request}: waits for approval.`);
    } catch (err) {
      log('error', `run ${run.id}: the workflow fire could not be offered: ${(err as Error).message}`);
      await store.transition(run.id, ['planning'], 'failed', { at: clock() }).catch(() => false);
    }
  }
}

/** Calls `fn` for every item, at most `limit` at a time. */
async function eachAtMost<T>(limit: number, items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
