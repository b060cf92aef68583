/**
 * Runs one approved plan: feeds events to the pure dispatcher and carries out the effects it asks for,
 * through the ports only. Every step's intent is committed to the store before its call is sent.
 */
import type { Plan, Step } from '../plan/plan-schema.ts';
import { changedDefinition } from '../plan/tool-pins.ts';
import type { OutboundMessage } from '../messages.ts';
import type {
  Conversation,
  LlmClient,
  Notifier,
  PersonalAccess,
  PinnedTool,
  RunEndWrite,
  RunRecords,
  StepLog,
  StepProgressLog,
  ToolProgress,
  ToolRunner,
} from '../ports.ts';
import type { Result } from '../result.ts';
import { dispatchTransition, startDispatch } from '../run/dispatch.ts';
import type { DispatchEffect, DispatchEvent, DispatchState, Transition } from '../run/dispatch-state.ts';
import { callProgressDetail } from '../run/call-progress.ts';
import { actionsFor } from '../run/run-actions.ts';
import type { StepPolicy } from '../run/step-policies.ts';
import { READ_RESOURCE_TOOL, readServerOf } from '../run/resource-tool.ts';
import { cut, outputText } from '../text.ts';
import type { Actor, Json, RiskLevel, RunStatus, StepError, ToolInfo } from '../types.ts';
import { StewardError } from '../errors.ts';
import { RUN_STOPPED } from '../server-questions.ts';
import type { Log } from './deps.ts';
import { PacedProgress } from './paced-progress.ts';
import { ProgressOutbox, type FillPlace } from './progress-outbox.ts';
import { StartsHeld, StepWave } from './step-writes.ts';
import type { RunTelemetry } from '../run-telemetry.ts';
import { untilStored } from './until-stored.ts';

/**
 * How long a start held again waits before it tries again, unless a Pause, Resume or Stop comes first: doubled each
 * time, up to the most.
 */
const HELD_RETRY_MS = 250;
const HELD_RETRY_MAX_MS = 30_000;

/** A hold the dispatcher asks a person about: a breakpoint reached, or steps waiting for approval. */
export type HoldEffect = Extract<DispatchEffect, { type: 'showBreakpoint' | 'requestApproval' }>;

/** What a run driver needs from the world. */
export interface RunDriverDeps {
  tools: ToolRunner;
  llm: LlmClient;
  /** `recordProgress` keeps servers' progress for the dashboard; without it, only the card shows it. */
  store: RunRecords & StepLog & Partial<StepProgressLog>;
  notifier: Notifier;
  clock: () => Date;
  log: Log;
  /** The dispatcher holds the run; the flow that owns the run tells the person and waits for them. */
  onHold: (driver: RunDriver, hold: HoldEffect) => void;
  /** Another process took the run over (a write was fenced out): this process must let it go. */
  onLost: (driver: RunDriver) => void;
  /** A step waits for the requester to connect a server that connects per person: they are asked, privately. */
  onConnection?: (driver: RunDriver, wait: { stepId: string; server: string }) => void;
  /**
   * For a run of an Assistant: asked right before each tool call, from the database; a reason (the call is then
   * not made, and the step fails with it) when the Assistant is no longer granted the tool.
   */
  checkGrant?: (tool: string) => Promise<string | null>;
  /**
   * A start was not written because a person's Pause or Stop came first (stored, or queued by another process): the
   * owner applies what is queued for the run, so the driver hears of it.
   */
  applyQueued?: () => Promise<void>;
  /** Told of each attempt whose call went out, as it ends (for traces). */
  telemetry?: RunTelemetry;
  /**
   * The run's end as its owner stores it, for a transition that ends the run: written with the last steps' ends (one
   * statement), then `endStored` is true. Without it (or with no end left to write) the owner stores the end itself.
   */
  runEnd?: (outcome: RunStatus) => RunEndWrite;
}

/** The run a driver drives: which run, at which revision, where its messages go, and its approved pins. */
export interface DrivenRun {
  runId: string;
  revision: number;
  conversation: Conversation;
  pins: readonly PinnedTool[];
  /** The lease fence this process holds the run under; every step write carries it. */
  fence: number;
  /**
   * Whose own connection the run's steps use on servers that connect per person: the requester's (a workflow fire's
   * owner, a delegated run's original requester), never the approver's.
   */
  actingAs?: Actor;
}

/** Drives one run from its first step to `finished`; `done` resolves with the final dispatch state. */
export class RunDriver {
  private state: DispatchState;
  private readonly inflight = new Map<string, AbortController>();
  private readonly startedAt = new Map<string, number>();
  private readonly queues = new Map<string, Promise<void>>();
  private detached = false;
  /** Aborts every wait for the database when the run is let go. */
  private readonly detachedSignal = new AbortController();
  /** Waiting for the last step in flight to end (`quiet`). */
  private quietWaiters: (() => void)[] = [];
  /** Writes now waiting for the database to come back (for the log). */
  private readonly waitingForStore = new Set<string>();
  private resolveDone!: (s: DispatchState) => void;
  /** Tool definitions as approved; a step whose tool no longer matches is held instead of called. */
  private readonly pins = new Map<string, PinnedTool>();
  private revisionNow: number;
  /** Counts the Pause, Resume and Stop events the dispatcher got: the newest one decides, never an older reading. */
  private controls = 0;
  private controlWaiters: (() => void)[] = [];
  /** How many times each attempt's start was held by a Pause or Stop not yet applied here. */
  private readonly heldStarts = new Map<string, number>();
  private readonly conversation: Conversation;
  private readonly fence: number;
  private readonly actingAs: Actor | undefined;
  /** The run's progress lines and notices, in the order the dispatcher decided them. */
  private readonly outbox: ProgressOutbox<OutboundMessage>;
  /** What servers report about calls in flight, paced per call before it joins the outbox. */
  private readonly reported: PacedProgress<CallReport>;
  /** Resolves once the run has finished and everything about it is stored. */
  readonly done: Promise<DispatchState>;
  /** The run's end was stored with its last steps' ends (`RunDriverDeps.runEnd`): its owner need not store it. */
  endStored = false;
  readonly runId: string;

  constructor(
    run: DrivenRun,
    initial: DispatchState,
    private readonly deps: RunDriverDeps,
  ) {
    this.runId = run.runId;
    this.revisionNow = run.revision;
    this.conversation = run.conversation;
    this.fence = run.fence;
    this.actingAs = run.actingAs;
    for (const pin of run.pins) this.pins.set(pin.tool, pin);
    this.state = initial;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.outbox = new ProgressOutbox((message) =>
      deps.notifier
        .send(this.conversation, message)
        .catch((err: unknown) =>
          deps.log('warn', `run ${this.runId}: ${message.kind} not delivered: ${(err as Error).message}`),
        ),
    );
    this.reported = new PacedProgress((k, r) => this.showReport(k, r), { now: () => deps.clock().getTime() });
  }

  /**
   * Holds the run's progress lines while a flow says what a person's decision does (Stop's notice goes before the
   * lines of the steps it cancels); the function returned lets them go on. They go on anyway after a second.
   */
  holdMessages(): () => void {
    const fill = this.outbox.keepPlace();
    return () => fill(null);
  }

  /** The current dispatch state (read-only snapshot). */
  get current(): DispatchState {
    return this.state;
  }

  /** The plan revision now running; amendments and edits move it forward through `revise`. */
  get revision(): number {
    return this.revisionNow;
  }

  /** The definitions this run's tools were approved with. */
  get pinned(): ReadonlyMap<string, PinnedTool> {
    return this.pins;
  }

  /**
   * Moves the run to a stored revision of the steps not yet run: its new tools' pins first, so no step of the new
   * plan can start unpinned, then the plan itself; steps listed in `approvalNeeded` wait for a person.
   */
  revise(
    revision: number,
    pins: readonly PinnedTool[],
    change: { plan: Plan; policies: Record<string, StepPolicy>; approvalNeeded: string[] },
  ): void {
    this.revisionNow = revision;
    for (const pin of pins) this.pins.set(pin.tool, pin);
    this.send({ type: 'planRevised', ...change });
  }

  /** Pins tools as approved now, before steps that call them are sent in (steps let in while the plan streams). */
  pin(pins: readonly PinnedTool[]): void {
    for (const pin of pins) this.pins.set(pin.tool, pin);
  }

  /** A person approved the held steps: changed tools are pinned as they saw them, and steps up to `risk` may start. */
  approveHolds(pins: readonly PinnedTool[], risk: RiskLevel, policies: Record<string, StepPolicy>): void {
    for (const pin of pins) this.pins.set(pin.tool, pin);
    this.send({ type: 'holdsApproved', risk, policies });
  }

  start(): void {
    // Let go of (a shutdown while a restored or delegated run's queued decisions were applied): nothing starts.
    if (this.detached) return;
    this.apply(startDispatch(this.state));
  }

  /** Applies an event at once; the state change is synchronous, so no other event can interleave. */
  send(event: DispatchEvent): void {
    if (this.detached) return;
    const control =
      event.type === 'pauseRequested' || event.type === 'resumeRequested' || event.type === 'stopRequested';
    if (control) this.controls++;
    this.apply(dispatchTransition(this.state, event));
    if (control) this.wakeControlWaiters();
  }

  /**
   * Lets go of the run without recording anything more, as a crash would: used at shutdown, so that steps in
   * flight stay recorded as running and the next start resumes them by the same rules as after a crash.
   */
  detach(): void {
    this.detached = true;
    this.detachedSignal.abort();
    this.reported.endAll();
    for (const controller of this.inflight.values()) controller.abort();
    this.wakeControlWaiters();
  }

  /**
   * Holds new steps here (the stored status stays as it is, so whoever drives the run next carries on) and resolves
   * once no step is in flight and every write is stored: used to hand the run over at shutdown.
   */
  async quiet(): Promise<void> {
    this.send({ type: 'pauseRequested' });
    while (this.inflight.size > 0) await new Promise<void>((resolve) => this.quietWaiters.push(resolve));
    await Promise.all(this.queues.values());
  }

  private endInflight(stepId: string, attempt: number): void {
    this.inflight.delete(key(stepId, attempt));
    this.reported.end(key(stepId, attempt));
    if (this.inflight.size > 0) return;
    const waiters = this.quietWaiters;
    this.quietWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Carries out a transition's effects; its step writes go to the store together, as one wave. */
  private apply(t: Transition): void {
    this.state = t.state;
    const wave = new StepWave({
      runId: this.runId,
      fence: this.fence,
      store: this.deps.store,
      queues: this.queues,
      durably: (what, write) => this.durably(what, write),
      failed: (what, err) => {
        if (!this.detached)
          this.deps.log('error', `run ${this.runId}: could not store ${what}: ${(err as Error).message}`);
      },
    });
    // After the wave is closed, so a hold and the run's end wait for the last steps' writes too: a status asked the
    // moment a breakpoint card shows must find the step it names ended.
    const afterWave = (e: DispatchEffect) =>
      e.type === 'finishRun' || e.type === 'showBreakpoint' || e.type === 'requestApproval';
    for (const effect of t.effects) if (!afterWave(effect)) this.execute(effect, wave);
    const finish = t.effects.find((e) => e.type === 'finishRun');
    if (finish && this.deps.runEnd) wave.endRun(this.deps.runEnd(finish.outcome), () => (this.endStored = true));
    wave.close();
    for (const effect of t.effects) if (afterWave(effect)) this.execute(effect, wave);
  }

  private execute(effect: DispatchEffect, wave: StepWave): void {
    switch (effect.type) {
      case 'startStep': {
        const controller = new AbortController();
        const k = key(effect.step.id, effect.attempt);
        this.inflight.set(k, controller);
        wave.expectStart(k, effect.step.id, effect.step.dependsOn);
        // Its "running" line keeps its place among this transition's messages until its call goes out.
        const running = this.outbox.keepPlace();
        void this.runStep(effect.step, effect.attempt, effect.args, effect.timeoutMs, { controller, wave, running })
          // Whichever way the step went, its place in line is given up.
          .finally(() => running(null));
        return;
      }
      case 'abortStep':
        // Only a Stop aborts a step: the reason lets a server's question open during the call say so.
        this.inflight.get(key(effect.stepId, effect.attempt))?.abort(RUN_STOPPED);
        // What the server still reports about a call it was told to stop is not shown.
        this.reported.end(key(effect.stepId, effect.attempt));
        return;
      case 'recordStepEnd':
        this.recordEnd(effect, wave);
        return;
      case 'showBreakpoint':
      case 'requestApproval':
        void Promise.all(this.queues.values()).then(() => this.deps.onHold(this, effect));
        return;
      case 'requestConnection':
        this.deps.onConnection?.(this, { stepId: effect.stepId, server: effect.server });
        return;
      case 'holdInterrupted':
        this.holdInterrupted(effect.stepId, effect.error).catch((err: unknown) => {
          if (!this.detached)
            this.deps.log(
              'error',
              `run ${this.runId}: could not pause after ${effect.stepId}: ${(err as Error).message}`,
            );
        });
        return;
      case 'finishRun':
        // Everything about the steps is stored, and shown, before the run counts as done (its owner stores its end).
        void Promise.all(this.queues.values())
          .then(() => this.outbox.idle())
          .then(() => this.resolveDone(this.state));
        return;
    }
  }

  private async runStep(
    step: Step,
    attempt: number,
    args: Json,
    timeoutMs: number,
    { controller, wave, running }: { controller: AbortController; wave: StepWave; running: FillPlace<OutboundMessage> },
  ): Promise<void> {
    const { clock } = this.deps;
    const k = key(step.id, attempt);
    // The step's timeout covers everything from here: the definition check, the intent's write and the call.
    const began = clock().getTime();
    // Awaiting first also keeps this from re-entering the transition that is starting the step.
    const personal = step.kind === 'tool' && this.state.policies[step.id]?.perPerson === true;
    let listed: readonly ToolInfo[] | undefined;
    if (personal && step.kind === 'tool') {
      // Checked under the requester's own session: the definition the call goes out under, or no connection at all.
      const read = readServerOf(step.tool, args as Record<string, Json>);
      const access =
        step.tool === READ_RESOURCE_TOOL
          ? await this.readerAccess(read, controller.signal, timeoutMs)
          : await this.personalAccess(step.tool, controller.signal, timeoutMs);
      if (access.kind === 'connect') {
        wave.withdraw(k);
        this.endInflight(step.id, attempt);
        this.send({ type: 'connectionNeeded', stepId: step.id, attempt, server: access.server });
        return;
      }
      if (access.kind === 'failed') {
        wave.withdraw(k);
        this.finishStep(step.id, attempt, { ok: false, error: access.error });
        return;
      }
      // A resource read is Steward's own tool, pinned by Steward's version: the catalog has it.
      if (step.tool !== READ_RESOURCE_TOOL) listed = access.tool ? [access.tool] : [];
    } else if (step.kind === 'tool' && this.pins.has(step.tool)) {
      await this.deps.tools.refreshTool?.(step.tool, { signal: controller.signal, timeoutMs });
    } else await Promise.resolve();
    if (step.kind === 'tool' && changedDefinition(this.pins.get(step.tool), listed ?? this.deps.tools.listTools())) {
      wave.withdraw(k);
      this.endInflight(step.id, attempt);
      this.send({ type: 'definitionChanged', stepId: step.id, attempt });
      return;
    }
    const at = clock();
    this.startedAt.set(k, began);
    try {
      // No call goes out without its intent stored, after its dependencies' ends (written with it, or before it):
      // while the database is away the step waits here (and so, with it, the run); Stop still ends the wait.
      const start = { stepId: step.id, attempt, revision: this.revisionNow, args, at };
      await untilAborted(wave.ready(k, start), controller.signal);
      this.heldStarts.delete(k);
    } catch (err) {
      wave.withdraw(k);
      // Another process drives the run now: nothing more is sent or recorded here.
      if (this.detached) return;
      if (err instanceof StartsHeld && !controller.signal.aborted) {
        this.startedAt.delete(k);
        this.endInflight(step.id, attempt);
        await this.heldBeforeStart(step.id, attempt);
        return;
      }
      if (controller.signal.aborted) {
        // Its start may not be stored, so its end is stored with a start row of its own if need be.
        this.startedAt.delete(k);
        this.finishStep(step.id, attempt, {
          ok: false,
          error: { code: 'cancelled', message: 'stopped before it was sent', retryable: false },
        });
        return;
      }
      this.finishStep(step.id, attempt, {
        ok: false,
        error: {
          code: 'internal',
          message: `could not record the step before running it: ${(err as Error).message}`,
          retryable: false,
        },
      });
      return;
    }
    running(this.progress(step.id, 'running', step.kind === 'tool' ? `calling ${step.tool}` : step.kind));
    if (controller.signal.aborted) {
      this.finishStep(step.id, attempt, {
        ok: false,
        error: { code: 'cancelled', message: 'stopped before it was sent', retryable: false },
      });
      return;
    }
    const left = Math.max(1, timeoutMs - (clock().getTime() - began));
    const sent = clock();
    const outcome = await this.callStep(step, args, left, controller.signal, (report) =>
      this.callReported(
        k,
        { stepId: step.id, attempt, tool: step.kind === 'tool' ? step.tool : step.kind, report },
        controller.signal,
      ),
    );
    this.deps.telemetry?.stepAttemptEnded({
      runId: this.runId,
      stepId: step.id,
      attempt,
      tool: step.kind === 'tool' ? step.tool : step.kind,
      ...(outcome.ok ? { outcome: 'ok' } : { outcome: outcome.error.code, error: outcome.error.message }),
      startedAt: sent,
      endedAt: clock(),
      args,
      output: outcome.ok ? outcome.value : null,
    });
    this.finishStep(step.id, attempt, outcome);
  }

  /**
   * The step was not started: a person's Pause or Stop reached the database before its start did. What waits in the
   * queue is applied here; the step waits again and goes as the dispatcher then decides. A Pause or Stop stored before
   * this driver heard of it reaches it in a moment (it is sent once stored), so a start held again waits for the next
   * Pause, Resume or Stop, or a while (a decision this driver applied while the database was away may not be stored
   * yet: a Resume then, after the Pause it follows), never in a loop.
   */
  private async heldBeforeStart(stepId: string, attempt: number): Promise<void> {
    const seen = this.controls;
    await this.deps.applyQueued?.().catch((err: unknown) => {
      this.deps.log('warn', `run ${this.runId}: queued decisions not applied yet: ${(err as Error).message}`);
    });
    const k = key(stepId, attempt);
    const held = (this.heldStarts.get(k) ?? 0) + 1;
    this.heldStarts.set(k, held);
    if (this.controls === seen && held > 1)
      await this.nextControl(Math.min(HELD_RETRY_MS * 2 ** (held - 2), HELD_RETRY_MAX_MS));
    this.send({ type: 'startHeld', stepId, attempt });
  }

  /** Resolves at the next Pause, Resume or Stop the dispatcher gets, or after `ms`. */
  private nextControl(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.controlWaiters.push(done);
    });
  }

  /** Ends every wait for the next Pause, Resume or Stop (one came, or the run is let go). */
  private wakeControlWaiters(): void {
    const waiters = this.controlWaiters;
    this.controlWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private async callStep(
    step: Step,
    args: Json,
    timeoutMs: number,
    signal: AbortSignal,
    onProgress: (report: ToolProgress) => void,
  ): Promise<Result<Json, StepError>> {
    if (step.kind === 'tool') {
      const refused = await this.grantRefusal(step.tool);
      if (refused) return { ok: false, error: refused };
      const result = await this.deps.tools.callTool(step.tool, args as Record<string, Json>, {
        signal,
        timeoutMs,
        runId: this.runId,
        stepId: step.id,
        onProgress,
        ...(this.actingAs && { as: this.actingAs }),
      });
      if (!result.ok) return result;
      const output = result.value as unknown as Json;
      if (result.value.isError)
        return { ok: false, error: { code: 'tool_error', message: cut(outputText(output), 500), retryable: false } };
      return { ok: true, value: output };
    }
    const prompt =
      typeof (args as { prompt?: Json }).prompt === 'string'
        ? (args as { prompt: string }).prompt
        : JSON.stringify((args as { prompt?: Json }).prompt);
    try {
      const response = await this.deps.llm.complete({
        role: 'llm_step',
        system: '[steward:llm_step]\nDo the task below and answer with text only. You cannot call tools.',
        messages: [{ role: 'user', content: prompt }],
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      });
      return { ok: true, value: { text: response.text } };
    } catch (err) {
      // Refused by a spend cap before anything was sent: the dispatcher pauses the run for a person.
      if (err instanceof StewardError && err.code === 'spend_capped')
        return { ok: false, error: { code: 'spend_capped', message: err.message, retryable: false } };
      if (signal.aborted)
        return {
          ok: false,
          error: { code: 'cancelled', message: 'stopped while the model was writing', retryable: false },
        };
      return { ok: false, error: { code: 'llm_failed', message: (err as Error).message, retryable: false } };
    }
  }

  /** Whether the requester's own session can run `tool` now (a run with no requester named has no connection). */
  private async personalAccess(tool: string, signal: AbortSignal, timeoutMs: number): Promise<PersonalAccess> {
    const server = tool.slice(0, tool.indexOf('.'));
    if (!this.actingAs) return { kind: 'connect', server };
    // A runner that cannot look ahead: the call itself says whether the connection works (`not_connected`).
    if (!this.deps.tools.prepareAs)
      return { kind: 'ready', tool: this.deps.tools.listTools().find((t) => t.name === tool) };
    return this.deps.tools.prepareAs(tool, this.actingAs, { signal, timeoutMs });
  }

  /**
   * Whether the requester's own session of the server a resource read names can take it now: only a server that
   * connects per person needs one (a read whose server came from a reference may name any).
   */
  private async readerAccess(
    server: string | undefined,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<PersonalAccess> {
    const perPerson = this.deps.tools.listResources?.().find((l) => l.server === server)?.perPerson === true;
    if (server === undefined || !perPerson) return { kind: 'ready', tool: undefined };
    if (!this.actingAs) return { kind: 'connect', server };
    if (!this.deps.tools.openAs) return { kind: 'ready', tool: undefined };
    return this.deps.tools.openAs(server, this.actingAs, { signal, timeoutMs });
  }

  /** Why the run's Assistant may not call `tool` now (its grant revoked, or the check itself failed), or null. */
  private async grantRefusal(tool: string): Promise<StepError | null> {
    if (!this.deps.checkGrant) return null;
    try {
      const refusal = await this.deps.checkGrant(tool);
      return refusal === null ? null : { code: 'not_granted', message: refusal, retryable: false };
    } catch (err) {
      // Not knowing the grant is not a grant: the call is not made.
      const message = `${tool}: the Assistant's grant could not be read (${(err as Error).message}); the call was not made`;
      return { code: 'not_granted', message, retryable: false };
    }
  }

  private finishStep(stepId: string, attempt: number, outcome: Result<Json, StepError>): void {
    this.endInflight(stepId, attempt);
    this.send(
      outcome.ok
        ? { type: 'stepSucceeded', stepId, attempt, output: outcome.value }
        : { type: 'stepFailed', stepId, attempt, error: outcome.error },
    );
  }

  private recordEnd(e: Extract<DispatchEffect, { type: 'recordStepEnd' }>, wave: StepWave): void {
    const at = this.deps.clock();
    const started = this.startedAt.get(key(e.stepId, e.attempt));
    wave.end({
      stepId: e.stepId,
      attempt: e.attempt,
      status: e.status,
      output: e.output ?? null,
      error: e.error ?? null,
      at,
      durationMs: started === undefined ? 0 : at.getTime() - started,
      // Skipped steps and conditions never went through startStep, so their row is written with their end.
      ...(started === undefined && { unstarted: { revision: this.revisionNow } }),
    });
    this.notifyProgress(e.stepId, e.status, e.detail);
  }

  /**
   * The dispatcher paused the run because a call may have acted before its server went away, as after a crash
   * mid-call: the pause is stored (the status is the authority a resume is judged by), then the person is told.
   */
  private async holdInterrupted(stepId: string, error: StepError): Promise<void> {
    const { store, clock } = this.deps;
    let paused = false;
    await this.durably('the pause', async () => {
      paused = await store.transition(this.runId, ['running'], 'paused', { at: clock() });
    });
    const { runId } = this;
    // After the step's own line, in the run's order.
    if (paused) this.outbox.push({ kind: 'runStatus', runId, status: 'paused', actions: actionsFor('paused', 0) });
    const text =
      error.code === 'spend_capped'
        ? `${stepId} did not run: ${error.message}. The run is paused: an approver's Resume lets it go past the ` +
          'spend caps (anyone may resume once a cap was raised or a new day or month began), or Stop.'
        : `${error.message.replace(/\.$/, '')}, so ${stepId} is not safe to repeat blindly: the run is paused. ` +
          'Resume to run it again, or stop.';
    this.outbox.push({ kind: 'notice', runId, level: 'warning', text });
    await this.outbox.idle();
  }

  /** A server reported progress on a call: kept (paced) while the call is in flight and not stopped, else dropped. */
  private callReported(k: string, call: CallReport, signal: AbortSignal): void {
    if (this.detached || signal.aborted || !this.inflight.has(k)) return;
    this.reported.report(k, call);
  }

  /**
   * A call's latest report, once its pace allows: the running step's line with what the server said, and the same
   * report kept on the attempt for the dashboard (one small write a second at most per call, as the card's change).
   */
  private showReport(k: string, { stepId, attempt, tool, report }: CallReport): void {
    const controller = this.inflight.get(k);
    if (this.detached || !controller || controller.signal.aborted) return;
    this.outbox.push(this.progress(stepId, 'running', callProgressDetail(tool, report)));
    const { store, clock, log } = this.deps;
    // Best effort: a lost progress line is replaced by the next one within a second, and the step goes on.
    void store
      .recordProgress?.({ runId: this.runId, stepId, attempt, progress: report, at: clock() })
      .catch((err: unknown) =>
        log('info', `run ${this.runId}: progress of ${stepId} not stored (${(err as Error).message})`),
      );
  }

  private notifyProgress(stepId: string, status: DispatchState['steps'][string]['status'], detail: string): void {
    this.outbox.push(this.progress(stepId, status, detail));
  }

  private progress(stepId: string, status: DispatchState['steps'][string]['status'], detail: string): OutboundMessage {
    const all = Object.values(this.state.steps);
    const finished = all.filter((s) => s.status !== 'pending' && s.status !== 'running').length;
    return {
      kind: 'progress',
      runId: this.runId,
      stepId,
      status,
      detail: cut(detail, 300),
      finished,
      total: all.length,
    };
  }

  /** A write about this run that waits out a database outage for as long as this process drives the run. */
  whenStored(what: string, write: () => Promise<void>): Promise<void> {
    return this.durably(what, write);
  }

  /**
   * Runs a store write until it is stored: a retryable failure (the database is away for longer than the store's
   * own retries) is tried again with backoff for as long as this process drives the run, so a finished step's
   * result is never lost. A non-retryable failure, a `signal` that aborts, or `detach` end the attempts.
   */
  private async durably(what: string, write: () => Promise<void>, signal?: AbortSignal): Promise<void> {
    const stop = this.detachedSignal.signal;
    try {
      await untilStored(write, {
        signal: signal ? AbortSignal.any([signal, stop]) : stop,
        onWait: (err) => {
          if (this.waitingForStore.size === 0) {
            this.deps.log('warn', `run ${this.runId}: cannot store ${what} (${err.message}); holding and retrying`);
          }
          this.waitingForStore.add(what);
        },
      });
    } catch (err) {
      if (err instanceof StewardError && err.code === 'fenced' && !this.detached) {
        this.deps.log('warn', `run ${this.runId}: ${err.message}`);
        this.deps.onLost(this);
      }
      throw err;
    }
    if (this.waitingForStore.delete(what) && this.waitingForStore.size === 0) {
      this.deps.log('info', `run ${this.runId}: the database is back; carrying on`);
    }
  }
}

/** A server's progress report on one step's call. */
interface CallReport {
  stepId: string;
  attempt: number;
  tool: string;
  report: ToolProgress;
}

function key(stepId: string, attempt: number): string {
  return `${stepId}#${attempt}`;
}

/** `work`, unless `signal` aborts first: then it rejects at once (the work itself goes on). */
function untilAborted(work: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      () => (signal.removeEventListener('abort', onAbort), resolve()),
      (err: unknown) => (signal.removeEventListener('abort', onAbort), reject(err as Error)),
    );
  });
}
