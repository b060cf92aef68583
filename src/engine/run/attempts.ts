/** Reading a run's stored step attempts. */
import type { StoredStepAttempt } from '../ports.ts';

/** The latest attempt of each step that has one (a retry supersedes the attempt before it). */
export function latestAttempts(attempts: readonly StoredStepAttempt[]): Map<string, StoredStepAttempt> {
  const latest = new Map<string, StoredStepAttempt>();
  for (const a of attempts) {
    const seen = latest.get(a.stepId);
    if (!seen || a.attempt >= seen.attempt) latest.set(a.stepId, a);
  }
  return latest;
}
