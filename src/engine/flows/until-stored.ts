/**
 * Patience with the database beyond the store's own retries: a write whose failure is retryable (the database is
 * away) is tried again with backoff until it is stored or `signal` aborts, so a result or a run's end is never lost
 * to an outage. Any other failure, or an abort, throws the last error.
 */
import { StewardError } from '../errors.ts';

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;

/** Runs `write` until it succeeds; `onWait` is told about each retryable failure before the wait that follows it. */
export async function untilStored<T>(
  write: () => Promise<T>,
  options: { signal: AbortSignal; onWait?: (error: StewardError) => void },
): Promise<T> {
  let delay = FIRST_DELAY_MS;
  for (;;) {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof StewardError) || !err.retryable || options.signal.aborted) throw err;
      options.onWait?.(err);
      await wait(delay, options.signal);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
