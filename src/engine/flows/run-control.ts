/**
 * A run after approval: its driver, Pause / Resume / Stop, breakpoints, edits and amendments of the steps not
 * yet run, holds for approval, and the report at the end.
 */
import type { InboundDecision } from '../channel.ts';
import {
  breakpointStep,
  createDispatchState,
  outputsOf,
  type DispatchEffect,
  type DispatchState,
  type Hold,
} from '../run/dispatch.ts';
import { resolveRefs } from '../plan/refs.ts';
import type { PinnedTool, StoredRun } from '../ports.ts';
import { describeChange, newPins } from '../plan/tool-pins.ts';
import { writeReport, cut, outputText, stepSummaries } from './report.ts';
import { checkRevision } from '../plan/revise.ts';
import { armReviewTimer, parseEdit, plan, planWarnings, showRunning } from './review-flow.ts';
import { RunDriver } from './run-driver.ts';
import { meteredLlm } from './metered-llm.ts';
import { announceStatus, notice, policiesFor, who, type StewardContext } from './steward-context.ts';
import type { DecisionAction, Json, RunStatus } from '../types.ts';
import { toPlanCard } from '../plan/plan-card.ts';
import { validatePlan, type ValidatedPlan } from '../plan/validate-plan.ts';

/** Starts driving an approved run (or continues one restored after a restart, given its state). */
export function startDriver(
  ctx: StewardContext,
  run: StoredRun,
  v: ValidatedPlan,
  pins: readonly PinnedTool[],
  state?: DispatchState,
): void {
  const { settings } = ctx.deps;
  const initial =
    state ??
    createDispatchState(v.plan, policiesFor(ctx, v.plan), {
      maxParallel: settings.maxParallel,
      maxAttempts: settings.maxAttempts,
      approvedRisk: run.approvedRisk ?? v.risk,
      breakpoints: run.breakpoints,
    });
  const driver = new RunDriver(run.id, run.revision, run.conversation, initial, {
    ...ctx.deps,
    llm: meteredLlm(ctx, run.id, run.requester),
    onHeld: (d, held) =>
      void onHeld(ctx, run, d, held).catch((err: unknown) =>
        ctx.deps.log('error', `run ${run.id}: hold not handled: ${(err as Error).message}`),
      ),
  });
  for (const pin of pins) driver.pins.set(pin.tool, pin);
  ctx.drivers.set(run.id, driver);
  const finishing = driver.done
    .then((final) => finish(ctx, run, final))
    .catch((err: unknown) => ctx.deps.log('error', `run ${run.id}: could not finish: ${(err as Error).message}`))
    .finally(() => {
      ctx.drivers.delete(run.id);
      ctx.finishing.delete(finishing);
    });
  ctx.finishing.add(finishing);
  driver.start();
}

async function finish(ctx: StewardContext, run: StoredRun, final: DispatchState): Promise<void> {
  const { store, clock } = ctx.deps;
  const status: RunStatus = final.outcome ?? 'failed';
  await store.transition(run.id, ['running', 'paused', 'stopping', 'awaiting_review'], status, { at: clock() });
  await announceStatus(ctx, run, status);
  const report = await writeReport(meteredLlm(ctx, run.id, run.requester), {
    request: run.request,
    state: final,
    outcome: status,
  });
  await store.setReport(run.id, report, clock());
  await store.appendEvent(run.id, 'reported', { status }, clock());
  await ctx.deps.notifier.send(run.conversation, { kind: 'report', runId: run.id, status, text: report });
}

/** The dispatcher holds: at a breakpoint the run pauses and shows the output; riskier steps ask for approval. */
async function onHeld(
  ctx: StewardContext,
  run: StoredRun,
  driver: RunDriver,
  held: Extract<DispatchEffect, { type: 'held' }>,
): Promise<void> {
  const { store, clock } = ctx.deps;
  const current = (await store.getRun(run.id)) ?? run;
  if (held.reason === 'breakpoint') {
    const stepId = held.stepIds[0] as string;
    await store.transition(run.id, ['running'], 'paused', { at: clock() });
    await announceStatus(ctx, current, 'paused');
    const state = driver.current;
    const step = state.plan.steps.find((s) => s.id === stepId);
    // Before a step: what it is about to send. After a step: what it returned.
    const shown =
      held.before && step && step.kind !== 'condition'
        ? (() => {
            const args = resolveRefs(step.args as Json, outputsOf(state));
            return args.ok ? JSON.stringify(args.value) : args.error;
          })()
        : outputText(state.steps[stepId]?.output);
    await ctx.deps.notifier.send(run.conversation, {
      kind: 'breakpoint',
      runId: run.id,
      revision: driver.revision,
      stepId,
      before: held.before === true,
      output: cut(shown, 2500),
      actions: ['resume', 'stop', 'edit'],
    });
    return;
  }
  // From awaiting_review too: after a restart the hold is found again and must be shown again.
  if (!(await store.transition(run.id, ['running', 'paused', 'awaiting_review'], 'awaiting_review', { at: clock() })))
    return;
  const v = validatePlan(driver.current.plan, ctx.deps.tools.listTools());
  if (!v.ok) return;
  const amendmentsLeft = Math.max(0, ctx.deps.settings.amendmentCap - current.amendmentRounds);
  await ctx.deps.notifier.send(
    run.conversation,
    toPlanCard(run.id, driver.revision, v.value, {
      needsReview: true,
      amendmentsLeft,
      requester: run.requester,
      actions: ['approve', 'cancel'],
      warnings: planWarnings(ctx, v.value.plan),
      note: [
        ...describeHolds(ctx, driver, held.holds ?? []),
        'Approve to let them run, or cancel (finished results are kept).',
      ].join('\n'),
    }),
  );
  armReviewTimer(ctx, { ...current, revision: driver.revision }, driver.revision, v.value.risk === 'high');
}

/** Pause, Resume (also Continue after a breakpoint) and Stop: the store decides, then the dispatcher is told. */
export async function control(ctx: StewardContext, run: StoredRun, d: InboundDecision): Promise<string | null> {
  const moves: Partial<
    Record<
      DecisionAction,
      { from: RunStatus[]; to: RunStatus; event: 'pauseRequested' | 'resumeRequested' | 'stopRequested'; words: string }
    >
  > = {
    pause: {
      from: ['running'],
      to: 'paused',
      event: 'pauseRequested',
      words: 'Paused: steps already running will finish; nothing new starts until you resume.',
    },
    resume: { from: ['paused'], to: 'running', event: 'resumeRequested', words: 'Resumed.' },
    stop: {
      from: ['running', 'paused', 'awaiting_review'],
      to: 'stopping',
      event: 'stopRequested',
      words: 'Stopping: steps in flight are cancelled; finished results are kept.',
    },
  };
  const move = moves[d.action] as NonNullable<(typeof moves)['pause']>;
  const driver = ctx.drivers.get(run.id);
  if (!driver) return `Cannot ${d.action}: the run is not running in this process.`;
  if (!(await ctx.deps.store.transition(run.id, move.from, move.to, { at: ctx.deps.clock() }))) {
    return `Cannot ${d.action}: the run is ${run.status === move.to ? 'already ' : ''}${run.status.replace('_', ' ')}.`;
  }
  driver.send({ type: move.event });
  await notice(ctx, run.conversation, run.id, 'info', `${move.words} (${who(d.actor)})`);
  await announceStatus(ctx, run, move.to);
  if (d.action !== 'resume') await recordIntervention(ctx, run, d, driver.current);
  return null;
}

/** Sets or clears breakpoints on steps not yet started (at review, or while running). */
export async function setBreakpoints(ctx: StewardContext, run: StoredRun, d: InboundDecision): Promise<string | null> {
  const ids = d.stepIds ?? [];
  const known = new Set(run.plan?.steps.map((s) => s.id) ?? []);
  const unknown = ids.filter((id) => !known.has(id));
  if (ids.length === 0 || unknown.length > 0) return `No such step: ${unknown.join(', ') || '(none given)'}.`;
  const driver = ctx.drivers.get(run.id);
  let next: string[];
  if (driver) {
    driver.send({ type: 'breakpointsSet', stepIds: ids, on: d.on !== false });
    next = driver.current.breakpoints;
  } else {
    const others = run.breakpoints.filter((b) => !ids.includes(breakpointStep(b)));
    next = d.on === false ? others : [...others, ...ids];
  }
  await ctx.deps.store.setBreakpoints(run.id, next, ctx.deps.clock());
  await notice(
    ctx,
    run.conversation,
    run.id,
    'info',
    next.length > 0
      ? `Breakpoints: ${next.map((b) => (b.startsWith('before:') ? `before ${breakpointStep(b)}` : `after ${b}`)).join(', ')}.`
      : 'No breakpoints.',
  );
  return null;
}

/** Edit while running or held: rewrite the steps not yet run; steps that started cannot change. */
export async function editRunning(ctx: StewardContext, run: StoredRun, d: InboundDecision): Promise<string | null> {
  const driver = ctx.drivers.get(run.id);
  if (!driver) return 'This run cannot be edited now.';
  const parsed = parseEdit(driver.current.plan, d.plan);
  if (!parsed.ok) return parsed.error;
  // Hold new starts while the edit is checked and stored, so the check stays true until it applies.
  driver.send({ type: 'amendStarted' });
  const problem = await applyRevision(ctx, run, driver, parsed.value, `edited by ${who(d.actor)}`);
  if (!problem) await recordIntervention(ctx, run, d, driver.current);
  return problem;
}

/** Amend while running: one planner call with the results so far; only steps not yet run may change. */
export async function amendRunning(ctx: StewardContext, run: StoredRun, text: string): Promise<string | null> {
  const { store, clock, settings } = ctx.deps;
  const driver = ctx.drivers.get(run.id);
  if (!driver || !run.plan) return 'This run cannot be amended now.';
  const round = await store.takeAmendmentRound(run.id, settings.amendmentCap);
  if (round === null) return `No amendment rounds left (the limit is ${settings.amendmentCap}).`;
  await store.appendEvent(run.id, 'amendmentRequested', { round, text: text.slice(0, 2000), running: true }, clock());
  // Nothing new starts while the planner thinks; steps already running may finish.
  driver.send({ type: 'amendStarted' });
  await notice(
    ctx,
    run.conversation,
    run.id,
    'info',
    'Re-planning the steps not yet run; nothing new starts until the revision is in.',
  );
  const state = driver.current;
  const planned = await plan(ctx, run, run.request, {
    plan: state.plan,
    text,
    progress: { started: startedSteps(state), results: stepSummaries(state, 500) },
  });
  if (!planned.ok) {
    driver.send({ type: 'amendEnded' });
    return `The amendment could not be applied (${planned.error}); the run goes on with the current plan.`;
  }
  return applyRevision(ctx, run, driver, planned.value.plan, `amendment ${round}`, true);
}

/**
 * Applies a revision of the steps not yet run. `byPlanner`: the planner saw tool outputs when it wrote it, so
 * every new or rewritten step that is not low risk waits for a person, whatever was approved before.
 */
async function applyRevision(
  ctx: StewardContext,
  run: StoredRun,
  driver: RunDriver,
  next: ValidatedPlan['plan'],
  reason: string,
  byPlanner = false,
): Promise<string | null> {
  const { store, clock } = ctx.deps;
  const v = validatePlan(next, ctx.deps.tools.listTools());
  const state = driver.current;
  const errors = v.ok ? checkRevision(state.plan, next, new Set(startedSteps(state))) : v.errors;
  if (!v.ok || errors.length > 0) {
    driver.send({ type: 'amendEnded' });
    return `That revision was refused: ${errors.join('; ')}. The run goes on with the current plan.`;
  }
  const current = (await store.getRun(run.id)) ?? run;
  const revision = Math.max(current.revision, driver.revision) + 1;
  await store.saveRevision(run.id, revision, v.value.plan, reason, clock());
  const pins = newPins(v.value.plan, ctx.deps.tools.listTools(), driver.pins);
  await store.pinTools(run.id, pins, clock());
  for (const pin of pins) driver.pins.set(pin.tool, pin);
  driver.revision = revision;
  const policies = policiesFor(ctx, v.value.plan);
  const before = new Map(state.plan.steps.map((s) => [s.id, JSON.stringify(s)]));
  const approvalNeeded = byPlanner
    ? v.value.plan.steps
        .filter((s) => before.get(s.id) !== JSON.stringify(s) && policies[s.id]?.risk !== 'low')
        .map((s) => s.id)
    : [];
  driver.send({ type: 'planRevised', plan: v.value.plan, policies, approvalNeeded });
  await showRunning(ctx, run.conversation, current, revision, v.value);
  return null;
}

/** Sentences telling the person why each step waits, with what they need to judge it. */
function describeHolds(ctx: StewardContext, driver: RunDriver, holds: readonly Hold[]): string[] {
  const tools = ctx.deps.tools.listTools();
  return holds.map((h) => {
    const step = driver.current.plan.steps.find((s) => s.id === h.stepId);
    const tool = step?.kind === 'tool' ? step.tool : (step?.kind ?? '?');
    if (h.why === 'risk') return `Step ${h.stepId} (${tool}) is riskier than what was approved.`;
    if (h.why === 'amended')
      return `Step ${h.stepId} (${tool}) was added or changed by an amendment written after seeing tool outputs.`;
    if (h.why === 'confirm') {
      return `Step ${h.stepId} (${tool}) takes values from earlier steps that nobody has seen yet; it would send: ${cut(JSON.stringify(h.args ?? null), 1500)}`;
    }
    const now = tools.find((t) => t.name === tool);
    const pin = driver.pins.get(tool);
    const changes = pin && now ? describeChange(pin.definition, now.definition) : ['the definition changed'];
    return `The definition of ${tool} changed since approval, so step ${h.stepId} waits: ${changes.join('; ')}.`;
  });
}

function startedSteps(state: DispatchState): string[] {
  return Object.entries(state.steps)
    .filter(([, rt]) => rt.status !== 'pending')
    .map(([id]) => id);
}

/** Remembers which tools were running or next when a person paused, stopped or edited (for suggestions). */
async function recordIntervention(
  ctx: StewardContext,
  run: StoredRun,
  d: InboundDecision,
  state: DispatchState,
): Promise<void> {
  const running = state.plan.steps.filter((s) => state.steps[s.id]?.status === 'running');
  const next =
    running.length > 0 ? running : state.plan.steps.filter((s) => state.steps[s.id]?.status === 'pending').slice(0, 1);
  const tools = next.flatMap((s) => (s.kind === 'tool' ? [s.tool] : []));
  await ctx.deps.store.appendEvent(
    run.id,
    'intervened',
    { actorId: d.actor.id, channel: d.actor.channel, action: d.action, tools },
    ctx.deps.clock(),
  );
}
