/**
 * A timer that runs one round at a time and sleeps until the time the round names: the scheduler's only use of the
 * clock to wake. A round asked for while one runs goes right after it; a round that fails is tried again shortly.
 */
import type { Log } from './deps.ts';

/** Wakes `round` at the time it returns (capped at `pollMs`, and `pollMs` when it names none). */
export class WakeTimer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(
    private readonly round: () => Promise<Date | null>,
    private readonly o: { clock: () => Date; log: Log; pollMs: number; what: string },
  ) {}

  /** A round now, then one at each time named. */
  start(): void {
    this.stopped = false;
    this.soon();
  }

  /** A round now (or right after the one under way). */
  soon(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.round()
      .then(
        (next) => this.arm(next),
        (err: unknown) => {
          this.o.log('warn', `${this.o.what}: ${(err as Error).message}; trying again shortly`);
          this.arm(null);
        },
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.soon();
        }
      });
  }

  /** Stops waking, and waits for the round under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private arm(next: Date | null): void {
    if (this.stopped) return;
    const untilNext = next ? next.getTime() - this.o.clock().getTime() : this.o.pollMs;
    this.timer = setTimeout(() => this.soon(), Math.max(0, Math.min(this.o.pollMs, untilNext)));
    this.timer.unref();
  }
}
