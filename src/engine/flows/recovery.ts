/**
 * After a restart: every unfinished run is picked up from the database. Finished steps are never run again;
 * a step that was in flight runs again only if its tool is idempotent, otherwise the run waits for a person.
 */
import { toPlanCard } from '../plan/plan-card.ts';
import type { StoredRun } from '../ports.ts';
import { restoreDispatch } from '../run/restore.ts';
import { armReviewTimer, planWarnings } from './review-flow.ts';
import { startDriver } from './run-control.ts';
import { notice, policiesFor, type StewardContext } from './steward-context.ts';
import { validatePlan } from '../plan/validate-plan.ts';

/** Resumes one unfinished run. */
export async function recoverRun(ctx: StewardContext, run: StoredRun): Promise<void> {
  const { store, clock, settings } = ctx.deps;
  if (run.status === 'planning') {
    await store.transition(run.id, ['planning'], 'failed', { at: clock() });
    await notice(
      ctx,
      run.conversation,
      run.id,
      'error',
      'Steward restarted while planning this request; please ask again.',
    );
    return;
  }
  if (!run.plan) return;
  const v = validatePlan(run.plan, ctx.deps.tools.listTools());
  if (!v.ok) {
    await store.transition(run.id, [run.status], 'failed', { at: clock() });
    await notice(
      ctx,
      run.conversation,
      run.id,
      'error',
      `After a restart the plan is no longer valid: ${v.errors.join('; ')}`,
    );
    return;
  }
  const attempts = await store.listStepAttempts(run.id);
  const amendmentsLeft = Math.max(0, settings.amendmentCap - run.amendmentRounds);
  if (run.status === 'awaiting_review' && attempts.length === 0) {
    await ctx.deps.notifier.send(
      run.conversation,
      toPlanCard(run.id, run.revision, v.value, {
        needsReview: true,
        amendmentsLeft,
        requester: run.requester,
        breakpoints: run.breakpoints,
        warnings: planWarnings(ctx, v.value.plan),
      }),
    );
    armReviewTimer(ctx, run, run.revision, v.value.risk === 'high');
    return;
  }
  const restored = restoreDispatch(v.value.plan, policiesFor(ctx, v.value.plan), attempts, run.status, {
    ...settings,
    approvedRisk: run.approvedRisk ?? v.value.risk,
    breakpoints: run.breakpoints,
  });
  for (const a of attempts.filter((x) => x.status === 'running')) {
    const error = {
      code: 'interrupted' as const,
      message: 'Steward stopped while this step was running',
      retryable: false,
    };
    await store.recordStepEnded({
      runId: run.id,
      stepId: a.stepId,
      attempt: a.attempt,
      status: 'failed',
      output: null,
      error,
      at: clock(),
      durationMs: 0,
    });
  }
  const paused = restored.state.phase === 'paused';
  await ctx.deps.notifier.send(
    run.conversation,
    toPlanCard(run.id, run.revision, v.value, {
      needsReview: false,
      amendmentsLeft,
      requester: run.requester,
      actions: paused ? ['resume', 'stop'] : ['pause', 'stop'],
      breakpoints: run.breakpoints,
      warnings: planWarnings(ctx, v.value.plan),
    }),
  );
  if (restored.interrupted.length > 0) {
    await store.transition(run.id, ['running'], 'paused', { at: clock() });
    const many = restored.interrupted.length > 1;
    await notice(
      ctx,
      run.conversation,
      run.id,
      'warning',
      `Steward restarted while ${restored.interrupted.join(', ')} ${many ? 'were' : 'was'} running. ${many ? 'Their tools' : 'Its tool'} may have acted already and ${many ? 'are' : 'is'} not safe to repeat blindly: resume to run ${many ? 'them' : 'it'} again, or stop.`,
    );
  } else {
    await notice(ctx, run.conversation, run.id, 'info', 'Steward restarted; continuing this run where it left off.');
  }
  await store.appendEvent(
    run.id,
    'recovered',
    { interrupted: restored.interrupted, retried: restored.retried },
    clock(),
  );
  startDriver(ctx, run, v.value, await store.listPins(run.id), restored.state);
}
