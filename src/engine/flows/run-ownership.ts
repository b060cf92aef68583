/**
 * What this process does so that every run has exactly one driver across processes and restarts: it takes over runs
 * that need an owner (resumes, re-plans or reports each), keeps the ownership watch going (leases renewed, orphans
 * taken over, queued decisions applied, old notes pruned), queues a decision for the process that drives its run,
 * and hands its leases back at shutdown. `Steward` routes; this owns.
 */
import type { InboundDecision } from '../channel.ts';
import type {
  ClaimedRun,
  Ledgers,
  RunOwnership as LeaseStore,
  RunRecords,
  StoredRun,
  UnreportedRun,
} from '../ports.ts';
import { jsonValueDepth, MAX_PLAN_DEPTH } from '../plan/json-depth.ts';
import { DRIVEN_STATUSES, isTerminal, type Json, type RunStatus } from '../types.ts';
import type { StewardDeps } from './deps.ts';
import { startOwnershipWatch, type OwnershipWatch } from './ownership-watch.ts';
import type { RunDrivers } from './run-drivers.ts';
import type { RunLeases } from './run-leases.ts';
import type { RunLifecycle } from './run-lifecycle.ts';

/** Notes that only guard against repeats are kept a week (repeats come within minutes); pruned hourly. */
const LEDGER_RETENTION_MS = 7 * 24 * 3_600_000;
const TIDY_EVERY_MS = 3_600_000;
/** How many orphans one claim takes. */
const CLAIM_BATCH = 20;

/** A run driven step by step: its decisions go to its driver. */
const needsDriver = (run: StoredRun) => (DRIVEN_STATUSES as readonly RunStatus[]).includes(run.status);

/** How a run taken over goes on, by where it stood; and how a decision taken from the queue is applied here. */
export interface TakeoverSteps {
  /** A run that ended without its report sent: the report. */
  report(run: UnreportedRun): Promise<void>;
  /** A run taken over while planned: planned again (or its workflow fire offered again). */
  replan(run: StoredRun, fence: number): Promise<void>;
  /** A run past planning: resumed from its stored steps. */
  recover(run: StoredRun, fence: number): Promise<void>;
  /** A decision another process queued for a run held here. */
  apply(d: InboundDecision): Promise<void>;
  /** After each takeover round (delegation slots whose end was lost are freed). */
  afterRound?(): Promise<void>;
  /** Another process said someone connected a server (runs waiting on a connection look again). */
  connected?(): Promise<void>;
}

export class RunOwnership {
  private watch: OwnershipWatch | undefined;
  /** Runs held here whose queued decisions were left for their driver, which was starting (`started` takes them). */
  private readonly leftForStart = new Set<string>();

  constructor(
    private readonly deps: Pick<StewardDeps, 'log' | 'signals'> & { store: LeaseStore & RunRecords & Ledgers },
    private readonly leases: RunLeases,
    private readonly drivers: RunDrivers,
    private readonly lifecycle: RunLifecycle,
    private readonly steps: TakeoverSteps,
  ) {}

  /** Starts the watch (once) and takes over every run that needs an owner now, applying what was queued for them. */
  async start(): Promise<void> {
    this.watch ??= this.startWatching();
    await this.takeOver();
    await this.drainAll();
  }

  /** Stops the watch and hands every lease back, so the next process takes those runs over at once. */
  async stop(): Promise<void> {
    const watch = this.watch;
    this.watch = undefined;
    await watch?.stop();
    await this.leases.releaseAll();
  }

  /**
   * Queues the decision for the process that holds the run when this one does not: the run is active and held by
   * another process, or by none (its holder died; the next round here or elsewhere takes it over and applies it).
   * False when it is for this process to decide.
   */
  async forwarded(d: InboundDecision): Promise<boolean> {
    if (this.drivers.has(d.runId)) return false;
    // An edit too deep to store is refused here, by the same rule the holder would apply.
    if (d.plan !== undefined && jsonValueDepth(d.plan, MAX_PLAN_DEPTH + 1) > MAX_PLAN_DEPTH) return false;
    const run = await this.deps.store.getRun(d.runId);
    if (!run || isTerminal(run.status)) return false;
    const held = this.leases.has(d.runId);
    // Held here, but its driver is still starting (an approval or a takeover under way): queued for the driver.
    if (held && !needsDriver(run)) return false;
    await this.deps.store.forwardDecision(d.runId, d as unknown as Json);
    if (!held) this.watch?.soon();
    // Its driver may have started (and drained the queue) while this was being stored: drain again.
    else if (this.drivers.has(d.runId)) await this.drain(d.runId);
    // Still starting: its driver takes it as it starts (`started`).
    else this.leftForStart.add(d.runId);
    return true;
  }

  /**
   * A driver started here: the decisions queued for its run are applied. A run `fresh` from planning or review here
   * had no driver for them to wait on before now, so its queue is taken only when a decision was left for the driver
   * while it was starting (one statement less per run). A Pause or Stop queued unseen (its signal missed) still holds
   * every step start (`StepWave`), and the watch's next round applies whatever else was queued.
   */
  async started(runId: string, fresh: boolean): Promise<void> {
    const left = this.leftForStart.delete(runId);
    if (fresh && !left) return;
    await this.drain(runId);
  }

  /** Applies the decisions queued for a run this process holds (from other processes, or waiting for its driver). */
  async drain(runId: string): Promise<void> {
    if (!this.leases.has(runId)) return void this.leftForStart.delete(runId);
    if (!this.drivers.has(runId)) {
      const run = await this.deps.store.getRun(runId);
      // Its driver is starting (still, after the read): it drains the queue once it runs (`started`).
      if (run && needsDriver(run) && !this.drivers.has(runId)) return void this.leftForStart.add(runId);
    }
    const { op, decisions } = await this.deps.store.takeDecisions(runId);
    if (decisions.length === 0) return;
    for (const queued of decisions) {
      const d = queued as unknown as InboundDecision;
      await this.steps
        .apply(d)
        .catch((err: unknown) =>
          this.deps.log('error', `run ${runId}: a queued ${d.action} failed: ${(err as Error).message}`),
        );
    }
    // Applied: a Pause or Stop taken here held the run's step starts until now (so none started between its take and
    // its stored status). Left in place when this fails, it stops holding after a minute.
    await this.deps.store
      .settleDecisions(runId, op)
      .catch((err: unknown) =>
        this.deps.log('warn', `run ${runId}: applied decisions not cleared: ${(err as Error).message}`),
      );
  }

  /** Claims orphaned runs until none is left, and resumes or reports each. */
  private async takeOver(): Promise<void> {
    for (;;) {
      const claimed = await this.deps.store.claimOrphanedRuns(this.leases.ttlMs, CLAIM_BATCH, this.leases.ids());
      if (claimed.length === 0) return;
      const named = claimed.map(({ run, fence }) => `${run.id} (${run.status}, fence ${fence})`).join(', ');
      this.deps.log('info', `claimed ${claimed.length} run(s) needing an owner: ${named}`);
      // Every run claimed is held (so renewed) at once: resuming each in turn may take longer than a lease.
      for (const { run, fence } of claimed) this.leases.hold(run.id, fence);
      for (const c of claimed) await this.resume(c);
    }
  }

  private async resume({ run, fence }: ClaimedRun): Promise<void> {
    // A batch's runs are held from the claim and resumed in turn, so a decision may reach one here first (an Approve
    // starts its driver): a run that moved since the claim was moved by this process, which drives it on already.
    if (await this.movedSinceClaim(run, fence)) return;
    this.deps.log(
      'info',
      `run ${run.id}: taken over (${run.status}${run.report === null ? '' : ', report stored'}, fence ${fence})`,
    );
    try {
      if (isTerminal(run.status)) await this.steps.report(run);
      else if (run.status === 'planning') await this.steps.replan(run, fence);
      else await this.steps.recover(run, fence);
    } catch (err) {
      this.deps.log('error', `run ${run.id}: could not be taken over: ${(err as Error).message}`);
      // Not held with nobody driving it: let go, it is taken over again (here too) once the fault passes.
      this.lifecycle.abandon(run.id);
    }
  }

  private async movedSinceClaim(claimed: StoredRun, fence: number): Promise<boolean> {
    let why: string | null = null;
    if (this.drivers.has(claimed.id)) why = 'a driver here has it already';
    else if (this.leases.fenceOf(claimed.id) !== fence) why = 'it is no longer held under that claim';
    else {
      const now = await this.deps.store.getRun(claimed.id);
      if (now && now.status !== claimed.status) why = `it is ${now.status.replace('_', ' ')} now`;
    }
    if (why === null) return false;
    this.deps.log('info', `run ${claimed.id}: claimed ${claimed.status.replace('_', ' ')}, but ${why}; not resumed`);
    return true;
  }

  private async drainAll(): Promise<void> {
    for (const runId of await this.deps.store.runsWithDecisions()) await this.drain(runId);
  }

  /** The watch: leases renewed, orphans taken over and queued decisions applied, while the process lives. */
  private startWatching(): OwnershipWatch {
    const { log, signals, store } = this.deps;
    const rounds = {
      renew: async () => {
        for (const runId of await this.leases.renew()) this.lifecycle.lose(runId);
      },
      takeOver: async () => {
        await this.takeOver();
        await this.drainAll();
        await this.steps.afterRound?.();
      },
      drain: (runId: string) => this.drain(runId),
      connected: () => this.steps.connected?.() ?? Promise.resolve(),
      tidy: async () => {
        const pruned = await store.pruneLedgers(LEDGER_RETENTION_MS);
        const counts = Object.entries(pruned).filter(([, n]) => n > 0);
        if (counts.length > 0) log('info', `pruned old notes: ${counts.map(([k, n]) => `${n} ${k}`).join(', ')}`);
      },
    };
    const everyMs = Math.max(50, Math.floor(this.leases.ttlMs / 3));
    return startOwnershipWatch(rounds, { everyMs, tidyEveryMs: TIDY_EVERY_MS, signals, log });
  }
}
