/**
 * "Steward is typing…" in a thread from a request's arrival to Steward's first message there. Discord shows the sign
 * for about 10 seconds per call, so it is sent again every 8 s while the request is being worked on, and never
 * longer than a planner call may take.
 */

/** Discord's sign lasts about 10 s; sending it again a little earlier keeps it on without a gap. */
const REPEAT_MS = 8_000;
/** The sign stops after this long even if nothing was posted: something else will say what happened. */
const MAX_MS = 5 * 60_000;

/** The typing signs shown now, by channel id. */
export class TypingSigns {
  private readonly shown = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly sendTyping: (channelId: string) => Promise<unknown>,
    private readonly log: (message: string) => void,
  ) {}

  /** Shows the sign in a channel at once, and keeps it on until `clear`. */
  show(channelId: string): void {
    if (this.shown.has(channelId)) return;
    const send = () => {
      this.sendTyping(channelId).catch((err: unknown) => {
        this.log(`discord: typing sign refused in ${channelId} (${(err as Error).message})`);
        this.clear(channelId);
      });
    };
    const until = Date.now() + MAX_MS;
    const timer = setInterval(() => (Date.now() > until ? this.clear(channelId) : send()), REPEAT_MS);
    timer.unref();
    this.shown.set(channelId, timer);
    send();
  }

  /** Stops the sign in a channel (Steward posted there, or the request is done). */
  clear(channelId: string): void {
    const timer = this.shown.get(channelId);
    if (!timer) return;
    clearInterval(timer);
    this.shown.delete(channelId);
  }

  clearAll(): void {
    for (const id of [...this.shown.keys()]) this.clear(id);
  }
}
