/**
 * Steward's front door for every channel (`InboundHandler`): new requests, replies in a run's thread,
 * and decisions. The flows live in review-flow.ts, run-control.ts and recovery.ts; they reach the world
 * only through ports, and the store decides every state change (conditional updates), so a duplicate,
 * stale or unauthorized decision changes nothing.
 */
import type { InboundDecision, InboundHandler, InboundMessage, ReviewPreference } from '../channel.ts';
import { classifyReply } from './classify.ts';
import type { StoredRun } from '../ports.ts';
import { recoverRun } from './recovery.ts';
import { amendAtReview, approve, cancel, editAtReview, offer, plan } from './review-flow.ts';
import { amendRunning, control, editRunning, setBreakpoints } from './run-control.ts';
import { describeHistory, describeRun } from '../run/run-status.ts';
import { meteredLlm } from './metered-llm.ts';
import { mayDecide, notice, who, type StewardContext, type StewardDeps } from './steward-context.ts';
import type { Actor, DecisionAction } from '../types.ts';

export type { StewardDeps, StewardSettings } from './steward-context.ts';

/** The engine, as the channels see it. */
export class Steward implements InboundHandler {
  private readonly ctx: StewardContext;

  constructor(deps: StewardDeps) {
    this.ctx = { deps, drivers: new Map(), finishing: new Set(), timers: new Map() };
  }

  /** A message: a reply in the thread of an active run is classified; anything else is a new request. */
  async message(m: InboundMessage): Promise<void> {
    if (m.deliveryId && !(await this.ctx.deps.store.claimInbound(m.deliveryId, this.ctx.deps.clock()))) return;
    const active = await this.ctx.deps.store.findActiveRun(m.conversation);
    if (active) return this.reply(active, m);
    const { store, clock, newId } = this.ctx.deps;
    const runId = newId();
    await store.createRun({
      id: runId,
      conversation: m.conversation,
      requester: m.actor,
      request: m.text,
      at: clock(),
    });
    await store.appendEvent(runId, 'requested', { actor: m.actor.id, channel: m.actor.channel }, clock());
    const planned = await plan(this.ctx, { id: runId, requester: m.actor }, m.text);
    if (!planned.ok) {
      await store.transition(runId, ['planning'], 'failed', { at: clock() });
      await notice(this.ctx, m.conversation, runId, 'error', `I could not make a valid plan: ${planned.error}`);
      return;
    }
    const v = planned.value;
    await store.saveRevision(runId, 0, v.plan, 'planned', clock());
    if (!v.plan.needsTools) {
      const answer = v.plan.answer ?? v.plan.summary;
      await store.transition(runId, ['planning'], 'completed', { at: clock() });
      await store.setReport(runId, answer, clock());
      await this.ctx.deps.notifier.send(m.conversation, { kind: 'answer', text: answer });
      return;
    }
    await offer(this.ctx, runId, 0, v, 'planning');
  }

  /** A decision; refused with a reason (to the presser only when they lack the right) and always recorded. */
  async decision(d: InboundDecision): Promise<void> {
    const run = await this.ctx.deps.store.getRun(d.runId);
    if (!run) {
      await this.ctx.deps.notifier.send(
        { channel: d.actor.channel, key: '' },
        { kind: 'notice', level: 'warning', text: 'That run does not exist.', to: d.actor },
      );
      return;
    }
    const allowed = mayDecide(this.ctx, run, d.actor);
    const refusal = allowed
      ? await this.decide(run, d)
      : `Only ${who(run.requester)} or an approver can ${d.action} this run.`;
    await this.ctx.deps.store.recordDecision({
      runId: d.runId,
      revision: d.revision,
      actor: d.actor,
      action: d.action,
      accepted: refusal === null,
      note: refusal ?? undefined,
      at: this.ctx.deps.clock(),
    });
    if (refusal) await notice(this.ctx, run.conversation, run.id, 'warning', refusal, allowed ? undefined : d.actor);
  }

  async canDecide(runId: string, actor: Actor): Promise<boolean> {
    const run = await this.ctx.deps.store.getRun(runId);
    return run !== null && mayDecide(this.ctx, run, actor);
  }

  async history(runId: string): Promise<void> {
    const { store } = this.ctx.deps;
    const run = await store.getRun(runId);
    if (!run) return;
    const [revisions, decisions] = await Promise.all([store.listRevisions(runId), store.listDecisions(runId)]);
    await notice(this.ctx, run.conversation, runId, 'info', describeHistory(run, revisions, decisions));
  }

  async setReviewPreference(actor: Actor, preference: ReviewPreference): Promise<void> {
    await this.ctx.deps.store.setReviewPreference(actor, preference, this.ctx.deps.clock());
  }

  /** Resumes runs that were unfinished when the process stopped. */
  async recover(): Promise<void> {
    for (const run of await this.ctx.deps.store.listUnfinishedRuns()) {
      try {
        await recoverRun(this.ctx, run);
      } catch (err) {
        this.ctx.deps.log('error', `run ${run.id}: could not be resumed: ${(err as Error).message}`);
      }
    }
  }

  /** Resolves when every run this process is driving has finished and reported. */
  async idle(): Promise<void> {
    while (this.ctx.drivers.size > 0 || this.ctx.finishing.size > 0) {
      await Promise.all([...[...this.ctx.drivers.values()].map((d) => d.done), ...this.ctx.finishing]);
    }
  }

  /** Stops timers and lets go of runs as a crash would: steps in flight resume by the restart rules. */
  shutdown(): void {
    for (const t of this.ctx.timers.values()) clearTimeout(t);
    this.ctx.timers.clear();
    for (const driver of this.ctx.drivers.values()) driver.detach();
    this.ctx.drivers.clear();
    this.ctx.finishing.clear();
  }

  private async decide(run: StoredRun, d: InboundDecision): Promise<string | null> {
    const reviewing = run.status === 'awaiting_review' && !this.ctx.drivers.has(run.id);
    const handlers: Record<DecisionAction, () => Promise<string | null>> = {
      approve: () => approve(this.ctx, run, d),
      cancel: () => cancel(this.ctx, run, d),
      amend: () => this.amend(run, d, d.text ?? ''),
      edit: () => (reviewing ? editAtReview(this.ctx, run, d) : editRunning(this.ctx, run, d)),
      breakpoint: () => setBreakpoints(this.ctx, run, d),
      pause: () => control(this.ctx, run, d),
      resume: () => control(this.ctx, run, d),
      stop: () => control(this.ctx, run, d),
    };
    return handlers[d.action]();
  }

  private async amend(run: StoredRun, d: InboundDecision, text: string): Promise<string | null> {
    if (!text.trim()) return 'Say what to change, e.g. "amend also save the result to notes.txt".';
    if (run.status === 'awaiting_review' && !this.ctx.drivers.has(run.id))
      return amendAtReview(this.ctx, run, d, text.trim());
    if (run.status === 'running' || run.status === 'paused') return amendRunning(this.ctx, run, text.trim());
    return `This run is ${run.status.replace('_', ' ')}; it cannot be amended.`;
  }

  /** A reply in an active run's thread: status from the database, an amendment, or chatter left alone. */
  private async reply(run: StoredRun, m: InboundMessage): Promise<void> {
    // Anyone in the thread may ask how it goes (one cheap classifier call on the run's budget); only people who
    // may decide can change it: their amendment goes through `decision`, which refuses everyone else.
    if (run.status === 'planning') {
      await notice(this.ctx, run.conversation, run.id, 'info', 'Still planning this request; one moment.');
      return;
    }
    const intent = await classifyReply(meteredLlm(this.ctx, run.id, run.requester), {
      text: m.text,
      request: run.request,
      runStatus: run.status,
    });
    await this.ctx.deps.store.appendEvent(
      run.id,
      'replyClassified',
      { intent, actor: m.actor.id },
      this.ctx.deps.clock(),
    );
    if (intent === 'unrelated') return;
    if (intent === 'status') {
      const attempts = await this.ctx.deps.store.listStepAttempts(run.id);
      await notice(this.ctx, run.conversation, run.id, 'info', describeRun(run.status, run.plan, attempts));
      return;
    }
    await this.decision({ runId: run.id, revision: run.revision, action: 'amend', actor: m.actor, text: m.text });
  }
}
