/**
 * Retries of store operations that failed for a reason that passes (a lost connection, a server restarting or
 * failing over, a serialization conflict): exponential backoff with jitter, within a time budget. Only writes
 * that are safe to repeat are sent through here; `pg-run-store.ts` makes each write so.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { StewardError } from '../engine/errors.ts';
import { withStoreErrors } from './store-errors.ts';

/** How long and how often a failed operation is tried again. */
export interface RetryPolicy {
  /** Give up (and throw the last error) once this much time has passed since the first try. */
  budgetMs: number;
  firstDelayMs: number;
  maxDelayMs: number;
  /** Told about each retry, for the operator's log. */
  onRetry?: (action: string, attempt: number, error: StewardError) => void;
}

/** About 15 s: a fast restart (`pg_ctl restart`, ~0.3 s) or a failover passes well within it. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { budgetMs: 15_000, firstDelayMs: 50, maxDelayMs: 2_000 };

/** Runs `work`, translating failures, and tries again while they are retryable and the budget lasts. */
export async function withRetries<T>(action: string, work: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const started = Date.now();
  let delay = policy.firstDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await withStoreErrors(action, work);
    } catch (error) {
      if (!(error instanceof StewardError) || !error.retryable) throw error;
      // Full jitter keeps many runs that failed together from retrying together.
      const wait = Math.round(delay / 2 + Math.random() * (delay / 2));
      if (Date.now() - started + wait > policy.budgetMs) throw error;
      policy.onRetry?.(action, attempt, error);
      await sleep(wait);
      delay = Math.min(delay * 2, policy.maxDelayMs);
    }
  }
}
