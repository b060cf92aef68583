/**
 * A run driver's messages in the order the dispatcher decided them. A step's "running" line goes out only once its
 * intent is stored (its call is sent then), yet it keeps the place of the transition that started it: a sibling that
 * failed in the same transition, or a step a Stop cancelled, is never shown before it. A flow can hold the line the
 * same way while it says what a person's decision does (Stop's notice goes before the steps it cancels).
 */

/** How long a place is kept for a message still to come before the messages behind it go on (the database away). */
const MAX_HOLD_MS = 1_000;

/** Fills a place kept in line: with a message, or with nothing (null). Only the first call counts. */
export type FillPlace<M> = (message: M | null) => void;

/** Messages delivered one after another, in the order they were pushed or their places were kept. */
export class ProgressOutbox<M> {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    /** Delivers one message; it must not throw (the driver logs a failed delivery). */
    private readonly deliver: (message: M) => Promise<void>,
    private readonly maxHoldMs = MAX_HOLD_MS,
  ) {}

  /** Sends `message` once everything before it went out. */
  push(message: M): void {
    this.after(() => this.deliver(message));
  }

  /**
   * Keeps a place in line for a message that comes later; what is pushed meanwhile waits behind it. A place not
   * filled within the hold time lets the rest go on, and its message, when it comes, goes last.
   */
  keepPlace(): FillPlace<M> {
    let settle!: (message: M | null) => void;
    const filled = new Promise<M | null>((resolve) => (settle = resolve));
    let state: 'open' | 'filled' | 'lapsed' = 'open';
    const timer = setTimeout(() => {
      if (state !== 'open') return;
      state = 'lapsed';
      settle(null);
    }, this.maxHoldMs);
    timer.unref();
    this.after(async () => {
      const message = await filled;
      if (message !== null) await this.deliver(message);
    });
    return (message) => {
      if (state === 'lapsed' && message !== null) this.push(message);
      if (state !== 'open') return;
      state = 'filled';
      clearTimeout(timer);
      settle(message);
    };
  }

  /** Resolves once everything pushed so far went out (or its place lapsed). */
  idle(): Promise<void> {
    return this.tail;
  }

  private after(next: () => Promise<void>): void {
    this.tail = this.tail.then(next).catch(() => undefined);
  }
}
