/**
 * Progress reports of calls in flight, paced per call: the first report shows at once, later ones at most once per
 * interval, and of those only the latest (a server that reports every 10 ms costs a card one change a second, not a
 * hundred). A call that ended takes its unshown report with it.
 */

/** How often one call's progress may change what a person sees. */
export const CALL_PROGRESS_INTERVAL_MS = 1_000;

interface PacedCall<R> {
  latest: R | null;
  shownAt: number;
  timer: NodeJS.Timeout | undefined;
}

/** Latest-wins pacing of reports of type `R`, by call key. */
export class PacedProgress<R> {
  private readonly calls = new Map<string, PacedCall<R>>();

  constructor(
    /** Shows one report; it must not throw. */
    private readonly show: (key: string, report: R) => void,
    private readonly o: { now: () => number; intervalMs?: number },
  ) {}

  /** A call's newest report: shown now if the call's interval has passed, else when it does (unless newer comes). */
  report(key: string, report: R): void {
    let call = this.calls.get(key);
    if (!call) {
      call = { latest: null, shownAt: Number.NEGATIVE_INFINITY, timer: undefined };
      this.calls.set(key, call);
    }
    call.latest = report;
    if (call.timer) return;
    const interval = this.o.intervalMs ?? CALL_PROGRESS_INTERVAL_MS;
    // Never longer than one interval, even if the clock went back.
    const wait = Math.min(interval, call.shownAt + interval - this.o.now());
    if (wait <= 0) return this.flush(key, call);
    const paced = call;
    paced.timer = setTimeout(() => {
      paced.timer = undefined;
      this.flush(key, paced);
    }, wait);
    paced.timer.unref();
  }

  /** The call ended (or was stopped): a report not shown yet never is. */
  end(key: string): void {
    clearTimeout(this.calls.get(key)?.timer);
    this.calls.delete(key);
  }

  /** Every call ended (the run was let go). */
  endAll(): void {
    for (const key of [...this.calls.keys()]) this.end(key);
  }

  private flush(key: string, call: PacedCall<R>): void {
    const report = call.latest;
    if (report === null || this.calls.get(key) !== call) return;
    call.latest = null;
    call.shownAt = this.o.now();
    this.show(key, report);
  }
}
