/**
 * One deadline for a whole model call, retries included.
 * The SDKs' own timeout stops at the response headers, so a server that sends headers and then stalls
 * would otherwise hang the call until the caller gives up.
 */

/** A signal that fires on the caller's abort or when the deadline passes, and which of the two it was. */
export interface CallDeadline {
  signal: AbortSignal;
  timedOut(): boolean;
  /** Clears the timer and the listener on the caller's signal; call it when the call settles. */
  dispose(): void;
}

/** Starts a deadline of `ms` that also follows `outer`. */
export function startDeadline(ms: number, outer?: AbortSignal): CallDeadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new Error(`deadline of ${ms} ms passed`));
  }, ms);
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => expired,
    dispose: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}
