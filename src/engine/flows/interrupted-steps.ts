/** Attempts a dead process left in flight: each ends failed as `interrupted`, under the fence of the new holder. */
import type { StepLog, StoredStepAttempt } from '../ports.ts';

/** Ends every attempt still `running` in `attempts` as interrupted; `what` names it in the error ("step", "call"). */
export async function endInterrupted(
  deps: { store: Pick<StepLog, 'recordStepEnded'>; clock: () => Date },
  runId: string,
  attempts: readonly StoredStepAttempt[],
  fence: number,
  what: 'step' | 'call' = 'step',
): Promise<void> {
  const error = {
    code: 'interrupted' as const,
    message: `Steward stopped while this ${what} was running`,
    retryable: false,
  };
  for (const a of attempts.filter((x) => x.status === 'running')) {
    const end = { status: 'failed' as const, output: null, error, at: deps.clock(), durationMs: 0, fence };
    await deps.store.recordStepEnded({ runId, stepId: a.stepId, attempt: a.attempt, ...end });
  }
}
