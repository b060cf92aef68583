/**
 * Steward's front door for every channel (`InboundHandler`): new requests, replies in a run's thread, and
 * decisions. It builds the flows and the small owners they share, then routes; the flows reach the world only
 * through ports, and the store decides every state change (conditional updates), so a duplicate, stale or
 * unauthorized decision changes nothing.
 */
import { DEFAULT_SCHEDULE_LIMITS } from '../workflow/schedule-limits.ts';
import {
  refusal as refused,
  type CommandAnswer,
  type ConnectionsAnswer,
  type ConnectionsCommand,
  type EditablePlan,
  type InboundDecision,
  type InboundFeedback,
  type InboundHandler,
  type InboundMessage,
  type PromptStart,
  type RunListing,
  type WorkflowOverview,
  type WorkflowRequest,
} from '../channel.ts';
import type { SentencePart } from '../messages.ts';
import type { Conversation, EarlierTurn, PendingConnection, StoredRun } from '../ports.ts';
import {
  NO_SPEND_CAPS,
  SPEND_REPORT_LINES,
  spendChannelKey,
  spendWindows,
  withCaps,
  type SpendReport,
} from '../spend.ts';
import { EARLIER_TURNS, renderEarlierTurns } from '../run/earlier-turns.ts';
import { raiseDepthBrake, widenGrantsDecision } from './brake-raise.ts';
import { approverRoles, isApprover, mayDecide, plainText, sentence } from '../run/run-actions.ts';
import { interventionTools } from '../run/holds.ts';
import {
  CONNECTION_WAIT_EVENTS,
  connectionWaitSentence,
  connectionWaits,
  describeHistory,
  describeRun,
  describeStatus,
} from '../run/run-status.ts';
import { parseAddress, type Assistant, type AssistantStore } from '../assistant/assistants.ts';
import { DEFAULT_DELEGATION_LIMITS } from '../assistant/delegations.ts';
import { StewardError } from '../errors.ts';
import { isTerminal, type Actor, type DecisionAction, type ReviewPreference } from '../types.ts';
import { AssistantFlow } from './assistant-flow.ts';
import { withAssistantModels } from './assistant-grants.ts';
import { withBuiltinTools } from './builtin-tools.ts';
import { DelegationFlow, type ChildRun } from './delegation-flow.ts';
import { classifyReply } from './classify.ts';
import { answerConnections } from './connection-commands.ts';
import { ConnectionWaits } from './connection-waits.ts';
import { tellExpired } from './connection-expiry.ts';
import { DEFAULT_QUESTION_TIMEOUT_MS, ServerQuestionFlow, type QuestionReply } from './server-question-flow.ts';
import type { InboundQuestionAnswer, ServerQuestions } from '../server-questions.ts';
import type { QuestionCard } from '../messages.ts';
import type { LlmForRun, StewardDeps } from './deps.ts';
import { meteredLlm } from './metered-llm.ts';
import { createPlanWriter, type PlanWriter } from './planner.ts';
import { PlanningFlow } from './planning-flow.ts';
import { QuickAnswers } from './quick-answer.ts';
import { Recovery } from './recovery.ts';
import { ReviewFlow } from './review-flow.ts';
import { ReviewTimers } from './review-timers.ts';
import { RunControl } from './run-control.ts';
import { RunDrivers } from './run-drivers.ts';
import { DEFAULT_LEASE_MS, RunLeases } from './run-leases.ts';
import { RunLifecycle } from './run-lifecycle.ts';
import { RunOwnership } from './run-ownership.ts';
import { RunMessages } from './run-messages.ts';
import { RunViews } from './run-views.ts';
import { PlanEstimates } from './plan-estimates.ts';
import { WorkflowAmendments } from './workflow-amendments.ts';
import { WorkflowFires } from './workflow-fires.ts';
import { WorkflowFlow } from './workflow-flow.ts';
import { controlEndedRun, type EndedControl } from '../run/ended-control.ts';
import { choosePrompt, listPrompts } from './prompt-flow.ts';
import { withRunEnds } from './run-ends.ts';

export type { StewardDeps, StewardSettings } from './deps.ts';

/** How long the list of Assistants a plan may delegate to is kept before it is read again. */
const ASSISTANT_LIST_MS = 5_000;

/** A stored run as a line of a person's list. */
const toListing = (run: StoredRun): RunListing => ({
  id: run.id,
  status: run.status,
  statusText: describeStatus(run.status),
  request: run.request,
  summary: run.plan?.summary ?? null,
  revision: run.revision,
  conversation: run.conversation,
  createdAt: run.createdAt,
});

/** The background round that keeps this process's leases and takes over orphans. */
/** The engine, as the channels see it. */
export class Steward implements InboundHandler {
  private readonly drivers = new RunDrivers();
  /** The earlier turns read with each run created here from a message, while its first plan is written. */
  private readonly turnsAtCreation = new Map<string, EarlierTurn[]>();
  private readonly leases: RunLeases;
  private readonly lifecycle: RunLifecycle;
  private readonly timers: ReviewTimers;
  private readonly messages: RunMessages;
  private readonly llmFor: LlmForRun;
  private readonly writePlan: PlanWriter;
  private readonly review: ReviewFlow;
  private readonly control: RunControl;
  private readonly ownership: RunOwnership;
  private readonly planner: PlanningFlow;
  private readonly views: RunViews;
  private readonly fires: WorkflowFires | undefined;
  private readonly workflows: WorkflowFlow | undefined;
  private readonly amendments: WorkflowAmendments | undefined;
  private readonly assistants: AssistantFlow | undefined;
  private readonly delegation: DelegationFlow | undefined;
  private readonly waits: ConnectionWaits;
  private readonly questionFlow: ServerQuestionFlow | undefined;
  /** Stops this Steward being the one asked to have a pending connection confirmed. */
  private readonly stopAsking: () => void;
  private assistantList: { at: number; list: Promise<Assistant[]> } | undefined;

  private readonly deps: StewardDeps;

  constructor(given: StewardDeps) {
    // Delegation needs both the Assistants and the brakes; its child runs are started and steered through Steward.
    if (given.assistants && given.delegations) {
      this.delegation = new DelegationFlow(
        {
          store: given.store,
          delegations: given.delegations,
          assistants: given.assistants,
          clock: given.clock,
          newId: given.newId,
          log: given.log,
          limits: given.settings.delegation ?? DEFAULT_DELEGATION_LIMITS,
          pollMs: given.settings.delegationPollMs,
        },
        { startChild: (child) => this.startChild(child), decide: (d) => this.decision(d) },
      );
    }
    // Steward's own tools (`steward.*`) sit beside the MCP servers' for every flow.
    const builtin = this.delegation && { flow: this.delegation, timeoutMs: given.settings.delegateTimeoutMs };
    const estimates = new PlanEstimates({
      history: given.estimateHistory,
      clock: given.clock,
      log: given.log,
      prices: given.settings.modelPrices ?? [],
      maxParallel: given.settings.maxParallel,
      defaultPricePerMillion: given.settings.spend?.defaultPricePerMillion,
    });
    // With telemetry, each run's end is told as the store writes it (run-ends.ts).
    const store = given.telemetry ? withRunEnds(given.store, given.telemetry, given.clock) : given.store;
    const deps = { ...given, store, tools: withBuiltinTools(given.tools, store, builtin), estimates };
    this.deps = deps;
    const { llm, clock, log, tools, notifier, settings, telemetry } = deps;
    this.leases = new RunLeases(store, settings.leaseMs ?? DEFAULT_LEASE_MS);
    this.messages = new RunMessages(notifier, settings.amendmentCap);
    this.timers = new ReviewTimers(
      { store, clock, log, timeoutMs: settings.reviewTimeoutMs },
      this.drivers,
      this.messages,
    );
    this.llmFor = (run, options) => {
      const { budgets, modelPrices: prices, spend } = settings;
      const metering = { llm, store, clock, budgets, prices, spend, telemetry };
      const metered = meteredLlm(metering, run.id, run.requester, options?.settle);
      return run.assistant && deps.assistants ? withAssistantModels(metered, deps.assistants, run.assistant) : metered;
    };
    const earlier = (runId: string) =>
      (this.turnsAtCreation.has(runId)
        ? Promise.resolve(this.turnsAtCreation.get(runId) ?? [])
        : store.earlierTurns(runId, EARLIER_TURNS)
      ).then(renderEarlierTurns, (err: unknown) => {
        log('warn', `run ${runId}: planned without the conversation's earlier turns: ${(err as Error).message}`);
        return undefined;
      });
    const { maxRepairs, plannerTools } = settings;
    // Plans may delegate only where delegation is set up: then the planner is told which Assistants there are.
    const delegates = this.delegation && deps.assistants;
    this.writePlan = createPlanWriter(tools, this.llmFor, maxRepairs, plannerTools, earlier, deps.assistants, {
      delegates: delegates ? () => this.knownAssistants(delegates) : undefined,
      log,
      store: deps.store,
      ...(deps.delegations && { widened: deps.delegations }),
    });
    if (deps.assistants) {
      const approvers = settings.approvers ?? [];
      this.assistants = new AssistantFlow({
        assistants: deps.assistants,
        tools,
        clock,
        approvers,
        models: settings.modelNames ?? [],
      });
    }
    this.waits = new ConnectionWaits(
      { connections: deps.connections, store, clock, log, approvers: settings.approvers ?? [] },
      this.messages,
    );
    if (deps.questions) {
      const { questions, newId } = deps;
      const timeoutMs = settings.questionTimeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS;
      const approvers = settings.approvers ?? [];
      this.questionFlow = new ServerQuestionFlow(
        { store, questions, clock, newId, log, approvers, timeoutMs },
        this.messages,
      );
    }
    this.stopAsking = deps.connections?.whenPending((p) => this.askToConfirm(p)) ?? (() => undefined);
    const lifecycle = new RunLifecycle(deps, this.llmFor, this.drivers, this.leases, this.timers, this.messages, {
      waits: this.waits,
      afterStart: async (run, fresh) => {
        await this.ownership
          .started(run.id, fresh)
          .catch((err: unknown) =>
            log('warn', `run ${run.id}: queued decisions not applied yet: ${(err as Error).message}`),
          );
        await this.delegation
          ?.started(run)
          .catch((err: unknown) => log('warn', `run ${run.id}: not paused with its parent: ${(err as Error).message}`));
      },
      afterReport: (runId, requester) => this.delegation?.ended(runId, requester),
      applyQueued: (runId) => this.ownership.drain(runId),
    });
    this.lifecycle = lifecycle;
    this.review = new ReviewFlow(deps, this.writePlan, this.drivers, this.timers, this.messages, lifecycle);
    this.control = new RunControl(deps, this.drivers, this.messages, this.writePlan);
    const recovery = new Recovery(deps, this.timers, this.messages, lifecycle);
    this.ownership = new RunOwnership(deps, this.leases, this.drivers, lifecycle, {
      report: (run) => recovery.report(run),
      recover: (run, fence) => recovery.recover(run, fence),
      replan: (run, fence) => this.replan(run, fence),
      apply: (d) => this.decideQueued(d),
      // Slots of delegations whose end was lost with their parent's process are freed once their child has ended; a
      // connection whose signal was missed is found; one that waited too long to be confirmed is forgotten.
      afterRound: async () => {
        await this.delegation?.sweep();
        await this.waits.recheck();
        if (deps.connections) {
          const { connections, store, notifier, clock } = deps;
          await tellExpired({ connections, store, notifier, clock, log }, await connections.expirePending(clock()));
        }
      },
      // A connection made anywhere: a server whose tools this process has not listed yet lists them (the planner
      // sees it), and the runs waiting here look again.
      connected: async () => {
        await deps.connections?.heard();
        await this.waits.recheck();
      },
    });
    const quick = settings.quickAnswers
      ? new QuickAnswers(deps, this.llmFor, settings.quickAnswers, earlier)
      : undefined;
    this.planner = new PlanningFlow(
      deps,
      this.writePlan,
      this.drivers,
      this.messages,
      lifecycle,
      this.review,
      quick,
      settings.quickAnswers?.frontDesk,
    );
    this.views = new RunViews(deps, (run, actor) => this.mayDecide(run, actor));
    if (deps.workflows && deps.calendar) {
      const { workflows, calendar } = deps;
      const owners = { leases: this.leases, review: this.review, messages: this.messages };
      const limits = settings.scheduleLimits ?? DEFAULT_SCHEDULE_LIMITS;
      this.fires = new WorkflowFires({ ...deps, workflows, calendar, ...owners, firesPerDay: limits.firesPerDay });
      const writePlan = this.writePlan;
      this.amendments = new WorkflowAmendments({ ...deps, workflows, writePlan, ...owners, timers: this.timers });
      const flowDeps = { ...deps, workflows, calendar, approvers: settings.approvers ?? [] };
      const timeZone = settings.timeZone ?? 'UTC';
      this.workflows = new WorkflowFlow({ ...flowDeps, timeZone, limits }, this.fires, this.amendments);
    }
  }

  /**
   * A message: a reply in the thread of an active run is classified; anything else is a new request. A platform event
   * is handled once across redeliveries and processes: a reply's is claimed before it is acted on, a new request's
   * together with its run (a kill leaves both or neither, so the platform's retry, or a peer, creates the run).
   */
  async message(m: InboundMessage): Promise<void> {
    const { store, clock, newId } = this.deps;
    // Claims the event for what is not a new run (a reply, a refusal); answers the platform either way: taken here or
    // before, it is handled.
    const handledHere = async () => {
      const mine = !m.deliveryId || (await store.claimInbound(m.deliveryId, clock()));
      m.accepted?.();
      return mine;
    };
    // A message that names no run and addresses no Assistant (`ask <name>:`): its run is created in the same write
    // that looks for an active run in the conversation (which takes it as a reply instead).
    const mayAddress = this.assistants && m.fromPrompt === undefined && parseAddress(m.text) !== null;
    if (!m.newRequest && !m.runId && !mayAddress) {
      const run = {
        id: newId(),
        conversation: m.conversation,
        requester: m.actor,
        ...(m.place !== undefined && { place: m.place }),
      };
      const held = { ...run, request: m.text, at: clock(), leaseMs: this.leases.ttlMs, deliveryId: m.deliveryId };
      const {
        created,
        active,
        earlierTurns,
        run: stored,
      } = await store.createRunUnlessActive(held, {
        earlierTurns: EARLIER_TURNS,
      });
      // Claimed with the write either way (or handled before, when neither).
      m.accepted?.();
      if (active) return this.reply(active, m);
      if (!created) return;
      this.leases.hold(run.id, 0);
      // The conversation's earlier turns, read by the same write, are what its planning is shown (quick path too).
      if (earlierTurns) this.turnsAtCreation.set(run.id, earlierTurns);
      // Planned from the run as its write stored it: nothing else could have changed it yet.
      return this.planner
        .plan(run, m.text, stored ? { stored } : {})
        .finally(() => this.turnsAtCreation.delete(run.id));
    }
    // `newRequest`: the person said this is a new request, so an active run in the conversation does not take it.
    const active = m.newRequest ? null : await this.repliedTo(m);
    if (active) return (await handledHere()) ? this.reply(active, m) : undefined;
    const addressed = this.assistants && m.fromPrompt === undefined ? await this.addressed(m) : null;
    if (typeof addressed === 'string') {
      if (!(await handledHere())) return;
      const refusal = { kind: 'notice' as const, level: 'warning' as const, text: addressed, to: m.actor };
      return this.deps.notifier.send(m.conversation, refusal);
    }
    const request = addressed?.task ?? m.text;
    const run = {
      id: newId(),
      conversation: m.conversation,
      requester: m.actor,
      assistant: addressed?.name,
      ...(m.place !== undefined && { place: m.place }),
    };
    const created = await this.createHeld(run, request, m.deliveryId);
    m.accepted?.();
    if (created) await this.planner.plan(run, request);
  }

  /**
   * The active run a reply is for: the one the channel named, while it is active here; else the conversation's (which
   * also decides between a run and the runs it delegated to, so a named delegated run leaves it to that rule).
   */
  private async repliedTo(m: InboundMessage): Promise<StoredRun | null> {
    const named = m.runId ? await this.deps.store.getRun(m.runId) : null;
    const here =
      named?.conversation.channel === m.conversation.channel && named.conversation.key === m.conversation.key;
    if (named && here && !named.parentRunId && !isTerminal(named.status)) return named;
    return this.deps.store.findActiveRun(m.conversation);
  }

  /**
   * Stores a new run held by this process from the start, so no other process takes it for an orphan while it is
   * planned; a process that dies from here on leaves a run in `planning`, which the next holder plans again.
   */
  private async createHeld(
    run: Omit<ChildRun, 'request' | 'assistant' | 'parentRunId'> & {
      assistant?: string;
      parentRunId?: string;
      place?: string;
    },
    request: string,
    deliveryId?: string,
  ): Promise<boolean> {
    const { store, clock } = this.deps;
    const created = await store.createRun({ ...run, request, at: clock(), leaseMs: this.leases.ttlMs, deliveryId });
    if (created) this.leases.hold(run.id, 0);
    return created;
  }

  /** A delegate step's child run: stored and held here, then planned as the Assistant's (never a quick answer). */
  private async startChild(child: ChildRun): Promise<void> {
    await this.createHeld(child, child.request);
    void this.planner.plan(child, child.request, { quick: false });
  }

  /**
   * A request addressed to an Assistant (`ask <name>: <task>`): the Assistant and the task; the refusal to answer
   * when the task is empty, or when the name is unknown while Assistants exist (it names them, in case of a typo: a
   * request meant for a narrowly granted Assistant must not quietly become Steward's own); null when it addresses
   * nobody. Where there are no Assistants, `Question: …` or `ask John: …` is simply Steward's own request.
   */
  private async addressed(m: InboundMessage): Promise<{ name: string; task: string } | string | null> {
    const address = parseAddress(m.text);
    if (!address || !this.assistants || !this.deps.assistants) return null;
    let refusal: string | null = null;
    if (!(await this.deps.assistants.getAssistant(address.name))) {
      const names = (await this.deps.assistants.listAssistants()).map((a) => a.name);
      if (names.length === 0) return null;
      refusal = `${(await this.assistants.unknown(address.name)).text} To ask Steward itself, say it without "${address.name}:".`;
    } else if (address.task === '') {
      refusal = `Say what to ask ${address.name}: ask ${address.name}: <request>`;
    }
    return refusal ?? address;
  }

  claimDelivery(deliveryId: string): Promise<boolean> {
    return this.deps.store.claimInbound(deliveryId, this.deps.clock());
  }

  /**
   * A decision; refused with a reason (to the presser only when they lack the right) and always recorded. A decision
   * on a run that another process drives (or that waits for a new owner) is queued for that process.
   */
  async decision(d: InboundDecision): Promise<void> {
    const stop = this.stopLocally(d);
    try {
      if (!stop && (await this.ownership.forwarded(d))) return d.accepted?.();
      await this.decideHere(d, stop?.run);
    } finally {
      stop?.release();
    }
  }

  /** A decision another process queued for a run held here: decided here (a Stop reaches the driver first). */
  private async decideQueued(d: InboundDecision): Promise<void> {
    const stop = this.stopLocally(d);
    try {
      await this.decideHere(d, stop?.run);
    } finally {
      stop?.release();
    }
  }

  private async decideHere(d: InboundDecision, stoppedHere: StoredRun | undefined): Promise<void> {
    try {
      await this.decide(d);
    } catch (err) {
      if (!(err instanceof StewardError) || !err.retryable) throw err;
      if (!stoppedHere) {
        if (!(await this.pausedOrResumedHere(d, err))) throw err;
        return;
      }
      // The run stops all the same: its driver ends it and reports once the database is back.
      const run = stoppedHere;
      d.accepted?.();
      this.deps.log('warn', `run ${run.id}: Stop applied while the database is unreachable: ${err.message}`);
      const text = sentence`Stopping: steps in flight are cancelled; finished results are kept. (${d.actor}; the database is unreachable, so the run ends and reports once it is back.)`;
      await this.messages.notice(run, 'warning', text);
    }
  }

  /**
   * Pause or Resume while the database is away, on a run this process drives: as with Stop, the driver is told at
   * once and the person hears so; the decision is stored (and the card's status follows) once the database is back.
   * No call goes out meanwhile anyway (a step's intent is stored first), so what the press changes is what starts
   * when the database returns. False when there is nothing to do here (another process drives the run, the person
   * may not decide, or the run is not in a state the action leaves).
   */
  private async pausedOrResumedHere(d: InboundDecision, err: StewardError): Promise<boolean> {
    if (d.action !== 'pause' && d.action !== 'resume') return false;
    const run = this.drivers.runOf(d.runId);
    const driver = this.drivers.get(d.runId);
    if (!run || !driver || !this.mayDecide(run, d.actor)) return false;
    if (driver.current.phase !== (d.action === 'pause' ? 'running' : 'paused')) return false;
    const tools = interventionTools(driver.current);
    driver.send({ type: d.action === 'pause' ? 'pauseRequested' : 'resumeRequested' });
    d.accepted?.();
    this.deps.log('warn', `run ${run.id}: ${d.action} applied while the database is unreachable: ${err.message}`);
    const words = d.action === 'pause' ? 'Paused: nothing new starts until you resume.' : 'Resumed.';
    await this.messages.notice(
      run,
      'warning',
      sentence`${words} (${d.actor}; the database is unreachable, so this is recorded once it is back.)`,
    );
    const action = d.action;
    void driver
      .whenStored(`the ${action}`, () => this.control.storeApplied(run, { ...d, action }, tools))
      .catch((e: unknown) =>
        this.deps.log('warn', `run ${run.id}: the ${action} was not recorded: ${(e as Error).message}`),
      );
    return true;
  }

  /**
   * Stop cannot be undone: when this process drives the run and the person may stop it, in-flight calls are
   * aborted before anything else, so Stop works at once and even while the database is away. The run's progress
   * lines wait meanwhile (`release` lets them go on), so the Stop's notice is read before the steps it cancelled.
   */
  private stopLocally(d: InboundDecision): { run: StoredRun; release: () => void } | undefined {
    if (d.action !== 'stop') return undefined;
    const run = this.drivers.runOf(d.runId);
    const driver = this.drivers.get(d.runId);
    if (!run || !driver || !this.mayDecide(run, d.actor)) return undefined;
    const release = driver.holdMessages();
    driver.send({ type: 'stopRequested' });
    return { run, release };
  }

  private async decide(d: InboundDecision): Promise<void> {
    const { store, clock } = this.deps;
    const run = await store.getRun(d.runId);
    if (!run) {
      const nowhere = { id: d.runId, conversation: { channel: d.actor.channel, key: '' } };
      await this.messages.notice(nowhere, 'warning', 'That run does not exist.', d.actor);
      return;
    }
    // A press on the old card of a run that ended: only the presser hears about it.
    const ended = isTerminal(run.status);
    const elsewhere = ended ? await this.endedControl(run, d) : null;
    if (elsewhere?.kind === 'redirect') return this.redirect(run, d, elsewhere);
    const allowed = this.mayDecide(run, d.actor);
    const refusal = elsewhere
      ? elsewhere.text
      : allowed
        ? await this.handle(run, d)
        : sentence`Only ${run.requester} or an approver can ${d.action} this run.`;
    await store.recordDecision({
      runId: d.runId,
      revision: d.revision,
      actor: d.actor,
      action: d.action,
      accepted: refusal === null,
      note: refusal === null ? undefined : asText(refusal),
      at: clock(),
    });
    d.accepted?.();
    if (refusal) await this.messages.notice(run, 'warning', refusal, allowed && !ended ? undefined : d.actor);
    else if (this.delegation && (d.action === 'pause' || d.action === 'resume' || d.action === 'stop')) {
      // The run's delegated children follow it; one that cannot be reached now is told on the next try by the person.
      await this.delegation.propagate(run.id, d.action, d.actor).catch((err: unknown) => {
        this.deps.log('warn', `run ${run.id}: ${d.action} did not reach its delegated runs: ${(err as Error).message}`);
      });
    }
  }

  /** Pause, resume or stop on a run that ended: never a bare "already ended" while the person has another run here. */
  private async endedControl(run: StoredRun, d: InboundDecision): Promise<EndedControl> {
    const control = d.action === 'pause' || d.action === 'resume' || d.action === 'stop';
    const runs = control ? await this.deps.store.listRunsOf(d.actor, { activeOnly: true, limit: 50 }) : [];
    return controlEndedRun({ action: d.action, ended: run, runs, byWord: d.byWord === true });
  }

  /** A typed word whose run had ended goes to the person's only other active run there, saying so first. */
  private async redirect(run: StoredRun, d: InboundDecision, to: { runId: string; revision: number; text: string }) {
    await this.deps.store.recordDecision({
      runId: d.runId,
      revision: d.revision,
      actor: d.actor,
      action: d.action,
      accepted: false,
      note: to.text,
      at: this.deps.clock(),
    });
    await this.messages.notice(run, 'info', to.text, d.actor);
    await this.decision({ ...d, runId: to.runId, revision: to.revision, byWord: false });
  }

  /** Where the MCP host sends servers' questions; undefined when questions are not stored (none is shown). */
  /** How many runs this process holds a lease on (the operator's `steward_runs_leased`). */
  get leasedRuns(): number {
    return this.leases.ids().length;
  }

  get serverQuestions(): ServerQuestions | undefined {
    return this.questionFlow;
  }

  /** A person's answer to a server's question (a form submitted, or declined). */
  async answerQuestion(answer: InboundQuestionAnswer): Promise<QuestionReply> {
    if (!this.questionFlow) return { ok: false, refusal: 'Servers’ questions are not taken here.' };
    return this.questionFlow.answer(answer);
  }

  /** The form of an open question (asked by any process), for a channel about to show it; null when it has ended. */
  async openQuestion(questionId: string): Promise<QuestionCard | null> {
    return (await this.questionFlow?.card(questionId)) ?? null;
  }

  async canDecide(runId: string, actor: Actor): Promise<boolean> {
    const run = await this.deps.store.getRun(runId);
    return run !== null && this.mayDecide(run, actor);
  }

  async history(runId: string, to?: Actor): Promise<void> {
    const { store } = this.deps;
    const run = await store.getRun(runId);
    if (!run) return;
    const [revisions, decisions, usage] = await Promise.all([
      store.listRevisions(runId),
      store.listDecisions(runId),
      store.llmUsageForRun(runId),
    ]);
    await this.messages.notice(run, 'info', describeHistory(run, revisions, decisions, usage), to);
  }

  async editablePlan(runId: string): Promise<EditablePlan | null> {
    return this.views.editablePlan(runId);
  }

  async checkEdit(d: InboundDecision): Promise<string | null> {
    return this.views.checkEdit(d);
  }

  async setReviewPreference(actor: Actor, preference: ReviewPreference): Promise<void> {
    await this.deps.store.setReviewPreference(actor, preference, this.deps.clock());
  }

  async setBreakpointSuggestions(actor: Actor, on: boolean): Promise<void> {
    await this.deps.store.setBreakpointSuggestions(actor, on, this.deps.clock());
  }

  async activeRuns(actor: Actor): Promise<RunListing[]> {
    return (await this.deps.store.listRunsOf(actor, { activeOnly: true, limit: 50 })).map(toListing);
  }

  async recentRuns(actor: Actor, limit: number): Promise<RunListing[]> {
    return (await this.deps.store.listRunsOf(actor, { activeOnly: false, limit })).map(toListing);
  }

  async reviewPreference(actor: Actor): Promise<ReviewPreference> {
    return (await this.deps.store.getReviewPreference(actor)) ?? 'risky';
  }

  async workflowsOf(actor: Actor): Promise<WorkflowOverview[] | null> {
    const store = this.deps.workflows;
    if (!this.workflows || !store) return null;
    const own = (await store.listWorkflows()).filter(
      (w) => w.owner.channel === actor.channel && w.owner.id === actor.id,
    );
    return Promise.all(
      own.map(async (w) => ({
        name: w.name,
        version: w.version,
        review: w.review,
        schedules: (await store.listSchedules(w.id)).map(({ cron, timeZone, paused, nextFireAt }) => ({
          cron,
          timeZone,
          paused,
          nextFireAt,
        })),
      })),
    );
  }

  async assistantCommand(request: WorkflowRequest): Promise<CommandAnswer> {
    if (!this.assistants) return refused('Assistants are not set up in this Steward.');
    const answer = await this.assistants.command(request);
    this.assistantList = undefined;
    return answer;
  }

  async feedback(f: InboundFeedback): Promise<void> {
    const { store, clock } = this.deps;
    if (!(await store.getRun(f.runId))) return;
    const by = { id: f.actor.id, channel: f.actor.channel, ...(f.actor.name && { name: f.actor.name }) };
    await store.appendEvent(f.runId, 'feedback', { rating: f.rating, by }, clock());
  }

  async assistantNames(_actor: Actor): Promise<string[]> {
    const store = this.deps.assistants;
    if (!this.assistants || !store) return [];
    return (await this.knownAssistants(store)).map((a) => a.name);
  }

  /** A sign-in link to the web dashboard for this person; null when the dashboard is off. */
  async dashboardLink(actor: Actor): Promise<string | null> {
    const links = this.deps.dashboardLinks;
    if (!links) return null;
    return links.issue(actor, this.deps.clock(), {
      approverRoles: approverRoles(actor, this.deps.settings.approvers ?? []),
    });
  }

  async spendReport(actor: Actor, conversation: Conversation): Promise<SpendReport> {
    const { clock, settings, store } = this.deps;
    const windows = spendWindows(clock());
    const narrow = !isApprover(actor, settings.approvers ?? []);
    const who = { channelKey: spendChannelKey(conversation), person: actor, narrow, limit: SPEND_REPORT_LINES };
    const found = await store.spendReport(windows, who);
    return {
      ...found,
      windows,
      totals: withCaps(found.totals, settings.spend?.caps ?? NO_SPEND_CAPS),
      narrowed: narrow,
    };
  }

  async connections(
    actor: Actor,
    command: ConnectionsCommand,
    conversation?: Conversation,
  ): Promise<ConnectionsAnswer> {
    return answerConnections(this.deps, actor, command, conversation);
  }

  /**
   * A connection made through this person's link in a browser that showed no dashboard session of theirs: they are
   * asked, privately, where the link was sent (the waiting run's thread, or where they asked for it), to use it or
   * refuse it; their answer comes back as a `connections` command from their own chat identity.
   */
  private async askToConfirm(pending: PendingConnection): Promise<void> {
    const run = !pending.conversation && pending.runId ? await this.deps.store.getRun(pending.runId) : null;
    // Nowhere known: the channel shows it where the person last was (or, on Discord, in a direct message).
    const conversation = pending.conversation ?? run?.conversation ?? { channel: pending.person.channel, key: '' };
    const { server, link, person } = pending;
    const workspace = this.deps.connections?.workspaceServers().includes(server) ? { workspace: true as const } : {};
    await this.deps.notifier.send(conversation, { kind: 'connectionCheck', server, link, to: person, ...workspace });
  }

  /**
   * The Assistants a plan may delegate to, read at most every few seconds (a change made here is seen at once, one
   * made through another process within `ASSISTANT_LIST_MS`), so a first plan costs no statement for them.
   */
  private knownAssistants(assistants: AssistantStore): Promise<readonly Assistant[]> {
    const now = this.deps.clock().getTime();
    if (!this.assistantList || now - this.assistantList.at > ASSISTANT_LIST_MS) {
      const list = assistants.listAssistants();
      this.assistantList = { at: now, list };
      list.catch(() => (this.assistantList = undefined));
    }
    return this.assistantList.list;
  }

  promptList(actor: Actor): Promise<CommandAnswer> {
    return listPrompts(this.deps.prompts, actor);
  }

  choosePrompt(actor: Actor, text: string): Promise<PromptStart> {
    return choosePrompt(this.deps.prompts, actor, text);
  }

  async workflowCommand(request: WorkflowRequest): Promise<CommandAnswer> {
    if (!this.workflows) return refused('Workflows are not set up in this Steward.');
    return this.workflows.command(request);
  }

  /**
   * Takes over every run that needs an owner and has none (at start: the runs this process, or a dead peer, left
   * unfinished or unreported), then keeps doing so while the process lives: leases are renewed, runs of peers that
   * died are taken over, and decisions queued by other processes are applied. Resolves after the first pass.
   */
  async recover(): Promise<void> {
    await this.ownership.start();
    this.fires?.start();
  }

  /** A run taken over while planned: a workflow's fire is offered again (never planned), any other run re-planned. */
  private async replan(run: StoredRun, fence: number): Promise<void> {
    const fire = this.fires ? await this.deps.workflows?.fireOfRun(run.id) : null;
    if (fire && this.fires) return this.fires.offerFire(run, fire);
    return this.planner.replan(run, fence);
  }

  /** Resolves when every run this process is driving has finished and reported. */
  async idle(): Promise<void> {
    await this.drivers.idle();
  }

  /**
   * A deploy's SIGTERM: nothing new starts, steps in flight get up to `graceMs` to end and be stored, then every run
   * is handed back (its lease released, so another process takes it over at once and carries on where it stopped).
   * A step still in flight after the grace period counts as interrupted for whoever takes the run.
   */
  async handOver(graceMs: number): Promise<void> {
    const quiet = Promise.all(this.drivers.all().map((driver) => driver.quiet()));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    try {
      await Promise.race([quiet, grace]);
    } finally {
      clearTimeout(timer);
      await this.shutdown();
    }
  }

  /**
   * Stops timers and lets go of runs as a crash would (steps in flight resume by the restart rules), then hands
   * their leases back so the next process (or the next start of this one) takes them over at once.
   */
  async shutdown(): Promise<void> {
    this.stopAsking();
    await this.fires?.stop();
    this.delegation?.close();
    this.timers.clearAll();
    // A run being planned stays in `planning`: whoever takes it over next plans it again.
    this.planner.abandonAll();
    this.drivers.detachAll();
    await this.ownership.stop();
  }

  private mayDecide(run: StoredRun, actor: Actor): boolean {
    return mayDecide(run, actor, this.deps.settings.approvers ?? []);
  }

  private async handle(run: StoredRun, d: InboundDecision): Promise<string | null> {
    // A run waiting for review with a driver is one whose steps are held mid-run: edits go to the running plan.
    const reviewing = run.status === 'awaiting_review' && !this.drivers.has(run.id);
    // Held here while planning, even before its planner call began (a child run just handed out by a delegate step).
    const planning = run.status === 'planning' && (this.planner.isPlanning(run.id) || this.leases.has(run.id));
    const handlers: Record<DecisionAction, () => Promise<string | null>> = {
      approve: () => (reviewing ? this.approveReviewed(run, d) : this.review.approve(run, d)),
      cancel: () => (planning ? this.planner.cancel(run, d) : this.review.cancel(run, d)),
      amend: () => this.amend(run, d, d.text ?? ''),
      edit: () => (reviewing ? this.review.edit(run, d) : this.control.edit(run, d)),
      breakpoint: () => this.control.setBreakpoints(run, d),
      pause: () => this.control.control(run, { ...d, action: 'pause' }),
      resume: () => this.control.control(run, { ...d, action: 'resume' }),
      stop: () => (planning ? this.planner.cancel(run, d) : this.control.control(run, { ...d, action: 'stop' })),
      raise: () => raiseDepthBrake(this.deps, this.messages, run, d),
      widen: () => widenGrantsDecision(this.deps, this.messages, run, d),
    };
    return handlers[d.action]();
  }

  /** Approve at review: a workflow amendment's plan is saved as the workflow's next version; any other run starts. */
  private async approveReviewed(run: StoredRun, d: InboundDecision): Promise<string | null> {
    const amended = this.amendments ? await this.deps.workflows?.amendmentOf(run.id) : null;
    if (amended && this.amendments) return this.amendments.approve(run, d, amended);
    return this.review.approve(run, d);
  }

  private async amend(run: StoredRun, d: InboundDecision, text: string): Promise<string | null> {
    if (!text.trim()) return 'Say what to change, e.g. "amend also save the result to notes.txt".';
    if (run.status === 'awaiting_review' && !this.drivers.has(run.id)) return this.review.amend(run, d, text.trim());
    // A plan under its first review after steps started early, or with steps held mid-run, re-plans what has not
    // run, as a running one does.
    if (run.status === 'running' || run.status === 'paused' || run.status === 'awaiting_review')
      return this.control.amend(run, text.trim());
    return `This run is ${run.status.replace('_', ' ')}; it cannot be amended.`;
  }

  /** A reply in an active run's thread: status from the database, an amendment, or chatter left alone. */
  private async reply(run: StoredRun, m: InboundMessage): Promise<void> {
    // Anyone in the thread may ask how it goes (one cheap classifier call on the run's budget); only people who
    // may decide can change it: their amendment goes through `decision`, which refuses everyone else.
    const { store, clock } = this.deps;
    if (run.status === 'planning') {
      await this.messages.notice(run, 'info', 'Still planning this request; one moment.');
      return;
    }
    const context = { text: m.text, request: run.request, runStatus: run.status };
    const intent = await classifyReply(this.llmFor(run), context);
    await store.appendEvent(run.id, 'replyClassified', { intent, actor: m.actor.id }, clock());
    if (intent === 'unrelated' || intent === 'new') return m.leftAlone?.({ id: run.id, request: run.request });
    if (intent === 'status') {
      // From the database alone: whichever process got the reply answers the same as the one driving the run.
      const [attempts, events] = await Promise.all([
        store.listStepAttempts(run.id),
        store.listEvents(run.id, CONNECTION_WAIT_EVENTS),
      ]);
      const said = describeRun(run.status, run.plan, attempts);
      const workspace = this.deps.connections?.workspaceServers() ?? [];
      const waiting = connectionWaitSentence(run.requester, connectionWaits(events, attempts), workspace);
      await this.messages.notice(run, 'info', waiting ? [`${said}\n`, ...waiting] : said);
      return;
    }
    await this.decision({ runId: run.id, revision: run.revision, action: 'amend', actor: m.actor, text: m.text });
  }
}

/** A refusal as stored text: a sentence naming people is stored with their names. */
function asText(said: string | SentencePart[]): string {
  return typeof said === 'string' ? said : plainText(said);
}
