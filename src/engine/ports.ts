/**
 * What the engine needs from the outside world, shaped by what it calls and nothing wider.
 * Adapters in src/mcp, src/llm, src/store and src/bot implement these.
 */
import type { InterventionSignal } from './plan/breakpoint-suggestions.ts';
import type { Breakpoint } from './plan/breakpoints.ts';
import type { Result } from './result.ts';
import type {
  Actor,
  ReviewPreference,
  RiskLevel,
  DecisionAction,
  Json,
  RunStatus,
  StepError,
  StepStatus,
  ToolInfo,
  ToolOutput,
} from './types.ts';
import type { Plan } from './plan/plan-schema.ts';
import type { OutboundMessage, ReportStream } from './messages.ts';
import type { SpendLedger, SpendPeriod, SpendRequest, SpendScope, SpendWindows } from './spend.ts';

/** Outcome of one tool call: an MCP result (which may itself be `isError`) or a failure to get one. */
export type ToolCallOutcome = Result<ToolOutput, StepError>;

/**
 * Whether a person's own session can run a tool of a server that connects per person: `ready` with the tool's
 * definition as that session lists it (undefined when it does not list the tool), `connect` when the person has no
 * working connection (never made, or refused and not refreshed), `failed` when the server cannot be reached.
 */
export type PersonalAccess =
  | { kind: 'ready'; tool: ToolInfo | undefined }
  | { kind: 'connect'; server: string }
  | { kind: 'failed'; error: StepError };

/** Calls MCP tools by qualified name. Never throws: failures come back as outcomes. */
export interface ToolRunner {
  /** Every tool currently offered by connected servers, overrides applied. */
  listTools(): ToolInfo[];
  /**
   * Reads the tool's current definition from its server again, so `listTools` reflects it (if the runner can).
   * Never throws; gives up (keeping the definition it has) when `signal` aborts or `timeoutMs` passes.
   */
  refreshTool?(name: string, options: { signal: AbortSignal; timeoutMs: number }): Promise<void>;
  /**
   * For a tool whose server connects per person (`policy.perPerson`): opens (or finds) `person`'s own session and
   * reads the tool's definition there, right before a call of theirs. Never throws.
   */
  prepareAs?(name: string, person: Actor, options: { signal: AbortSignal; timeoutMs: number }): Promise<PersonalAccess>;
  /**
   * For a server that connects per person: opens (or finds) `person`'s own session, right before a resource read of
   * theirs (`ready` then names no tool). `ready` for any other server. Never throws.
   */
  openAs?(server: string, person: Actor, options: { signal: AbortSignal; timeoutMs: number }): Promise<PersonalAccess>;
  /**
   * `runId` and `stepId`: the run and step the call is made for (Steward's built-in tools read that run's
   * conversation, or delegate for that step; servers never see them). `as`: whose connection a tool of a server that
   * connects per person runs under (the run's requester); such a call without it is refused. `onProgress`: called
   * with each progress report the server sends while the call is in flight (never after it ended); it must not throw.
   */
  callTool(name: string, args: Record<string, Json>, options: ToolCallOptions): Promise<ToolCallOutcome>;
  /** The servers that offer resources (MCP `resources/list`, `resources/templates/list`), each capped for a prompt. */
  listResources?(): ResourceListing[];
  /**
   * Reads one resource by URI from a server that offers resources (MCP `resources/read`), its contents as embedded
   * resource blocks (text and blobs kept, bounded as tool outputs are). The signal cancels it as it cancels a call.
   */
  readResource?(server: string, uri: string, options: ToolCallOptions): Promise<ToolCallOutcome>;
}

/** One prompt an MCP server offers (MCP `prompts/list`); every word of it is the server's. */
export interface ServerPrompt {
  server: string;
  name: string;
  description?: string;
  arguments: { name: string; description?: string; required: boolean }[];
}

/** MCP servers' prompts, offered to people as starting points (`/steward prompts`). Never throws. */
export interface ServerPrompts {
  /**
   * The prompts of the servers that offer them now, for `person` (a server that connects per person is asked on their
   * own session; one they have not connected is named in `unconnected`); `problems`: a sentence per server that failed.
   */
  listPrompts(
    person: Actor,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<{ prompts: ServerPrompt[]; unconnected: string[]; problems: string[] }>;
  /** One prompt filled in (MCP `prompts/get`): its messages' text parts, in order; or why not, in a sentence. */
  getPrompt(
    server: string,
    name: string,
    args: Record<string, string>,
    person: Actor,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<Result<string[], string>>;
}

/** What a server said about its resources: a few of them and of its URI templates (names are the server's words). */
export interface ResourceListing {
  server: string;
  resources: { uri: string; name: string; mimeType?: string }[];
  templates: { uriTemplate: string; name: string }[];
  /** It listed more resources or templates than are kept here. */
  more: boolean;
  /** Open-world (mcp.json's `openWorld`, or a tool of it annotated so): its reads are scored as open-world. */
  openWorld?: true;
  /** The operator's risk for the server's tools (mcp.json `risk`), which its reads take too. */
  risk?: RiskLevel;
  /** It connects per person: a read runs under the requester's own session, never anyone else's. */
  perPerson?: true;
  /** Its one connection is the workspace's, made by an approver: a read runs as the workspace. */
  asWorkspace?: true;
}

/** How a tool call is made: see `ToolRunner.callTool`. */
export interface ToolCallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  runId?: string;
  stepId?: string;
  as?: Actor;
  onProgress?: (progress: ToolProgress) => void;
}

/**
 * What a server said about a call still in flight (MCP `notifications/progress`): how far it is, out of `total` when
 * it knows, and a message in its own words (untrusted text, as any tool output).
 */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * Where a person stands with a server that connects per person: `connected` (tokens that work, or that refresh),
 * `expired` (the access token's time is up and there is no refresh token: connect again), `none`.
 */
export type ConnectionState = 'connected' | 'expired' | 'none';

/** A person's connection to a server that connects per person, as a list shows it. */
export interface PersonConnection {
  server: string;
  state: ConnectionState;
  /** When the person connected (or their tokens were last refreshed); null when they have not connected. */
  connectedAt: Date | null;
  /**
   * A connection made from a browser that showed no dashboard session of this person waits for them to confirm it in
   * chat (it is used for nothing until they do).
   */
  pending: boolean;
  /** The server's one connection, the workspace's, which an approver makes (whoever asks, their steps use it). */
  workspace?: true;
}

/**
 * People's own connections to servers that connect per person (`"auth": "person"`): whether one is there, a private
 * link that makes one, the list, and disconnecting. Absent when no server connects per person.
 */
export interface PersonConnections {
  /**
   * The servers connected from a browser: each person's own connection, or (`workspaceServers`) the workspace's one,
   * which only an approver makes or removes. For those, the methods below act on the workspace's connection, with the
   * approver as the person who connects (and is asked to confirm it).
   */
  servers(): string[];
  /** The servers whose one connection, the workspace's, an approver makes. */
  workspaceServers(): string[];
  /**
   * When the person's connection to the server was made (or its tokens last refreshed); null when they hold none.
   * The server may still refuse it: a call finds out.
   */
  connectedAt(server: string, person: Actor): Promise<Date | null>;
  /**
   * A private, single-use link that connects `person` to `server` (for `runId`, which waits on it), valid for a short
   * while from `at`, sent in `conversation` (where they are asked to confirm a connection made with it, if need be);
   * null when Steward has no web origin to send them to (the dashboard is off).
   */
  connectLink(
    server: string,
    person: Actor,
    runId: string | null,
    at: Date,
    conversation?: Conversation,
  ): Promise<string | null>;
  /** Each server that connects per person, with where this person stands with it at `at`. */
  list(person: Actor, at: Date): Promise<PersonConnection[]>;
  /**
   * Forgets the person's connection to the server (their session closed, their tokens deleted), revoking it at the
   * authorization server first when that offers revocation (RFC 7009). `known`: there was one.
   */
  disconnect(server: string, person: Actor): Promise<{ known: boolean; revoked: boolean }>;
  /**
   * The person's answer, in chat, about their connection to `server` that waits for them (the one made through
   * `link`, when named): `use` makes it their connection (and the run that waited on it goes on), `refuse` revokes
   * and forgets it. Null when nothing of theirs waits (answered before, or replaced by a newer one).
   */
  confirm(
    server: string,
    person: Actor,
    answer: 'use' | 'refuse',
    at: Date,
    link?: string,
  ): Promise<{ used: true } | { used: false; revoked: boolean } | null>;
  /**
   * Who asks a person to confirm a connection made from a browser that showed no dashboard session of theirs (the
   * engine, which can reach them in chat); returns how to stop. The first still registered is asked.
   */
  whenPending(ask: (pending: PendingConnection) => Promise<void>): () => void;
  /**
   * Someone connected, maybe through another process: a server whose tools this process has not seen yet lists them
   * (the planner sees a server once anyone has connected it). Never throws.
   */
  heard(): Promise<void>;
  /**
   * Revokes and forgets the connections that waited too long at `at` for their person to confirm them (any process
   * may call it; each is forgotten once, and returned to that caller only, to tell its person). Never throws.
   */
  expirePending(at: Date): Promise<PendingConnection[]>;
}

/** A connection that waits for its person to confirm it in chat, and where to ask them. */
export interface PendingConnection {
  server: string;
  person: Actor;
  /** The link it was made through: a press names it, so it decides this connection only. */
  link: string;
  /** The run that waits on it, if any. */
  runId: string | null;
  /** Where the link was sent (the run's thread, or where they asked for it); absent: the run's, or nowhere known. */
  conversation?: Conversation;
}

/** The role a model call plays; each role can be routed to a different model. */
export type ModelRole = 'planner' | 'classifier' | 'synthesizer' | 'llm_step' | 'butler';

/**
 * Token usage as reported by the provider. `inputTokens` counts every prompt token the model read, from its cache or
 * not (so budgets count what was sent); `cachedInputTokens`, when the provider read some from its prompt cache, says
 * how many of them (billed lower).
 */
export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
}

/**
 * Model calls summed: `cachedInputTokens` are the part of `inputTokens` read from the provider's prompt cache;
 * `costMicroUsd` is null when any of the calls had no price (a partial sum would read as the whole cost).
 */
export interface LlmUsageCount {
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  costMicroUsd: number | null;
}

/** Model usage summed over a run, in total and per role. */
export interface LlmUsageTotals extends LlmUsageCount {
  byRole: Partial<Record<ModelRole, LlmUsageCount>>;
}

/**
 * An image shown to a model with a user message: base64 `data` of a type both providers read (PNG, JPEG, GIF, WebP).
 * `label` names it in words (`image 1, from step img: image/png, 2.9 kB`) and is sent just before it.
 */
export interface LlmImage {
  mimeType: string;
  data: string;
  label: string;
}

/**
 * One chat message given to a model: text, an assistant turn that called tools, or one tool call's result. A user
 * message's `images` reach only a model the catalog marks `seesImages`; for any other the router drops them, so their
 * text must already describe them in words.
 */
export type LlmMessage =
  | { role: 'user' | 'assistant'; content: string; images?: readonly LlmImage[] }
  | { role: 'assistant'; content: string; toolCalls: LlmToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A tool offered to the model, under a provider-safe name (`^[a-zA-Z0-9_-]{1,64}$`; see plan/quick-tools.ts). */
export interface LlmToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A tool call the model asked for; `name` is as the model wrote it, to be checked against the names offered. */
export interface LlmToolCall {
  id: string;
  name: string;
  args: Record<string, Json>;
}

/**
 * A request to a model. Tools are sent only with the `butler` role (the metered client refuses them on any other), and
 * only read-only closed-world ones; every other role gets none: the planner writes JSON, code runs it.
 */
export interface LlmRequest {
  role: ModelRole;
  system: string;
  messages: LlmMessage[];
  /** Tools the model may call (`butler` only); its calls come back in `LlmResponse.toolCalls`, never run by the client. */
  tools?: LlmToolSpec[];
  /** Ask for JSON matching this schema, using the provider's structured-output mode where it has one. */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  /** The most tokens the answer may take; the metered client lowers it to the role's setting and the budgets left. */
  maxOutputTokens?: number;
  signal?: AbortSignal;
  /**
   * When present the answer is streamed: called with each piece of text as it arrives, in order, so that the pieces
   * joined are the answer's raw text (before any JSON fence is unwrapped). `complete` still resolves to the whole
   * response. Never called after `complete` settles; a call that fails may have delivered some pieces first.
   */
  onText?: (delta: string) => void;
  /**
   * Told once the call is handed to the provider's client, after the metered client's reservation: work meant to go
   * beside the call (the planner asked beside the front desk) starts then, not while the call still waits its turn.
   */
  onSent?: () => void;
  /**
   * The catalog name of the model to use instead of the one configured for `role` (an Assistant's own choice); the
   * router refuses a name the catalog does not hold, or a model lacking what the role needs.
   */
  model?: string;
}

/** A model's answer. */
export interface LlmResponse {
  text: string;
  model: string;
  usage: LlmUsage;
  /** True when the model stopped at its output cap (`maxOutputTokens`), so the text is incomplete. */
  truncated?: boolean;
  /** The catalog name of the model that answered, when it has one (so its prices are found). */
  modelName?: string;
  /** Tool calls the model asked for (only when the request offered tools); the text may then be empty. */
  toolCalls?: LlmToolCall[];
}

/** Calls a language model. Throws `StewardError` with code `llm_failed` when no answer can be had. */
export interface LlmClient {
  complete(request: LlmRequest): Promise<LlmResponse>;
}

/** Where a run's messages go: a channel and a conversation (thread) within it. */
export interface Conversation {
  channel: string;
  /** Platform-specific thread key, opaque to the engine (e.g. `C123:1700000000.000100`). */
  key: string;
}

/** Sends platform-neutral messages to people. Adapters render them. */
export interface Notifier {
  send(conversation: Conversation, message: OutboundMessage): Promise<void>;
  /**
   * Where the channel can show a report while it is written: opens one for the run (nothing is shown before the
   * first `append`). Absent, or null for this conversation: the report is only sent whole, with `send`.
   */
  openReport?(
    conversation: Conversation,
    report: { runId: string; status: RunStatus; requester: Actor },
  ): ReportStream | null;
}

/**
 * Keeps the latest progress a server reported on a running attempt (for the dashboard), at the pace progress is shown.
 * Nothing is written once the attempt ended, so a report that arrives late never shows on a finished step.
 */
export interface StepProgressLog {
  recordProgress(a: {
    runId: string;
    stepId: string;
    attempt: number;
    progress: ToolProgress;
    at: Date;
  }): Promise<void>;
}

/** A stored run, enough to rebuild its state after a restart. */
export interface StoredRun {
  id: string;
  status: RunStatus;
  conversation: Conversation;
  requester: Actor;
  request: string;
  revision: number;
  amendmentRounds: number;
  plan: Plan | null;
  /** The highest risk a person approved for this run (null before any approval). */
  approvedRisk: RiskLevel | null;
  /** Steps the run holds at (before they start or after they end). */
  breakpoints: Breakpoint[];
  /** When the last review started on this run runs out (null when none was awaited). */
  reviewDueAt?: Date | null;
  /** The Assistant the run belongs to (`ask <name>: …`), by name; absent or null for Steward's own runs. */
  assistant?: string | null;
  /** The route the run took at the front door, once decided (see `RunRoute`). */
  route?: RunRoute;
  /** The run whose `delegate` step this run carries out (absent: a person started it). */
  parentRunId?: string;
  createdAt: Date;
  /**
   * The requester's review preference as read with the run (`RunRecords.getRun` reads both in one statement; null:
   * none set). Absent when the read that produced this run did not read it: then ask `getReviewPreference`.
   */
  reviewPreference?: ReviewPreference | null;
}

/** A model call's settlement (`Ledgers.settleTokens`): real usage less what was reserved, and the usage itself. */
export interface TokenSettlement {
  runId: string;
  actor: Actor;
  day: string;
  delta: number;
  usage: {
    role: ModelRole;
    model: string;
    inputTokens: number;
    outputTokens: number;
    cachedInputTokens?: number;
    /** What the call cost in micro-dollars; null or absent when unknown. */
    costMicroUsd?: number | null;
    /** What the call counts against spend caps: its cost, or its tokens at the default price. */
    chargedMicroUsd?: number;
    at: Date;
  } | null;
  /** The spend totals move by `delta` micro-dollars (the charge less what was reserved) in the reserved windows. */
  spend?: { delta: number; windows: SpendWindows };
}

/** A finished run that still owes its report, with the report if it was written but not sent. */
export interface UnreportedRun extends StoredRun {
  report: string | null;
}

/** One stored attempt at a step. */
export interface StoredStepAttempt {
  stepId: string;
  attempt: number;
  revision: number;
  status: StepStatus;
  args: Json;
  output: Json | null;
  error: StepError | null;
  startedAt: Date;
  endedAt: Date | null;
  /** The latest progress its server reported while it ran (null: none). */
  progress?: ToolProgress | null;
}

/** A run this process took over, with the fence its writes now carry. */
export interface ClaimedRun {
  run: UnreportedRun;
  fence: number;
}

/**
 * Which process drives a run: a lease held by one process at a time, renewed while it lives, judged by the
 * database's clock. Every claim raises the run's fence; writes given a fence are refused (`StewardError` with code
 * `fenced`) once another process claimed the run, so a process that lost a run can neither start nor end a step.
 */
export interface RunOwnership {
  /** Takes the lease of a run nobody holds (or whose lease lapsed); the new fence, or null when another holds it. */
  claimRun(runId: string, ttlMs: number): Promise<number | null>;
  /**
   * Extends the leases of these runs where this process still holds them (lapsed or not: nobody took them); returns
   * those. A run this process forgot is not renewed, so it lapses and is taken over rather than held forever.
   */
  renewLeases(runIds: readonly string[], ttlMs: number): Promise<string[]>;
  /** Lets go of the run's lease, so another process may take it at once. */
  releaseRun(runId: string): Promise<void>;
  /**
   * Claims up to `limit` runs that need an owner and have none (a holder that died or let its lease lapse): runs
   * not finished, and finished runs still owing their report. Oldest first. A lapsed lease of this very process
   * counts too, unless the run is in `held` (this process drives it and only could not renew for a while).
   */
  claimOrphanedRuns(ttlMs: number, limit: number, held: readonly string[]): Promise<ClaimedRun[]>;
  /** Queues a decision for the process that drives the run, and wakes it. */
  forwardDecision(runId: string, decision: Json): Promise<void>;
  /**
   * Takes the decisions queued for a run this process holds, oldest first; each is taken once. A Pause or Stop taken
   * still holds the run's step starts (`recordSteps` with `unlessHeld`) until `settleDecisions(op)` says it was
   * applied, or for a minute (its taker may have died).
   */
  takeDecisions(runId: string): Promise<{ op: string; decisions: Json[] }>;
  /** The decisions taken by `op` were applied (or refused): they hold nothing any more, and are forgotten. */
  settleDecisions(runId: string, op: string): Promise<void>;
  /** Runs this process holds with decisions waiting. */
  runsWithDecisions(): Promise<string[]>;
  /** Throws `fenced` unless this process holds the run under `fence` (right before a message that must go once). */
  assertHeld(runId: string, fence: number): Promise<void>;
}

/**
 * What a process learns from other processes at once: a decision queued for a run, a run let go, or that signals
 * may have been missed (the connection that listens was lost for a while): then everything is looked at again.
 */
export type RunSignal =
  | { kind: 'decision' | 'released'; runId: string }
  /** Someone connected a server that connects per person (for the run that waited on it, if any). */
  | { kind: 'connected'; runId: string }
  | { kind: 'missed' };

/** Delivers run signals; `listen` resolves once listening and returns how to stop. */
export interface RunSignals {
  listen(onSignal: (signal: RunSignal) => void): Promise<() => Promise<void>>;
}

/**
 * An earlier turn of a conversation: what the person asked and what Steward answered in the end (the report or the
 * direct answer), with the steps whose outputs are kept, by size. Never the outputs themselves: they stay in the
 * database, and a plan or a quick answer reads one on demand with the built-in `steward.step_output` tool.
 */
export interface EarlierTurn {
  runId: string;
  request: string;
  status: RunStatus;
  /** The report or answer; null while the run has none. */
  reply: string | null;
  /** Steps that succeeded, with their stored output's size in bytes (as JSON text). */
  outputs: { stepId: string; bytes: number }[];
  createdAt: Date;
}

/** An earlier step's stored output, found from the run that asks (in its own conversation only). */
export interface EarlierOutput {
  runId: string;
  stepId: string;
  output: Json;
}

/** A run's own records: its row and status, plan revisions, route, event log, review deadline, pins and report. */
export interface RunRecords {
  /**
   * Stores a new run with its `requested` event; with `leaseMs`, this process holds its lease from the start. With
   * `deliveryId`, the platform event that asked for it is claimed in the same transaction: false (nothing stored)
   * when that event was claimed before, so a kill leaves both the claim and the run, or neither.
   */
  createRun(run: {
    id: string;
    conversation: Conversation;
    requester: Actor;
    request: string;
    at: Date;
    leaseMs?: number;
    /** The Assistant the run belongs to, by name. */
    assistant?: string;
    /** The run whose `delegate` step this run carries out. */
    parentRunId?: string;
    /** The platform event (a mention) this run answers, claimed with it. */
    deliveryId?: string;
    /** The chat channel the conversation is in, when the conversation is a thread of it (for spend caps). */
    place?: string;
  }): Promise<boolean>;
  /**
   * The run with the plan of its current revision, and its requester's review preference (`reviewPreference`) when
   * the store reads both in one statement; null when there is no such run.
   */
  getRun(runId: string): Promise<StoredRun | null>;
  /** The newest run of a conversation that is not finished yet (planning, waiting, running, paused, stopping). */
  findActiveRun(conversation: Conversation): Promise<StoredRun | null>;
  /**
   * `createRun` for a message that may be a reply, unless the conversation has an active run: then that run (the one
   * `findActiveRun` returns) and nothing is created. One statement (with a mention, after its claim, in the same
   * transaction: the mention is claimed either way). `created` false and no `active`: the mention was handled before.
   * With `earlierTurns`, a run created comes with up to that many of its conversation's earlier turns, read by the
   * same statement (as `earlierTurns` would read them for it). A run created comes back as stored (`run`, with its
   * requester's review preference), unless this was a repeat of the write (its answer lost).
   */
  createRunUnlessActive(
    run: Parameters<RunRecords['createRun']>[0],
    options?: { earlierTurns?: number },
  ): Promise<{ created: boolean; active?: StoredRun; run?: StoredRun; earlierTurns?: EarlierTurn[] }>;
  /**
   * Stores a new plan revision (never overwriting an earlier one) and makes it the run's current revision; the run as
   * that write left it (its requester's review preference read with it), so what follows needs no read of its own.
   * `settle`: the settlement of the planner call that wrote the plan, carried by the same statement (once per `op`,
   * whatever becomes of the revision).
   */
  saveRevision(
    runId: string,
    revision: number,
    plan: Plan,
    reason: string,
    at: Date,
    settle?: TokenSettlement & { op: string },
  ): Promise<StoredRun>;
  /**
   * Moves a run from one of `from` to `to`, optionally only if its current revision is `revision`, in one statement
   * with what goes with the move: the risk a person approved, its tools' pins, the note that the run owes its report
   * (set even when the move loses its race), an event appended. Returns false (and changes nothing else) when the run is not in
   * such a state: the loser of a race. With `fence`, throws `fenced` when this process no longer holds the run.
   */
  transition(
    runId: string,
    from: readonly RunStatus[],
    to: RunStatus,
    options?: {
      revision?: number;
      at?: Date;
      fence?: number;
      approvedRisk?: RiskLevel;
      pins?: readonly PinnedTool[];
      reportDue?: boolean;
      event?: { type: string; payload: Json };
      /** An approver approved the run past the spend caps (kept for the rest of the run). */
      spendExempt?: boolean;
      /** The run's reply, set with the move only when it applies (as `setReport`): an answer given without a plan. */
      report?: string;
    },
  ): Promise<boolean>;
  /** Notes the route the run took at the front door (see `RunRoute`); the last one noted stands. */
  setRoute(runId: string, route: RunRoute, at: Date): Promise<void>;
  /** Appends to the run's event log (history that can be replayed). */
  appendEvent(runId: string, type: string, payload: Json, at: Date): Promise<void>;
  /** Notes when the review now awaited runs out, so the next holder of the run keeps the deadline. */
  setReviewDue(runId: string, dueAt: Date): Promise<void>;
  /** Pins tool definitions for a run (replacing a tool's earlier pin). */
  pinTools(runId: string, pins: readonly PinnedTool[], at: Date): Promise<void>;
  /** The tool definitions pinned for the run. */
  listPins(runId: string): Promise<PinnedTool[]>;
  /** Sets the run's reply (an answer with no plan, a saved amendment); a run's final report goes by `storeReport`. */
  setReport(runId: string, report: string, at: Date): Promise<void>;
  /**
   * Notes that the run owes its person a report, before it ends; `markReportSent` clears the note. A run that ended
   * with the note still set lost its report to a restart: `claimOrphanedRuns` finds it.
   */
  markReportDue(runId: string, at: Date): Promise<void>;
  /**
   * Stores the run's report with its `reported` event, unless a report is stored already (a report is never
   * rewritten). Returns the report that stands: this one, or the one stored before. With `fence`, then throws
   * `fenced` unless this process still holds the run (as `assertHeld`, in the same statement). With `settle`, the
   * same statement also settles the model call that wrote the report (as `settleTokens`, once per `settle.op`: a
   * repeat of this write under the same op settles nothing twice), whether or not this report is the one that stands
   * and whoever holds the run.
   */
  storeReport(
    runId: string,
    report: string,
    status: RunStatus,
    at: Date,
    fence?: number,
    settle?: TokenSettlement & { op: string },
  ): Promise<string>;
  /** The run's report was sent: it owes nothing any more, and its lease is let go. */
  markReportSent(runId: string, at: Date): Promise<void>;
}

/** A run's step attempts: each start committed before its call is sent, each end recorded once. */
export interface StepLog {
  /**
   * Commits a step's intent before its call is sent, with its `stepStarted` event. With `fence`, only while this
   * process holds the run under that fence (else `fenced`): an attempt another holder started is never taken over.
   */
  recordStepStarted(a: {
    runId: string;
    stepId: string;
    attempt: number;
    revision: number;
    args: Json;
    at: Date;
    fence?: number;
  }): Promise<void>;
  /**
   * Records how an attempt ended, with its `stepEnded` event; the first recorded end of an attempt stands. With
   * `fence`, only while this process holds the run under that fence (else `fenced`).
   */
  recordStepEnded(a: Omit<StepEnd, 'unstarted'> & { fence?: number; runId: string }): Promise<void>;
  /**
   * Records, in one statement, how some attempts ended and which attempts start next, each with its event: a
   * step's end and the starts of the steps that waited for it commit together. The same rules as `recordStepStarted`
   * and `recordStepEnded` apply to each (repeats change nothing; with `fence`, only while this process holds the
   * run, else `fenced`, and nothing is written). With `unlessHeld`, no start is written while the run is paused or
   * stopping, or while a Pause or Stop queued for it by another process waits (`startsHeld`); the ends are.
   */
  recordSteps(w: StepAttemptWrite): Promise<StepsRecorded>;
  /** Every attempt at every step of the run, in the order they were stored. */
  listStepAttempts(runId: string): Promise<StoredStepAttempt[]>;
}

/**
 * What people decide about runs and how they like to be asked: decisions, amendment rounds, approved risk,
 * breakpoints, review preferences, and suggested breakpoints with the interventions they are drawn from.
 */
export interface RunSteering {
  /** Records a person's decision on a revision of the run, accepted or not, with its note (a retry adds no row). */
  recordDecision(decision: {
    runId: string;
    revision: number;
    actor: Actor;
    action: DecisionAction;
    accepted: boolean;
    note?: string;
    at: Date;
  }): Promise<void>;
  /** Atomically takes one amendment round if fewer than `cap` were used; returns the new count or null past the cap. */
  takeAmendmentRound(runId: string, cap: number): Promise<number | null>;
  /** Notes the highest risk a person approved for the run. */
  setApprovedRisk(runId: string, risk: RiskLevel, at: Date): Promise<void>;
  /** Replaces the run's breakpoints. */
  setBreakpoints(runId: string, breakpoints: readonly Breakpoint[], at: Date): Promise<void>;
  /** Which plans this person reviews before they run (`all`, `risky`, `none`); null when they never chose. */
  getReviewPreference(actor: Actor): Promise<ReviewPreference | null>;
  /** Sets which plans this person reviews before they run. */
  setReviewPreference(actor: Actor, preference: ReviewPreference, at: Date): Promise<void>;
  /** Whether this person's review cards offer suggested breakpoints (on unless they turned them off). */
  getBreakpointSuggestions(actor: Actor): Promise<boolean>;
  /** Turns this person's suggested breakpoints on or off. */
  setBreakpointSuggestions(actor: Actor, on: boolean, at: Date): Promise<void>;
  /**
   * Per tool: the latest time since `since` this person paused, stopped or edited a run while a step of it was running
   * or next, and whether a run of theirs using it completed after that (the input of `suggestBreakpoints`).
   */
  interventionSignals(actor: Actor, tools: string[], since: Date): Promise<Record<string, InterventionSignal>>;
}

/**
 * The ledgers the database judges and keeps: token budgets reserved and settled, model calls recorded, platform
 * events claimed once; and the pruning of the notes among them that only guard against repeats.
 */
export interface Ledgers {
  /** Records one model call's tokens and cost, for a run or for none; a retry adds no second row. */
  recordLlmUsage(u: {
    runId: string | null;
    role: ModelRole;
    model: string;
    inputTokens: number;
    outputTokens: number;
    /** Of `inputTokens`, those read from the provider's prompt cache (0 when absent). */
    cachedInputTokens?: number;
    /** What the call cost in micro-dollars; null or absent when the model has no price (unknown, not zero). */
    costMicroUsd?: number | null;
    at: Date;
  }): Promise<void>;
  /**
   * Reserves a call's prompt and the largest output cap from `minOutput` up to `output` that the run's and the
   * person's daily budget both still hold, from both or neither, in one statement (the database judges concurrent
   * calls); refused, naming the budget, when not even `minOutput` fits. With `spend`, the same statement reserves
   * the prompt and the cap at `spend.price` from the spend totals of the workspace, the run's channel and `actor`
   * (day and month), and the cap is also the largest that every spend cap set still holds (or, for a run an
   * approver exempted, that its own spend is below; its token budget still bounds it).
   */
  reserveTokens(
    runId: string,
    actor: Actor,
    request: TokenRequest,
    caps: TokenBudgets,
    day: string,
    spend?: SpendRequest,
  ): Promise<GrantedCap>;
  /**
   * Settles a call once, in one statement: both counters move by `delta` (real usage less what was reserved), and its
   * usage is recorded (null when the call failed and only the reservation is given back).
   */
  settleTokens(s: TokenSettlement): Promise<void>;
  /** Records a platform event id as handled; false when it already was (the database decides, across restarts). */
  claimInbound(key: string, at: Date): Promise<boolean>;
  /**
   * Forgets the notes that only guard against repeats (token ledger operations, handled platform event ids, queued
   * decisions taken or left on ended runs) older than `olderThanMs`, by the database's clock; the counts removed.
   */
  pruneLedgers(olderThanMs: number): Promise<PrunedLedgers>;
}

/** One entry of a run's event log; `id` grows with every append, across all runs. */
export interface RunEvent {
  id: number;
  type: string;
  payload: Json;
  createdAt: Date;
}

/**
 * What runs did, read back: a run's revisions, decisions and model usage, a person's runs, and a conversation's
 * earlier turns and step outputs.
 */
export interface RunHistory {
  /** Plan revisions of a run, oldest first. */
  listRevisions(runId: string): Promise<StoredRevision[]>;
  /** Decisions on a run, oldest first. */
  listDecisions(runId: string): Promise<StoredDecision[]>;
  /** Calls, tokens and cost a run's model calls used, in total and per role. */
  llmUsageForRun(runId: string): Promise<LlmUsageTotals>;
  /** The run's event log in append order; with `types`, only the events of those types. */
  listEvents(runId: string, types?: readonly string[]): Promise<RunEvent[]>;
  /** This person's runs (only those not finished, with `activeOnly`), newest first, at most `limit`. */
  listRunsOf(actor: Actor, options: { activeOnly: boolean; limit: number }): Promise<StoredRun[]>;
  /** The turns of this run's conversation before it, newest first, at most `limit`. */
  earlierTurns(runId: string, limit: number): Promise<EarlierTurn[]>;
  /**
   * The output of `stepId` in the `turn`-th run before `runId` in the same conversation (1: the one just before),
   * its latest successful attempt; null when there is no such run or step output.
   */
  earlierOutput(runId: string, turn: number, stepId: string): Promise<EarlierOutput | null>;
}

/**
 * Durable state of runs, every role in one (as `PgRunStore` implements it); each consumer takes only the roles it
 * uses. The database is the judge of every limit and every state change.
 */
export interface RunStore
  extends RunRecords, StepLog, StepProgressLog, RunSteering, RunOwnership, Ledgers, RunHistory, SpendLedger {}

/** How a request was answered: by the planner without tools, by the quick read-only loop, or with a plan. */
export type RunRoute = 'answer' | 'quick' | 'plan';

/** A step attempt's start: its intent, committed before its call is sent. */
export interface StepStart {
  stepId: string;
  attempt: number;
  revision: number;
  args: Json;
  at: Date;
}

/** How a step attempt ended; `unstarted` for one that never started (skipped, or stopped before it was sent). */
export interface StepEnd {
  stepId: string;
  attempt: number;
  status: StepStatus;
  output: Json | null;
  error: StepError | null;
  at: Date;
  durationMs: number;
  unstarted?: { revision: number };
}

/** Ends and starts of a run's step attempts, written together (see `StepLog.recordSteps`). */
export interface StepAttemptWrite {
  runId: string;
  fence?: number;
  ended: StepEnd[];
  started: StepStart[];
  /** The starts are not written while a person's Pause or Stop is stored or queued for the run. */
  unlessHeld?: boolean;
  /**
   * The plan revision the starts belong to, saved by the same statement and made the run's current one (as
   * `saveRevision`: never overwriting another; a second save of it is refused unless it is this write, repeated).
   * The starts are written only with it.
   */
  revision?: { revision: number; plan: Plan; reason: string; at: Date };
  /**
   * The run's end, written with these ends (the last ones of the run): the move to `status` from one of `from`, its
   * `event`, and the note that the report is owed (set even when the move does not apply: whoever ended the run
   * reports it). Not with `revision`.
   */
  endRun?: RunEndWrite;
}

/** A run's end as its driver's last step write carries it (see `StepAttemptWrite.endRun`). */
export interface RunEndWrite {
  status: RunStatus;
  from: readonly RunStatus[];
  event?: { type: string; payload: Json };
  at: Date;
}

/** What `StepLog.recordSteps` wrote: whether it left the starts out because the run is held by a Pause or Stop. */
export interface StepsRecorded {
  startsHeld: boolean;
  /** With `endRun`: whether the run moved to its end by this write (not when it was in another status already). */
  runEnded?: boolean;
}

/** A tool definition as approved: compared before each step of the run. */
export interface PinnedTool {
  tool: string;
  fingerprint: string;
  definition: Json;
}

/** What a model call asks of the budgets: its prompt, the output cap it wants, and the least cap worth calling with. */
export interface TokenRequest {
  prompt: number;
  output: number;
  minOutput: number;
}

/** A spend cap by scope and period: `channel-day`, `workspace-month`, … */
export type SpendLimit = `${SpendScope}-${SpendPeriod}`;

/**
 * A cap granted by the budgets (`limitedBy` names the one that lowered it) with the micro-dollars the reservation
 * took from the spend totals, or the budget or spend cap that refused the call (with what was left of that cap).
 */
export type GrantedCap =
  | { ok: true; cap: number; limitedBy?: 'run' | 'user' | SpendLimit; spendMicroUsd?: number }
  | { ok: false; refusedBy: 'run' | 'user' | SpendLimit; leftMicroUsd?: number };

/** Token budgets: per run, and per person per day (UTC). */
export interface TokenBudgets {
  perRun: number;
  perUserPerDay: number;
}

/** One immutable plan revision. */
export interface StoredRevision {
  revision: number;
  plan: Plan;
  reason: string;
  createdAt: Date;
}

/** How many rows `Ledgers.pruneLedgers` removed, per table. */
export interface PrunedLedgers {
  tokenOperations: number;
  inboundEvents: number;
  runCommands: number;
}

/** One recorded decision. */
export interface StoredDecision {
  revision: number;
  actor: Actor;
  action: DecisionAction;
  accepted: boolean;
  note: string | null;
  createdAt: Date;
}

/** Issues sign-in links to the web dashboard (absent when the dashboard is off). */
export interface DashboardLinks {
  /**
   * A new single-use link signing in this person, valid for a short while from `at`, with the roles named as
   * approvers they hold as they ask (a platform tells roles only with an action, so the link carries them).
   */
  issue(actor: Actor, at: Date, access?: { approverRoles: readonly string[] }): Promise<string>;
}
