/**
 * One deadline for a whole model call, retries included.
 * The SDKs' own timeout stops at the response headers, so a server that sends headers and then stalls
 * would otherwise hang the call until the caller gives up. A streamed answer also gets an idle limit: a stream that
 * goes quiet for that long is given up, rather than holding the call for the whole deadline.
 */

/** A signal that fires on the caller's abort or when the deadline passes, and which of the two it was. */
export interface CallDeadline {
  signal: AbortSignal;
  timedOut(): boolean;
  /** (Re)starts the idle limit: the call is given up, as timed out, unless `alive` is called again within `ms`. */
  alive(ms: number): void;
  /** Clears the timers and the listener on the caller's signal; call it when the call settles. */
  dispose(): void;
}

/** Starts a deadline of `ms` that also follows `outer`. */
export function startDeadline(ms: number, outer?: AbortSignal): CallDeadline {
  const controller = new AbortController();
  let expired = false;
  const expire = (why: string) => {
    expired = true;
    controller.abort(new Error(why));
  };
  const timer = setTimeout(() => expire(`deadline of ${ms} ms passed`), ms);
  let idle: NodeJS.Timeout | undefined;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => expired,
    alive: (idleMs) => {
      clearTimeout(idle);
      idle = setTimeout(() => expire(`no data for ${idleMs} ms`), idleMs);
    },
    dispose: () => {
      clearTimeout(timer);
      clearTimeout(idle);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}
