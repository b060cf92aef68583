/**
 * Platform-neutral messages the engine sends to people. Each channel adapter renders them
 * (console text, Block Kit, Discord components) with a pure function.
 */
import type { PlanEstimate } from './estimate-history.ts';
import type { SpendOutlook } from './spend.ts';
import type { SuggestedBreakpoint } from './plan/breakpoint-suggestions.ts';
import type { QuestionField, QuestionOutcome } from './server-questions.ts';
import type { Actor, DecisionAction, RiskLevel, RunStatus, StepStatus } from './types.ts';

/** One row of a plan card. */
export interface PlanCardStep {
  number: number;
  id: string;
  kind: 'tool' | 'llm' | 'condition';
  /** Tool name, `llm`, or the condition's expression. */
  target: string;
  /** Arguments as short JSON, already cut to a readable length. */
  argsPreview: string;
  dependsOn: string[];
  description: string;
  optional: boolean;
  risk: RiskLevel;
  /** Where the step stands, on a card shown after the run started (absent: not started yet). */
  status?: StepStatus;
  /** Why a step failed or was skipped, in words ('' otherwise). */
  detail?: string;
  /**
   * Whose own account the step runs with, on a server that connects per person: the run's requester (a workflow
   * fire's owner), never an approver. Absent for a step that runs with the server's one connection.
   */
  as?: Actor;
  /** The step runs with the workspace's connection to its server, which an approver made (whoever asked). */
  asWorkspace?: true;
}

/** The plan as shown for review (or as a notice when it starts at once). */
export interface PlanCard {
  kind: 'plan';
  runId: string;
  revision: number;
  summary: string;
  steps: PlanCardStep[];
  layers: string[][];
  risk: RiskLevel;
  risks: string[];
  /** True when the plan waits for a person; false when it starts at once. */
  needsReview: boolean;
  /**
   * The plan started without review when it was first offered (low risk, or the requester's preference): only that
   * card says so; a revision mid-run or a card shown again after a restart is only running.
   */
  autoStarted?: true;
  amendmentsLeft: number;
  /** Who asked; only they (or a configured approver) may decide on the plan. */
  requester: Actor;
  /** Buttons (or commands) that are valid for this card. */
  actions: DecisionAction[];
  /** Steps that will hold the run when they end. */
  breakpoints: string[];
  /** Steps the run will hold before they start (suggestions the person took). */
  breakpointsBefore: string[];
  /**
   * Breakpoints offered, not set (this person stepped in on these tools before): approving alone never stops at
   * them; the `breakpoint` decision with `suggested` takes them.
   */
  suggestedBreakpoints: SuggestedBreakpoint[];
  note?: string;
  /** Things the person should know before approving (e.g. a tool whose description talks to the model). */
  warnings: string[];
  /** The Assistant whose plan this is (`ask <name>: …`); absent for Steward's own plans. */
  assistant?: string;
  /** The run whose `delegate` step this plan carries out (a child run, in its parent's thread); absent otherwise. */
  delegatedBy?: string;
  /** How long the plan (or what is left of it) will take and spend, from recent runs; absent without history. */
  estimate?: PlanEstimate;
  /**
   * What the run would spend against the spend caps set and what is left of each; with `over`, the plan waits for an
   * approver's Approve. Absent when no cap is set.
   */
  spend?: SpendOutlook;
}

/** The run is holding at a breakpoint: the step's raw output, and what the person can do next. */
export interface BreakpointHit {
  kind: 'breakpoint';
  runId: string;
  revision: number;
  stepId: string;
  /** True when the run holds before the step starts (then `output` shows what it is about to send). */
  before: boolean;
  /** The step's output (or, before it, its arguments) as text, cut to a readable length. */
  output: string;
  actions: DecisionAction[];
}

/**
 * A step started or ended, or the server reported progress on its call in flight (then `status` is `running` and
 * `detail` says how far it is, in `callProgressDetail`'s words).
 */
export interface ProgressUpdate {
  kind: 'progress';
  runId: string;
  stepId: string;
  status: StepStatus;
  detail: string;
  finished: number;
  total: number;
}

/** The final report written by the synthesizer (or by code when the synthesizer fails). */
export interface Report {
  kind: 'report';
  runId: string;
  status: RunStatus;
  text: string;
  /**
   * Sent by a process that took the run over after it stored its report: the one before may have shown it already
   * (killed before it noted that), so a channel that can find that message changes it instead of posting again.
   */
  again?: boolean;
}

/** One file a step's output carried (an image, audio, or a binary embedded resource), base64 and all. */
export interface RunFile {
  stepId: string;
  /** A file name for the chat: the resource URI's last segment, else `<step>-<n>.<ext>`. */
  name: string;
  mimeType: string;
  /** Base64, as the MCP server sent it. */
  data: string;
  bytes: number;
}

/**
 * The files a run produced, sent just after its report (only when the report is written, not when a process that
 * took the run over sends a stored one again). Each channel attaches what its platform accepts and says what it left.
 */
export interface RunFiles {
  kind: 'files';
  runId: string;
  files: RunFile[];
}

/**
 * A report shown while the model writes it, opened by a channel that can (`Notifier.openReport`). What it shows
 * along the way is a preview: `finish` makes the message exactly the report `send` would have delivered.
 */
export interface ReportStream {
  /** More of the report as the model writes it; never waits and never throws (showing it is best effort). */
  append(delta: string): void;
  /**
   * The report is written and stored: delivers it exactly as `send` would (the preview completed or replaced, or the
   * whole report sent anew where the preview could not be shown). Rejects only as `send` would.
   */
  finish(report: Report): Promise<void>;
  /** The report will not be delivered from here (another process took the run): close the preview, saying so. */
  fail(): Promise<void>;
}

/** A direct answer when no tools are needed. */
export interface Answer {
  kind: 'answer';
  text: string;
}

/** A piece of a sentence that names people: text, or a person each channel shows its own way (a mention, a name). */
export type SentencePart = string | { person: Actor };

/** Anything else worth telling: a state change, a refusal, a failure explained. */
export interface Notice {
  kind: 'notice';
  runId?: string;
  level: 'info' | 'warning' | 'error';
  /** The whole text, people named by name (or id): for channels that show people as plain names. */
  text: string;
  /** The same sentence with the people in it kept apart, when it names any. */
  parts?: SentencePart[];
  /** When set, only this person should see it (Slack: an ephemeral message). */
  to?: Actor;
}

/** A run changed status: adapters update the card's buttons (Pause ↔ Resume, none when finished). */
export interface RunStatusChange {
  kind: 'runStatus';
  runId: string;
  status: RunStatus;
  actions: DecisionAction[];
  /** The run whose `delegate` step this run carries out (on its first status, while it is planned). */
  delegatedBy?: string;
  /**
   * `planning` while the quick path may still answer it (no planner yet): channels show a neutral working sign, and
   * a second `planning` status without it follows if the request is handed to the planner.
   */
  quick?: true;
  /** At the run's end: how long it took from its start, and what its card estimated then. */
  took?: { ms: number; estimate?: PlanEstimate };
}

/**
 * A connection made through a person's link in a browser that showed no dashboard session of theirs: it waits, used
 * for nothing, until that person answers here, in chat, which proves who they are: use it, or not them (revoked and
 * forgotten). Shown to them only.
 */
export interface ConnectionCheck {
  kind: 'connectionCheck';
  server: string;
  /** The link it was made through; an answer names it. */
  link: string;
  to: Actor;
  /** The connection would be the workspace's (the person is the approver who connected it). */
  workspace?: true;
}

/**
 * An MCP server asks a question mid-call: shown on the run's thread as a form (a button that opens it, a prompt) for
 * the requester or an approver. The message and the fields are the server's words, never Steward's.
 */
export interface QuestionCard {
  kind: 'question';
  runId: string;
  questionId: string;
  stepId: string;
  server: string;
  /** The server's words. */
  message: string;
  fields: QuestionField[];
  requester: Actor;
  /** When the question is declined unanswered. */
  deadline: Date;
}

/** A question shown before has ended: answered, declined, cancelled, timed out, or stopped with the run. */
export interface QuestionClosed {
  kind: 'questionClosed';
  runId: string;
  questionId: string;
  server: string;
  outcome: QuestionOutcome;
  /** Who answered or declined it. */
  by?: Actor;
}

export type OutboundMessage =
  | PlanCard
  | ProgressUpdate
  | Report
  | Answer
  | Notice
  | RunStatusChange
  | BreakpointHit
  | ConnectionCheck
  | QuestionCard
  | QuestionClosed
  | RunFiles;
