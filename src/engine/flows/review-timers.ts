/**
 * Review deadlines: a plan (or a step held for approval) waits `timeoutMs` for a decision. Then a high-risk plan
 * is cancelled (fail closed; finished results are kept) and a lower-risk one gets a reminder and keeps waiting.
 */
import type { RunRecords, StoredRun } from '../ports.ts';
import { formatDuration } from '../run/run-status.ts';
import type { Log } from './deps.ts';
import type { RunDrivers } from './run-drivers.ts';
import type { RunMessages } from './run-messages.ts';

/** One timer per run waiting for review; arming a run's timer again replaces the old one. */
export class ReviewTimers {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly deps: { store: RunRecords; clock: () => Date; log: Log; timeoutMs: number },
    private readonly drivers: RunDrivers,
    private readonly messages: RunMessages,
  ) {}

  /**
   * Starts the wait for a decision on `revision`; `failClosed` cancels the plan when time runs out. The deadline is
   * stored, so a process that takes the run over later keeps it (`dueAt`: a deadline stored before, to keep).
   */
  arm(run: StoredRun, revision: number, failClosed: boolean, dueAt?: Date): void {
    this.clear(run.id);
    const now = this.deps.clock().getTime();
    const due = dueAt ?? new Date(now + this.deps.timeoutMs);
    if (!dueAt) {
      this.deps.store
        .setReviewDue(run.id, due)
        .catch((err: unknown) =>
          this.deps.log('warn', `run ${run.id}: review deadline not stored: ${(err as Error).message}`),
        );
    }
    const timer = setTimeout(
      () => {
        this.timers.delete(run.id);
        this.expire(run, revision, failClosed).catch((err: unknown) =>
          this.deps.log('error', `run ${run.id}: review timer failed: ${(err as Error).message}`),
        );
      },
      Math.max(0, due.getTime() - now),
    );
    // A waiting plan must not keep the process alive on its own.
    timer.unref();
    this.timers.set(run.id, timer);
  }

  /** A decision came: the run no longer waits. */
  clear(runId: string): void {
    const timer = this.timers.get(runId);
    if (timer) clearTimeout(timer);
    this.timers.delete(runId);
  }

  /** Drops every timer (at shutdown). */
  clearAll(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async expire(run: StoredRun, revision: number, failClosed: boolean): Promise<void> {
    const { store, clock } = this.deps;
    const driver = this.drivers.get(run.id);
    if (failClosed) {
      const to = driver ? 'stopping' : 'cancelled';
      if (!(await store.transition(run.id, ['awaiting_review'], to, { revision, at: clock() }))) return;
      driver?.send({ type: 'stopRequested' });
      const kept = driver ? 'Finished results are kept.' : 'Nothing was run.';
      const waited = formatDuration(this.deps.timeoutMs);
      await this.messages.notice(
        run,
        'warning',
        `No decision within ${waited}: this high-risk plan was cancelled. ${kept}`,
      );
      return;
    }
    const now = await store.getRun(run.id);
    if (now?.status === 'awaiting_review' && now.revision === revision) {
      await this.messages.notice(run, 'info', 'Reminder: this plan is still waiting for approve, amend or cancel.');
      this.arm(run, revision, false);
    }
  }
}
