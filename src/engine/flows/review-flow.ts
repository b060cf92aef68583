/**
 * Review: show a plan, then approve, amend (re-plan, capped), edit (JSON, no model call) or cancel it.
 * Every decision names the revision it saw; the store refuses decisions on a stale revision.
 */
import type { InboundDecision } from '../channel.ts';
import { toPlanCard } from '../plan/plan-card.ts';
import { planSchema, type Plan } from '../plan/plan-schema.ts';
import { MAX_PLAN_CHARS, writePlan, type PlanOutcome } from './planner.ts';
import type { Conversation, PinnedTool, StoredRun } from '../ports.ts';
import { breakpointStep } from '../run/dispatch.ts';
import { newPins } from '../plan/tool-pins.ts';
import { toolWarnings } from '../plan/tool-warnings.ts';
import { riskAbove } from '../plan/risk.ts';
import { startDriver } from './run-control.ts';
import { meteredLlm } from './metered-llm.ts';
import { announceStatus, notice, policiesFor, who, type StewardContext } from './steward-context.ts';
import type { Actor, Json, RunStatus } from '../types.ts';
import { validatePlan, type ValidatedPlan } from '../plan/validate-plan.ts';

/** Asks the planner for a plan (or an amended one). */
export async function plan(
  ctx: StewardContext,
  run: { id: string; requester: Actor },
  request: string,
  amend?: Parameters<typeof writePlan>[1]['amend'],
): Promise<PlanOutcome> {
  try {
    return await writePlan(
      meteredLlm(ctx, run.id, run.requester),
      { request, tools: ctx.deps.tools.listTools(), amend },
      {
        maxRepairs: ctx.deps.settings.maxRepairs,
      },
    );
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : 'the planner call failed', calls: 0 };
  }
}

/** Shows a validated revision: starts it at once when the requester's preference allows, else waits for review. */
export async function offer(
  ctx: StewardContext,
  runId: string,
  revision: number,
  v: ValidatedPlan,
  from: RunStatus,
  forceReview = false,
): Promise<void> {
  const { store, clock } = ctx.deps;
  const run = await store.getRun(runId);
  if (!run) return;
  const amendmentsLeft = Math.max(0, ctx.deps.settings.amendmentCap - run.amendmentRounds);
  const preference = (await store.getReviewPreference(run.requester)) ?? 'risky';
  // High risk always waits for a person, whatever the preference: fail closed.
  const review =
    forceReview || v.risk === 'high' || preference === 'all' || (preference === 'risky' && v.risk !== 'low');
  if (!review) {
    if (!(await store.transition(runId, [from], 'running', { at: clock() }))) return;
    await store.setApprovedRisk(runId, v.risk, clock());
    const pins = await pinPlan(ctx, runId, v.plan);
    await store.appendEvent(runId, 'autoApproved', { revision, risk: v.risk, preference }, clock());
    const shown = await showCard(
      ctx,
      run,
      'running',
      toPlanCard(runId, revision, v, {
        needsReview: false,
        amendmentsLeft,
        requester: run.requester,
        warnings: planWarnings(ctx, v.plan),
      }),
    );
    if (shown) startDriver(ctx, { ...run, revision, approvedRisk: v.risk }, v, pins);
    return;
  }
  const suggested = await suggestBreakpoints(ctx, run, v.plan);
  const kept = run.breakpoints.filter((b) => v.plan.steps.some((s) => s.id === breakpointStep(b)));
  const breakpoints = [...new Set([...kept, ...suggested.map((id) => `before:${id}`)])];
  await store.setBreakpoints(runId, breakpoints, clock());
  if (!(await store.transition(runId, [from], 'awaiting_review', { at: clock() }))) return;
  const shown = await showCard(
    ctx,
    run,
    'awaiting_review',
    toPlanCard(runId, revision, v, {
      needsReview: true,
      amendmentsLeft,
      requester: run.requester,
      breakpoints,
      warnings: planWarnings(ctx, v.plan),
    }),
  );
  if (shown) armReviewTimer(ctx, run, revision, v.risk === 'high');
}

/**
 * Sends a plan card. If the platform refuses it (say, rate limits outlasting the client's retries), the run must
 * not sit in `status` unseen and undriven: it fails, with the reason in its history, and nothing runs.
 */
async function showCard(
  ctx: StewardContext,
  run: StoredRun,
  status: RunStatus,
  card: ReturnType<typeof toPlanCard>,
): Promise<boolean> {
  try {
    await ctx.deps.notifier.send(run.conversation, card);
    return true;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    ctx.deps.log('error', `run ${run.id}: the plan card could not be delivered, so the run fails: ${reason}`);
    await ctx.deps.store.transition(run.id, [status], 'failed', { at: ctx.deps.clock() });
    await ctx.deps.store.appendEvent(run.id, 'cardNotDelivered', { reason: reason.slice(0, 500) }, ctx.deps.clock());
    return false;
  }
}

/** Steps whose tool this person paused, stopped or edited before: suggested breakpoints, held before the step. */
async function suggestBreakpoints(ctx: StewardContext, run: StoredRun, p: Plan): Promise<string[]> {
  const tools = [...new Set(p.steps.flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])))];
  const counts = await ctx.deps.store.countInterventions(run.requester, tools);
  return p.steps.filter((s) => s.kind === 'tool' && (counts[s.tool] ?? 0) > 0).map((s) => s.id);
}

/** Approve: at first review it starts the run; mid-run it lets steps of a newly added, riskier revision start. */
export async function approve(ctx: StewardContext, run: StoredRun, d: InboundDecision): Promise<string | null> {
  const { store, clock } = ctx.deps;
  if (!run.plan) return 'There is no plan to approve.';
  const v = validatePlan(run.plan, ctx.deps.tools.listTools());
  if (!v.ok) return `The plan is no longer valid: ${v.errors.join('; ')}`;
  if (!(await store.transition(run.id, ['awaiting_review'], 'running', { revision: d.revision, at: clock() })))
    return stale(ctx, run, d);
  clearTimer(ctx, run.id);
  await store.setApprovedRisk(run.id, v.value.risk, clock());
  await notice(
    ctx,
    run.conversation,
    run.id,
    'info',
    `Approved by ${who(d.actor)}; running ${run.plan.steps.length} steps.`,
  );
  await announceStatus(ctx, run, 'running');
  const driver = ctx.drivers.get(run.id);
  if (driver) {
    // The person saw the changes: pin the definitions of held tools as they are now.
    const changed = new Set(
      driver.current.holds
        .filter((h) => h.why === 'changed')
        .flatMap((h) => {
          const step = driver.current.plan.steps.find((s) => s.id === h.stepId);
          return step?.kind === 'tool' ? [step.tool] : [];
        }),
    );
    const repins = ctx.deps.tools
      .listTools()
      .filter((t) => changed.has(t.name))
      .map((t) => ({ tool: t.name, fingerprint: t.fingerprint, definition: t.definition }));
    await store.pinTools(run.id, repins, clock());
    for (const pin of repins) driver.pins.set(pin.tool, pin);
    driver.send({ type: 'holdsApproved', risk: v.value.risk, policies: policiesFor(ctx, driver.current.plan) });
    // The run is now "running" in the database; a pause or breakpoint from before the hold ends with the approval.
    driver.send({ type: 'resumeRequested' });
  } else {
    startDriver(ctx, { ...run, approvedRisk: v.value.risk }, v.value, await pinPlan(ctx, run.id, v.value.plan));
  }
  return null;
}

/** Pins the definitions of the plan's tools as approved now. */
async function pinPlan(ctx: StewardContext, runId: string, p: Plan): Promise<PinnedTool[]> {
  const pins = newPins(p, ctx.deps.tools.listTools(), new Map());
  await ctx.deps.store.pinTools(runId, pins, ctx.deps.clock());
  return pins;
}

/** Warnings about the plan's tools (suspicious descriptions), for the card. */
export function planWarnings(ctx: StewardContext, p: Plan): string[] {
  const used = new Set(p.steps.flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])));
  return ctx.deps.tools
    .listTools()
    .filter((t) => used.has(t.name))
    .flatMap((t) => toolWarnings(t));
}

/** Cancel at review. Mid-run (steps waiting for approval) it stops the run and keeps what finished. */
export async function cancel(ctx: StewardContext, run: StoredRun, d: InboundDecision): Promise<string | null> {
  const { store, clock } = ctx.deps;
  const driver = ctx.drivers.get(run.id);
  const to: RunStatus = driver ? 'stopping' : 'cancelled';
  if (!(await store.transition(run.id, ['awaiting_review'], to, { revision: d.revision, at: clock() })))
    return stale(ctx, run, d);
  clearTimer(ctx, run.id);
  driver?.send({ type: 'stopRequested' });
  await notice(
    ctx,
    run.conversation,
    run.id,
    'info',
    driver
      ? `Cancelled by ${who(d.actor)}: steps waiting for approval will not run; finished results are kept.`
      : `Cancelled by ${who(d.actor)}. Nothing was run.`,
  );
  await announceStatus(ctx, run, to);
  return null;
}

/** Amend at review: one planner call with the current plan and the person's words, then review again. */
export async function amendAtReview(
  ctx: StewardContext,
  run: StoredRun,
  d: InboundDecision,
  text: string,
): Promise<string | null> {
  const { store, clock, settings } = ctx.deps;
  if (!run.plan) return 'There is no plan to amend.';
  // Claim the revision first, so two amendments (or an amendment racing an approval) cannot both win.
  if (!(await store.transition(run.id, ['awaiting_review'], 'planning', { revision: d.revision, at: clock() })))
    return stale(ctx, run, d);
  const round = await store.takeAmendmentRound(run.id, settings.amendmentCap);
  const previous = validatePlan(run.plan, ctx.deps.tools.listTools());
  if (round === null) {
    await store.transition(run.id, ['planning'], 'awaiting_review', { at: clock() });
    return `No amendment rounds left (the limit is ${settings.amendmentCap}). Approve or cancel this plan.`;
  }
  clearTimer(ctx, run.id);
  await store.appendEvent(run.id, 'amendmentRequested', { round, text: text.slice(0, 2000) }, clock());
  const planned = await plan(ctx, run, run.request, { plan: run.plan, text });
  if (!planned.ok || !planned.value.plan.needsTools) {
    const why = planned.ok ? 'the revised plan had no steps' : planned.error;
    if (!previous.ok) {
      await store.transition(run.id, ['planning'], 'failed', { at: clock() });
      return `The amendment could not be applied (${why}), and the previous plan is no longer valid (${previous.errors.join('; ')}). Please ask again.`;
    }
    await offer(ctx, run.id, run.revision, previous.value, 'planning', true);
    return `The amendment could not be applied (${why}); the previous plan stands.`;
  }
  await store.saveRevision(run.id, run.revision + 1, planned.value.plan, `amendment ${round}`, clock());
  // The person is reviewing: the amended plan waits for their approval even when it is low risk.
  await offer(ctx, run.id, run.revision + 1, planned.value, 'planning', true);
  return null;
}

/** Edit at review: the person's JSON replaces the plan (no model call), validated like any plan, reviewed again. */
export async function editAtReview(ctx: StewardContext, run: StoredRun, d: InboundDecision): Promise<string | null> {
  const { store, clock } = ctx.deps;
  const parsed = parseEdit(run.plan, d.plan);
  if (!parsed.ok) return parsed.error;
  const v = validatePlan(parsed.value, ctx.deps.tools.listTools());
  if (!v.ok) return `That edit was refused: ${v.errors.join('; ')}`;
  if (!(await store.transition(run.id, ['awaiting_review'], 'planning', { revision: d.revision, at: clock() })))
    return stale(ctx, run, d);
  clearTimer(ctx, run.id);
  await store.saveRevision(run.id, run.revision + 1, v.value.plan, `edited by ${who(d.actor)}`, clock());
  await offer(ctx, run.id, run.revision + 1, v.value, 'planning', true);
  return null;
}

/** Reads an edit: a whole plan, or `{"steps": [...]}` laid over the current plan. */
export function parseEdit(
  current: Plan | null,
  edit: Json | undefined,
): { ok: true; value: Plan } | { ok: false; error: string } {
  if (!current) return { ok: false, error: 'There is no plan to edit.' };
  if (!edit || typeof edit !== 'object' || Array.isArray(edit))
    return { ok: false, error: 'An edit is a JSON object: a whole plan, or {"steps": [...]}.' };
  if (JSON.stringify(edit).length > MAX_PLAN_CHARS)
    return { ok: false, error: `That edit was refused: a plan is at most ${MAX_PLAN_CHARS} characters.` };
  const parsed = planSchema.safeParse({ ...current, ...edit, needsTools: true });
  if (!parsed.success) {
    return {
      ok: false,
      error: `That edit was refused: ${parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; ')}`,
    };
  }
  return { ok: true, value: parsed.data };
}

/** Why a decision lost: read the run again, since another decision may have just changed it. */
export async function stale(ctx: StewardContext, run: StoredRun, d: InboundDecision): Promise<string> {
  const now = (await ctx.deps.store.getRun(run.id)) ?? run;
  if (now.revision !== d.revision)
    return `That card shows revision ${d.revision}, but the plan is now at revision ${now.revision}; use the newest card.`;
  return `That plan is ${describeStatus(now.status)}; nothing changed.`;
}

/** Waiting too long: high risk is cancelled (fail closed), lower risk gets a reminder and keeps waiting. */
export function armReviewTimer(ctx: StewardContext, run: StoredRun, revision: number, failClosed: boolean): void {
  clearTimer(ctx, run.id);
  const ms = ctx.deps.settings.reviewTimeoutMs;
  const timer = setTimeout(() => {
    void onReviewTimeout(ctx, run, revision, failClosed, ms).catch((err: unknown) =>
      ctx.deps.log('error', `run ${run.id}: review timer failed: ${(err as Error).message}`),
    );
  }, ms);
  timer.unref();
  ctx.timers.set(run.id, timer);
}

async function onReviewTimeout(
  ctx: StewardContext,
  run: StoredRun,
  revision: number,
  failClosed: boolean,
  ms: number,
): Promise<void> {
  const { store, clock } = ctx.deps;
  const driver = ctx.drivers.get(run.id);
  if (failClosed) {
    if (
      await store.transition(run.id, ['awaiting_review'], driver ? 'stopping' : 'cancelled', { revision, at: clock() })
    ) {
      driver?.send({ type: 'stopRequested' });
      await notice(
        ctx,
        run.conversation,
        run.id,
        'warning',
        `No decision within ${formatDuration(ms)}: this high-risk plan was cancelled. ${driver ? 'Finished results are kept.' : 'Nothing was run.'}`,
      );
    }
    return;
  }
  const now = await store.getRun(run.id);
  if (now?.status === 'awaiting_review' && now.revision === revision) {
    await notice(
      ctx,
      run.conversation,
      run.id,
      'info',
      'Reminder: this plan is still waiting for approve, amend or cancel.',
    );
    armReviewTimer(ctx, run, revision, false);
  }
}

export function clearTimer(ctx: StewardContext, runId: string): void {
  const t = ctx.timers.get(runId);
  if (t) clearTimeout(t);
  ctx.timers.delete(runId);
}

/** A card for a revision that is already running (after an edit or amendment mid-run). */
export async function showRunning(
  ctx: StewardContext,
  conversation: Conversation,
  run: StoredRun,
  revision: number,
  v: ValidatedPlan,
): Promise<void> {
  const amendmentsLeft = Math.max(0, ctx.deps.settings.amendmentCap - run.amendmentRounds);
  const needsApproval = run.approvedRisk !== null && riskAbove(v.risk, run.approvedRisk);
  await ctx.deps.notifier.send(
    conversation,
    toPlanCard(run.id, revision, v, {
      needsReview: false,
      amendmentsLeft,
      requester: run.requester,
      actions: ['pause', 'stop'],
      note: needsApproval ? 'Steps riskier than what was approved will wait for approval.' : undefined,
    }),
  );
}

function describeStatus(status: RunStatus): string {
  const words: Record<RunStatus, string> = {
    planning: 'being planned',
    awaiting_review: 'waiting for review',
    running: 'running',
    paused: 'paused',
    stopping: 'stopping',
    completed: 'finished',
    failed: 'failed',
    cancelled: 'cancelled',
    stopped: 'stopped',
  };
  return words[status];
}

function formatDuration(ms: number): string {
  return ms < 60_000 ? `${Math.max(1, Math.round(ms / 1000))} s` : `${Math.round(ms / 60_000)} min`;
}

export { describeStatus };
