/**
 * Steward's request flow: plan, review, dispatch, report. It implements the channels' `InboundHandler`
 * and reaches the world only through ports. Every state change is decided by the store (conditional updates),
 * so a duplicate or stale decision changes nothing.
 */
import type { InboundDecision, InboundHandler, InboundMessage } from './channel.ts';
import { createDispatchState, type DispatchState, type StepPolicy } from './dispatch.ts';
import { StewardError } from './errors.ts';
import { toPlanCard } from './plan-card.ts';
import type { Plan } from './plan-schema.ts';
import { writePlan } from './planner.ts';
import type { Conversation, LlmClient, LlmResponse, Notifier, RunStore, StoredRun, ToolRunner } from './ports.ts';
import { writeReport } from './report.ts';
import { isIdempotent } from './risk.ts';
import { RunDriver } from './run-driver.ts';
import { restoreDispatch } from './restore.ts';
import type { DecisionAction, RunStatus } from './types.ts';
import { validatePlan, type ValidatedPlan } from './validate-plan.ts';

/** Limits and policies, all from configuration. */
export interface StewardSettings {
  maxParallel: number;
  maxAttempts: number;
  amendmentCap: number;
  maxRepairs: number;
  reviewTimeoutMs: number;
}

export interface StewardDeps {
  llm: LlmClient;
  tools: ToolRunner;
  store: RunStore;
  notifier: Notifier;
  clock: () => Date;
  newId: () => string;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  settings: StewardSettings;
}

/** The engine's front door for every channel. */
export class Steward implements InboundHandler {
  private readonly drivers = new Map<string, RunDriver>();
  private readonly finishing = new Set<Promise<void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly deps: StewardDeps) {}

  /** A new request: plan it, then either answer, start at once (low risk) or wait for review. */
  async message(m: InboundMessage): Promise<void> {
    const { store, clock, newId } = this.deps;
    const runId = newId();
    await store.createRun({ id: runId, conversation: m.conversation, requester: m.actor, request: m.text, at: clock() });
    await store.appendEvent(runId, 'requested', { actor: m.actor.id, channel: m.actor.channel }, clock());
    const planned = await this.plan(runId, m.text);
    if (!planned.ok) {
      await store.transition(runId, ['planning'], 'failed', { at: clock() });
      await this.notice(m.conversation, runId, 'error', `I could not make a valid plan: ${planned.error}`);
      return;
    }
    const v = planned.value;
    await store.saveRevision(runId, 0, v.plan, 'planned', clock());
    if (!v.plan.needsTools) {
      await store.transition(runId, ['planning'], 'completed', { at: clock() });
      await store.setReport(runId, v.plan.answer ?? v.plan.summary, clock());
      await this.deps.notifier.send(m.conversation, { kind: 'answer', text: v.plan.answer ?? v.plan.summary });
      return;
    }
    await this.offer(runId, 0, m.conversation, v, 'planning');
  }

  /** A person's decision on a run; refused (with a reason) when stale, duplicate or not allowed now. */
  async decision(d: InboundDecision): Promise<void> {
    const run = await this.deps.store.getRun(d.runId);
    if (!run) return;
    const handlers: Record<DecisionAction, () => Promise<string | null>> = {
      approve: () => this.approve(run, d),
      cancel: () => this.cancel(run, d),
      amend: () => this.amend(run, d),
      pause: () => this.control(run, d, ['running'], 'paused', { type: 'pauseRequested' }),
      resume: () => this.control(run, d, ['paused'], 'running', { type: 'resumeRequested' }),
      stop: () => this.control(run, d, ['running', 'paused'], 'stopping', { type: 'stopRequested' }),
    };
    const refusal = await handlers[d.action]();
    await this.deps.store.recordDecision({
      runId: d.runId, revision: d.revision, actor: d.actor, action: d.action, accepted: refusal === null, note: refusal ?? undefined, at: this.deps.clock(),
    });
    if (refusal) await this.notice(run.conversation, run.id, 'warning', refusal);
  }

  /** Resumes runs that were unfinished when the process stopped. */
  async recover(): Promise<void> {
    for (const run of await this.deps.store.listUnfinishedRuns()) {
      try {
        await this.recoverRun(run);
      } catch (err) {
        this.deps.log('error', `run ${run.id}: could not be resumed: ${(err as Error).message}`);
      }
    }
  }

  /** Resolves when every run this process is driving has finished and reported. */
  async idle(): Promise<void> {
    while (this.drivers.size > 0 || this.finishing.size > 0) {
      await Promise.all([...[...this.drivers.values()].map((d) => d.done), ...this.finishing]);
    }
  }

  /** Stops timers; runs in flight stay recorded as running and resume at the next start. */
  shutdown(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const driver of this.drivers.values()) driver.detach();
    this.drivers.clear();
    this.finishing.clear();
  }

  private async plan(runId: string, request: string, amend?: { plan: Plan; text: string }) {
    try {
      return await writePlan(this.deps.llm, { request, tools: this.deps.tools.listTools(), amend }, {
        maxRepairs: this.deps.settings.maxRepairs,
        onResponse: (r) => this.recordUsage(runId, 'planner', r),
      });
    } catch (err) {
      return { ok: false as const, error: err instanceof StewardError ? err.message : 'the planner call failed', calls: 0 };
    }
  }

  /** Shows a validated revision: starts it at once when low risk, else waits for review. */
  private async offer(runId: string, revision: number, conversation: Conversation, v: ValidatedPlan, from: RunStatus): Promise<void> {
    const { store, clock } = this.deps;
    const run = await store.getRun(runId);
    const amendmentsLeft = Math.max(0, this.deps.settings.amendmentCap - (run?.amendmentRounds ?? 0));
    if (v.risk === 'low') {
      if (!(await store.transition(runId, [from], 'running', { at: clock() }))) return;
      await store.appendEvent(runId, 'autoApproved', { revision, risk: v.risk }, clock());
      await this.deps.notifier.send(conversation, toPlanCard(runId, revision, v, { needsReview: false, amendmentsLeft }));
      this.startDriver(runId, revision, conversation, v, run?.request ?? '');
      return;
    }
    if (!(await store.transition(runId, [from], 'awaiting_review', { at: clock() }))) return;
    await this.deps.notifier.send(conversation, toPlanCard(runId, revision, v, { needsReview: true, amendmentsLeft }));
    this.armReviewTimer(runId, revision, conversation, v.risk === 'high');
  }

  private async approve(run: StoredRun, d: InboundDecision): Promise<string | null> {
    if (!run.plan) return 'There is no plan to approve.';
    const v = validatePlan(run.plan, this.deps.tools.listTools());
    if (!v.ok) return `The plan is no longer valid: ${v.errors.join('; ')}`;
    if (!(await this.deps.store.transition(run.id, ['awaiting_review'], 'running', { revision: d.revision, at: this.deps.clock() }))) {
      return this.stale(run, d);
    }
    this.clearTimer(run.id);
    await this.notice(run.conversation, run.id, 'info', `Approved by ${d.actor.name ?? d.actor.id}; running ${run.plan.steps.length} steps.`);
    this.startDriver(run.id, d.revision, run.conversation, v.value, run.request);
    return null;
  }

  private async cancel(run: StoredRun, d: InboundDecision): Promise<string | null> {
    if (!(await this.deps.store.transition(run.id, ['awaiting_review'], 'cancelled', { revision: d.revision, at: this.deps.clock() }))) {
      return this.stale(run, d);
    }
    this.clearTimer(run.id);
    await this.notice(run.conversation, run.id, 'info', `Cancelled by ${d.actor.name ?? d.actor.id}. Nothing was run.`);
    return null;
  }

  private async amend(run: StoredRun, d: InboundDecision): Promise<string | null> {
    const { store, clock, settings } = this.deps;
    const text = d.text?.trim();
    if (!text) return 'Say what to change, e.g. "amend also save the result to notes.txt".';
    if (!run.plan) return 'There is no plan to amend.';
    // Claim the revision first, so two amendments (or an amendment racing an approval) cannot both win.
    if (!(await store.transition(run.id, ['awaiting_review'], 'planning', { revision: d.revision, at: clock() }))) return this.stale(run, d);
    const round = await store.takeAmendmentRound(run.id, settings.amendmentCap);
    if (round === null) {
      await store.transition(run.id, ['planning'], 'awaiting_review', { at: clock() });
      return `No amendment rounds left (the limit is ${settings.amendmentCap}). Approve or cancel this plan.`;
    }
    this.clearTimer(run.id);
    await store.appendEvent(run.id, 'amendmentRequested', { round, text: text.slice(0, 2000) }, clock());
    const planned = await this.plan(run.id, run.request, { plan: run.plan, text });
    const previous = validatePlan(run.plan, this.deps.tools.listTools());
    if (!planned.ok || !planned.value.plan.needsTools) {
      const why = planned.ok ? 'the revised plan had no steps' : planned.error;
      if (previous.ok) await this.offer(run.id, run.revision, run.conversation, previous.value, 'planning');
      return `The amendment could not be applied (${why}); the previous plan stands.`;
    }
    const revision = run.revision + 1;
    await store.saveRevision(run.id, revision, planned.value.plan, `amendment ${round}`, clock());
    await this.offer(run.id, revision, run.conversation, planned.value, 'planning');
    return null;
  }

  private async control(
    run: StoredRun, d: InboundDecision, from: RunStatus[], to: RunStatus,
    event: { type: 'pauseRequested' | 'resumeRequested' | 'stopRequested' },
  ): Promise<string | null> {
    if (!(await this.deps.store.transition(run.id, from, to, { at: this.deps.clock() }))) {
      return `Cannot ${d.action}: the run is ${run.status === to ? 'already ' : ''}${describe(run.status)}.`;
    }
    this.drivers.get(run.id)?.send(event);
    const words = { paused: 'Paused: steps already running will finish; nothing new starts until you resume.', running: 'Resumed.', stopping: 'Stopping: steps in flight are being cancelled; finished results are kept.' } as Record<string, string>;
    await this.notice(run.conversation, run.id, 'info', `${words[to] ?? to} (${d.actor.name ?? d.actor.id})`);
    return null;
  }

  private startDriver(runId: string, revision: number, conversation: Conversation, v: ValidatedPlan, request: string, state?: DispatchState): void {
    const policies = this.policies(v.plan);
    const initial = state ?? createDispatchState(v.plan, policies, { maxParallel: this.deps.settings.maxParallel, maxAttempts: this.deps.settings.maxAttempts });
    const driver = new RunDriver(runId, revision, conversation, initial, {
      ...this.deps,
      recordUsage: (id, r) => this.recordUsage(id, 'llm_step', r),
    });
    this.drivers.set(runId, driver);
    const finishing = driver.done
      .then((final) => this.finish(runId, conversation, request, final))
      .catch((err: unknown) => this.deps.log('error', `run ${runId}: could not finish: ${(err as Error).message}`))
      .finally(() => {
        this.drivers.delete(runId);
        this.finishing.delete(finishing);
      });
    this.finishing.add(finishing);
    driver.start();
  }

  private async finish(runId: string, conversation: Conversation, request: string, final: DispatchState): Promise<void> {
    const { store, clock } = this.deps;
    const status: RunStatus = final.outcome ?? 'failed';
    await store.transition(runId, ['running', 'paused', 'stopping'], status, { at: clock() });
    const report = await writeReport(this.deps.llm, { request, state: final, outcome: status }, (r) => this.recordUsage(runId, 'synthesizer', r));
    await store.setReport(runId, report, clock());
    await store.appendEvent(runId, 'reported', { status }, clock());
    await this.deps.notifier.send(conversation, { kind: 'report', runId, status, text: report });
  }

  private async recoverRun(run: StoredRun): Promise<void> {
    const { store, clock } = this.deps;
    if (run.status === 'planning') {
      await store.transition(run.id, ['planning'], 'failed', { at: clock() });
      await this.notice(run.conversation, run.id, 'error', 'Steward restarted while planning this request; please ask again.');
      return;
    }
    if (!run.plan) return;
    const v = validatePlan(run.plan, this.deps.tools.listTools());
    if (!v.ok) {
      await store.transition(run.id, [run.status], 'failed', { at: clock() });
      await this.notice(run.conversation, run.id, 'error', `After a restart the plan is no longer valid: ${v.errors.join('; ')}`);
      return;
    }
    const amendmentsLeft = Math.max(0, this.deps.settings.amendmentCap - run.amendmentRounds);
    if (run.status === 'awaiting_review') {
      await this.deps.notifier.send(run.conversation, toPlanCard(run.id, run.revision, v.value, { needsReview: true, amendmentsLeft }));
      this.armReviewTimer(run.id, run.revision, run.conversation, v.value.risk === 'high');
      return;
    }
    const attempts = await store.listStepAttempts(run.id);
    const restored = restoreDispatch(v.value.plan, this.policies(v.value.plan), attempts, run.status, this.deps.settings);
    for (const a of attempts.filter((x) => x.status === 'running')) {
      const error = { code: 'interrupted' as const, message: 'Steward stopped while this step was running', retryable: false };
      await store.recordStepEnded({ runId: run.id, stepId: a.stepId, attempt: a.attempt, status: 'failed', output: null, error, at: clock(), durationMs: 0 });
    }
    const paused = restored.state.phase === 'paused';
    await this.deps.notifier.send(run.conversation, toPlanCard(run.id, run.revision, v.value, { needsReview: false, amendmentsLeft, actions: paused ? ['resume', 'stop'] : ['pause', 'stop'] }));
    if (restored.interrupted.length > 0) {
      await store.transition(run.id, ['running'], 'paused', { at: clock() });
      await this.notice(run.conversation, run.id, 'warning',
        `Steward restarted while ${restored.interrupted.join(', ')} ${restored.interrupted.length > 1 ? 'were' : 'was'} running. Its tool may have acted already and is not safe to repeat blindly: resume to run it again, or stop.`);
    } else {
      await this.notice(run.conversation, run.id, 'info', 'Steward restarted; continuing this run where it left off.');
    }
    await store.appendEvent(run.id, 'recovered', { interrupted: restored.interrupted }, clock());
    this.startDriver(run.id, run.revision, run.conversation, v.value, run.request, restored.state);
  }

  private policies(plan: Plan): Record<string, StepPolicy> {
    const tools = new Map(this.deps.tools.listTools().map((t) => [t.name, t]));
    const out: Record<string, StepPolicy> = {};
    for (const s of plan.steps) {
      const tool = s.kind === 'tool' ? tools.get(s.tool) : undefined;
      out[s.id] = { idempotent: tool ? isIdempotent(tool) : false, timeoutMs: tool?.policy.timeoutMs ?? 120_000 };
    }
    return out;
  }

  /** Why a decision lost: read the run again, since another decision may have just changed it. */
  private async stale(run: StoredRun, d: InboundDecision): Promise<string> {
    return staleText((await this.deps.store.getRun(run.id)) ?? run, d);
  }

  private armReviewTimer(runId: string, revision: number, conversation: Conversation, failClosed: boolean): void {
    this.clearTimer(runId);
    const ms = this.deps.settings.reviewTimeoutMs;
    const timer = setTimeout(() => {
      void (async () => {
        if (failClosed) {
          if (await this.deps.store.transition(runId, ['awaiting_review'], 'cancelled', { revision, at: this.deps.clock() })) {
            await this.notice(conversation, runId, 'warning', `No decision within ${Math.round(ms / 1000)} s: this high-risk plan was cancelled. Nothing was run.`);
          }
        } else {
          const run = await this.deps.store.getRun(runId);
          if (run?.status === 'awaiting_review') {
            await this.notice(conversation, runId, 'info', 'Reminder: this plan is still waiting for approve, amend or cancel.');
            this.armReviewTimer(runId, revision, conversation, false);
          }
        }
      })().catch((err: unknown) => this.deps.log('error', `run ${runId}: review timer failed: ${(err as Error).message}`));
    }, ms);
    timer.unref();
    this.timers.set(runId, timer);
  }

  private clearTimer(runId: string): void {
    const t = this.timers.get(runId);
    if (t) clearTimeout(t);
    this.timers.delete(runId);
  }

  private async recordUsage(runId: string, role: 'planner' | 'synthesizer' | 'llm_step' | 'classifier', r: LlmResponse): Promise<void> {
    await this.deps.store.recordLlmUsage({ runId, role, model: r.model, inputTokens: r.usage.inputTokens, outputTokens: r.usage.outputTokens, at: this.deps.clock() });
  }

  private async notice(conversation: Conversation, runId: string, level: 'info' | 'warning' | 'error', text: string): Promise<void> {
    await this.deps.notifier.send(conversation, { kind: 'notice', runId, level, text });
  }
}

function staleText(run: StoredRun, d: InboundDecision): string {
  if (run.revision !== d.revision) return `That card shows revision ${d.revision}, but the plan is now at revision ${run.revision}; use the newest card.`;
  return `That plan is ${describe(run.status)}; nothing changed.`;
}

function describe(status: RunStatus): string {
  const words: Record<RunStatus, string> = {
    planning: 'being planned', awaiting_review: 'waiting for review', running: 'running', paused: 'paused',
    stopping: 'stopping', completed: 'finished', failed: 'failed', cancelled: 'cancelled', stopped: 'stopped',
  };
  return words[status];
}
