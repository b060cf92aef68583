/**
 * A server's call slots (`maxConcurrency` in mcp.json): at most `limit` calls in flight at once, from every run of
 * this process together; the others wait for a slot in the order they asked.
 */

/**
 * How a wait for a slot ended; a granted slot must be given back with `release` (a second call does nothing).
 * `queued`: the call had to wait for it (so its time left is shorter), rather than finding one free.
 */
export type SlotWait =
  { kind: 'granted'; release: () => void; queued: boolean } | { kind: 'aborted' } | { kind: 'timeout' };

/** Slots of one server; without a limit every call gets one at once. */
export class CallSlots {
  private inUse = 0;
  // Arrival order; a waiter that gives up is taken out, so the head is always someone still waiting.
  private readonly queue: (() => void)[] = [];

  constructor(readonly limit: number | undefined) {}

  /** Calls holding a slot now. */
  get busy(): number {
    return this.inUse;
  }

  /** Calls waiting for a slot now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Waits for a slot until `signal` aborts or `timeoutMs` passes; first come, first served. */
  acquire(signal: AbortSignal, timeoutMs: number): Promise<SlotWait> {
    if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
    // A free slot goes to the queue's head first: a newcomer never overtakes a call that was already waiting.
    if (this.limit === undefined || (this.inUse < this.limit && this.queue.length === 0)) {
      return Promise.resolve(this.grant(false));
    }
    return new Promise((resolve) => {
      const leave = (wait: SlotWait) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const at = this.queue.indexOf(take);
        if (at >= 0) this.queue.splice(at, 1);
        resolve(wait);
      };
      const take = () => leave(this.grant(true));
      const onAbort = () => leave({ kind: 'aborted' });
      const timer = setTimeout(() => leave({ kind: 'timeout' }), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(take);
    });
  }

  private grant(queued: boolean): SlotWait {
    this.inUse++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.inUse--;
      // Handed on synchronously, so no call that arrives in between can take the slot out of turn.
      this.queue[0]?.();
    };
    return { kind: 'granted', release, queued };
  }
}
