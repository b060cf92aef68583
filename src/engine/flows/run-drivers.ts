/** The runs this process drives: one driver per run, and the work that reports each run after it ends. */
import type { StoredRun } from '../ports.ts';
import type { DispatchState } from '../run/dispatch-state.ts';
import type { RunDriver } from './run-driver.ts';

/** Registry of live drivers; a run is here from its start until its report is sent (or sending it failed). */
export class RunDrivers {
  private readonly drivers = new Map<string, RunDriver>();
  /** The run each driver drives, as it was when it started: enough to authorize a Stop without the database. */
  private readonly runs = new Map<string, StoredRun>();
  private readonly finishing = new Map<string, Promise<void>>();
  private readonly closingController = new AbortController();
  /** Wakes `idle` when a run is let go (its driver's `done` never settles then). */
  private wake: () => void = () => undefined;

  /** Aborts when this process lets go of its runs (shutdown): waits for the database end then. */
  get closing(): AbortSignal {
    return this.closingController.signal;
  }

  /** The driver of a run this process is driving, if any. */
  get(runId: string): RunDriver | undefined {
    return this.drivers.get(runId);
  }

  /** The run a local driver drives, if any. */
  runOf(runId: string): StoredRun | undefined {
    return this.runs.get(runId);
  }

  has(runId: string): boolean {
    return this.drivers.has(runId);
  }

  /** Every live driver. */
  all(): RunDriver[] {
    return [...this.drivers.values()];
  }

  /** Tracks `driver` until `finish` (given the final state) settles; `finish` never rejects into the void. */
  track(
    driver: RunDriver,
    run: StoredRun,
    finish: (final: DispatchState) => Promise<void>,
    onError: (err: unknown) => void,
  ): void {
    this.drivers.set(driver.runId, driver);
    this.runs.set(driver.runId, run);
    const finishing: Promise<void> = driver.done
      .then(finish)
      .catch(onError)
      .finally(() => {
        if (this.drivers.get(driver.runId) !== driver) return;
        this.drivers.delete(driver.runId);
        this.runs.delete(driver.runId);
        this.finishing.delete(driver.runId);
      });
    this.finishing.set(driver.runId, finishing);
  }

  /**
   * Lets go of one run, as a crash would (nothing more is recorded): another process took it over, and this one
   * may no longer start or record its steps. Calls in flight are aborted.
   */
  letGo(runId: string): void {
    const driver = this.drivers.get(runId);
    if (!driver) return;
    driver.detach();
    this.drivers.delete(runId);
    this.runs.delete(runId);
    this.finishing.delete(runId);
    this.wake();
  }

  /** Resolves when every run this process drives has finished and reported. */
  async idle(): Promise<void> {
    while (this.drivers.size > 0 || this.finishing.size > 0) {
      const letGo = new Promise<void>((resolve) => (this.wake = resolve));
      const all = Promise.all([...[...this.drivers.values()].map((d) => d.done), ...this.finishing.values()]);
      await Promise.race([all, letGo]);
    }
  }

  /** Lets go of every run as a crash would (nothing more is recorded); the next start resumes them. */
  detachAll(): void {
    this.closingController.abort();
    for (const driver of this.drivers.values()) driver.detach();
    this.drivers.clear();
    this.runs.clear();
    this.finishing.clear();
  }
}
