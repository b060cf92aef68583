/**
 * Waiting on a fact instead of a fixed sleep: poll a check (a database row, a recorded request, printed text)
 * until it holds, and fail with what was seen when it never does.
 *
 *   const attempt = await waitUntil('step one to end', async () =>
 *     (await store.listStepAttempts(runId)).find((a) => a.stepId === 'one' && a.endedAt !== null));
 */

/** What a check found: its value, known not to be one of the falsy "not yet" answers. */
export type Found<T> = Exclude<T, false | null | undefined | '' | 0>;

export interface WaitOptions {
  /** How long to keep polling (default 20 s). */
  timeoutMs?: number;
  /** Time between checks (default 10 ms). */
  intervalMs?: number;
  /** What was seen so far, added to the timeout error (console output, logs…). */
  details?: () => string;
}

/**
 * Polls `check` until it returns a truthy value, and returns that value. A check that throws counts as "not yet"
 * (what it looks for may not exist yet); the last error is named if time runs out.
 */
export async function waitUntil<T>(
  what: string,
  check: () => T | Promise<T>,
  { timeoutMs = 20_000, intervalMs = 10, details }: WaitOptions = {},
): Promise<Found<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const value = await Promise.resolve()
      .then(check)
      .catch((err: unknown) => ((lastError = err), undefined));
    if (value) return value as Found<T>;
    if (Date.now() > deadline) {
      const error = lastError === undefined ? '' : ` (last error: ${errorText(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${error}${details ? `; ${details()}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : JSON.stringify(error);
}
