/**
 * The interface every chat channel implements (the console, Slack and Discord; `src/bot` holds the adapters).
 * A channel turns platform input into these inbound values and renders outbound messages; it holds no plan logic.
 */
import type { QuestionCard } from './messages.ts';
import type { Conversation, Notifier, PersonConnection } from './ports.ts';
import type { InboundQuestionAnswer } from './server-questions.ts';
import type { Breakpoint } from './plan/breakpoints.ts';
import type { Actor, DecisionAction, Json, ReviewPreference, RunStatus } from './types.ts';
import type { SpendReport } from './spend.ts';
import type { FireReview, StoredSchedule } from './workflows.ts';

/** Text someone addressed to Steward: a new request, or a reply in a run's thread. */
export interface InboundMessage {
  conversation: Conversation;
  actor: Actor;
  text: string;
  /** The platform's id for this delivery (e.g. `slack:Ev123`): a redelivered event with the same id is ignored. */
  deliveryId?: string;
  /**
   * Called once the message is stored (a new request's run exists; a reply or a redelivery is claimed), before the
   * slow work (planning, classifying): a platform that redelivers until told may be told then, and nothing is lost.
   */
  accepted?: () => void;
  /**
   * The chat channel the conversation is in, where the conversation is a thread of it (a Slack channel's id, a Discord
   * thread's parent channel): the channel spend caps count a new run's model calls for (else the conversation).
   */
  place?: string;
  /** The person said this is a new request: it starts a run even when the conversation has an active one. */
  newRequest?: boolean;
  /**
   * The run a reply is for, where the channel knows which one the person means (the console's selected run): used
   * while it is active in this conversation; otherwise the conversation's active run takes the reply.
   */
  runId?: string;
  /**
   * Called when the reply was judged not to be about the conversation's active run and left alone, so a channel
   * where one person talks to Steward can say so (in a shared thread, chatter is simply left alone).
   */
  leftAlone?: (run: { id: string; request: string }) => void;
  /**
   * The text is an MCP server's prompt the person chose (`<server>/<name>`): taken as their request as it is, never
   * read as addressed to an Assistant (the server's words do not pick one).
   */
  fromPrompt?: string;
}

/** A press of a button (or a typed command) on a card, naming the run and the revision the card showed. */
export interface InboundDecision {
  runId: string;
  revision: number;
  action: DecisionAction;
  actor: Actor;
  /** The amendment text, for `amend`. */
  text?: string;
  /** For `edit`: a whole plan, or `{"steps": [...]}` replacing the steps (steps that started must stay as they are). */
  plan?: Json;
  /** For `breakpoint`: the steps to set (`on` true) or clear. */
  stepIds?: string[];
  on?: boolean;
  /** For `breakpoint`: take the breakpoints the card suggests (set before their steps), instead of `stepIds`. */
  suggested?: boolean;
  /**
   * Typed without naming a run (the channel chose it, as the console does): a pause, resume or stop whose run has
   * ended goes to the person's only other active run in that conversation instead of being refused.
   */
  byWord?: boolean;
  /**
   * Called once the decision is recorded (queued for the process that drives its run, or decided and stored; a Stop
   * once the run is stored as stopping), before slower work: a platform that answers the press then leaves a press
   * that a process killed before recording it unanswered, rather than answered and lost.
   */
  accepted?: () => void;
}

/** One of a person's runs, as a line in a list (`/steward status`, `/steward runs`). */
export interface RunListing {
  id: string;
  status: RunStatus;
  /** The status in words ("waiting for review"). */
  statusText: string;
  request: string;
  /** The plan's summary, once there is a plan. */
  summary: string | null;
  /** The plan's revision now: what a control on a list of runs names, as a card's button does. */
  revision: number;
  conversation: Conversation;
  createdAt: Date;
}

/** A run's plan as stored, for someone about to edit it or set breakpoints (not the card's shortened preview). */
export interface EditablePlan {
  revision: number;
  status: RunStatus;
  /** The whole plan, as an edit would replace it. */
  plan: Json;
  breakpoints: Breakpoint[];
  /** Steps that started or ended: an edit must keep them as they are, and they take no breakpoint. */
  started: string[];
}

/** One of a person's workflows with its schedules, as an overview shows it (Slack's App Home). */
export interface WorkflowOverview {
  name: string;
  version: number;
  review: FireReview;
  schedules: Pick<StoredSchedule, 'cron' | 'timeZone' | 'paused' | 'nextFireAt'>[];
}

/** A command about workflows from a person in a conversation. */
export interface WorkflowRequest {
  actor: Actor;
  conversation: Conversation;
  /** The person's words: `save digest`, `schedule digest "0 9 * * MON" Europe/Berlin`, `workflows`… */
  text: string;
  /** The run a "Save as workflow" press named; without it `save` takes the conversation's latest approved run. */
  runId?: string;
}

/**
 * The answer to a workflow or Assistant command, with its level as a notice has one: `info` when it did what was
 * asked (or shows what was asked for), `warning` when it refused or could not (a refused decision is a `warning` too),
 * so the console prints a refusal with `!` as it prints its others. Slack and Discord answer these privately in
 * plain words, as they answer every other slash command, refusals included, so they show the words alone.
 */
export interface CommandAnswer {
  readonly text: string;
  readonly level: 'info' | 'warning';
}

/** An answer that did what was asked. */
export function info(text: string): CommandAnswer {
  return { text, level: 'info' };
}

/** An answer that refused, or could not do what was asked, and says why. */
export function refusal(text: string): CommandAnswer {
  return { text, level: 'warning' };
}

/** `connections` (Slack and Discord: `/steward connections`): a person's own connections to servers that connect per person. */
export type ConnectionsCommand =
  /** Each such server and where the person stands with it. */
  | { kind: 'list' }
  /** A private, single-use link that connects the person's own account (no run needed). */
  | { kind: 'connect'; server: string }
  /** Revoked at the server when it offers revocation, and forgotten here always. */
  | { kind: 'disconnect'; server: string }
  /**
   * The person's answer about a connection made from a browser with no dashboard session of theirs: `use` it (it was
   * them), or `refuse` it (not them: revoked and forgotten). `link` names the one a button was shown for.
   */
  | { kind: 'use' | 'refuse'; server: string; link?: string };

/** The answer to a `connections` command, for the person who asked only; each channel puts it in words (`src/bot`). */
export type ConnectionsAnswer =
  /** No server here connects per person. */
  | { kind: 'off' }
  | { kind: 'list'; connections: PersonConnection[] }
  /** `link` null: Steward has no web origin to connect from (its dashboard is off); `workspace`: it connects the workspace. */
  | { kind: 'link'; server: string; link: string | null; minutes: number; workspace?: true }
  /** The server's connection is the workspace's: only an approver connects, confirms or disconnects it. */
  | { kind: 'approverOnly'; server: string }
  /** `known`: there was a connection; `revoked`: its authorization server took the revocation. */
  | { kind: 'disconnected'; server: string; known: boolean; revoked: boolean; workspace?: true }
  /** The name is not a server that connects per person; `servers` are. */
  | { kind: 'unknown'; server: string; servers: string[] }
  /** The pending connection is the person's now. */
  | { kind: 'used'; server: string; workspace?: true }
  /** The pending connection was forgotten; `revoked`: its authorization server took the revocation. */
  | { kind: 'refused'; server: string; revoked: boolean }
  /** Nothing of the person's waits to be confirmed for this server (answered before, or replaced). */
  | { kind: 'nothingPending'; server: string };

/** What `prompt …` comes to: the text of a request for the channel to start, or a refusal in words. */
export type PromptStart =
  | {
      ok: true;
      /** The request: the prompt's text parts, joined by blank lines. */
      request: string;
      /** `<server>/<name>`, to name where the text came from. */
      source: string;
    }
  | { ok: false; answer: CommandAnswer };

/** What a person's answer to a server's question came to: taken, or refused with the reason (and each field's problem). */
export type QuestionReply = { ok: true } | { ok: false; refusal: string; fields?: Record<string, string> };

/** A person's rating of a run's report (Slack's feedback buttons); the last one each person gives is what counts. */
export interface InboundFeedback {
  runId: string;
  actor: Actor;
  rating: 'good' | 'bad';
}

/** What the engine offers to channels. */
export interface InboundHandler {
  /** A new request, or a reply in a conversation that has an active run (then classified: amend, status, unrelated). */
  message(message: InboundMessage): Promise<void>;
  /** Stores a person's rating of a run's report with the run's events; a run that does not exist is ignored. */
  feedback?(feedback: InboundFeedback): Promise<void>;
  /** A decision; refused with a notice to the actor when not allowed, stale or duplicate. */
  decision(decision: InboundDecision): Promise<void>;
  /**
   * Claims a platform delivery (e.g. `discord:<interaction id>`) in the database, for platforms that deliver each
   * event to every connected process or again after a reconnect: true for the first claim anywhere, false for a
   * repeat, which the channel then leaves alone. A message claimed this way is sent without its `deliveryId`.
   */
  claimDelivery(deliveryId: string): Promise<boolean>;
  /** Whether this person may decide on this run (the requester or a configured approver). */
  canDecide(runId: string, actor: Actor): Promise<boolean>;
  /**
   * Sends the run's history (revisions and every decision: who, what, when, from which channel) to the conversation,
   * or with `to` only to that person.
   */
  history(runId: string, to?: Actor): Promise<void>;
  /** The run's stored plan, or null when there is no run or no plan. */
  editablePlan(runId: string): Promise<EditablePlan | null>;
  /**
   * Checks an `edit` decision as applying it would (who, revision, status, the plan itself) without changing
   * anything: null when it would be accepted now, else the refusal in one sentence.
   */
  checkEdit(decision: InboundDecision): Promise<string | null>;
  /** Stores how much this person wants to review from now on. */
  setReviewPreference(actor: Actor, preference: ReviewPreference): Promise<void>;
  /** Stores whether this person's review cards offer suggested breakpoints from now on. */
  setBreakpointSuggestions(actor: Actor, on: boolean): Promise<void>;
  /** This person's runs that are not finished (planning, waiting, running, paused, stopping), newest first. */
  activeRuns(actor: Actor): Promise<RunListing[]>;
  /** This person's latest runs, finished or not, newest first, at most `limit`. */
  recentRuns(actor: Actor, limit: number): Promise<RunListing[]>;
  /** How much this person reviews now: their stored preference, else the default (`risky`). */
  reviewPreference(actor: Actor): Promise<ReviewPreference>;
  /** The workflows this person owns, by name, with their schedules; null when workflows are not set up. */
  workflowsOf(actor: Actor): Promise<WorkflowOverview[] | null>;
  /**
   * A command about workflows (`save`, `workflows`, `workflow`, `fork`, `schedule`; `workflow/workflow-commands.ts`
   * has the words): resolves to the answer, meant for the person who asked. Never throws for bad input.
   */
  workflowCommand(request: WorkflowRequest): Promise<CommandAnswer>;
  /** An Assistant command (`assistants`, `assistant <name> …`, see `assistant/assistant-commands.ts`), answered in words. */
  assistantCommand(request: WorkflowRequest): Promise<CommandAnswer>;
  /**
   * The Assistants' names (anyone may list them), for a channel's autocomplete; read-only and cached for a few
   * seconds. Absent or []: none to offer.
   */
  assistantNames?(actor: Actor): Promise<string[]>;
  /** `prompts`: the MCP servers' prompts this person may start from, in words (the servers' words marked as such). */
  promptList?(actor: Actor): Promise<CommandAnswer>;
  /**
   * `prompt <server>/<name> key=value …`: the prompt filled in by its server, as the text of a new request for the
   * channel to start (with `fromPrompt`, showing `promptSourceNote` with it), or a refusal in words.
   */
  choosePrompt?(actor: Actor, text: string): Promise<PromptStart>;
  /** A private, single-use sign-in link to the web dashboard for this person, or null when the dashboard is off. */
  dashboardLink(actor: Actor): Promise<string | null>;
  /**
   * What `/steward spend` shows this person: the workspace's, `conversation`'s channel's and their own spend today
   * and this month with the caps and what is left, and spend by channel, person and model (an approver sees every
   * channel and person; anyone else their own line and their channel's). Absent: spend is not shown.
   */
  spendReport?(actor: Actor, conversation: Conversation): Promise<SpendReport>;

  /**
   * A `connections` command of this person, about their own connections only, given in `conversation` (where they
   * are asked to confirm a connection made with a link it gives, if need be); the answer is for them alone.
   */
  connections(actor: Actor, command: ConnectionsCommand, conversation?: Conversation): Promise<ConnectionsAnswer>;

  /**
   * A person's answer to an MCP server's question (a form submitted, or declined): refused unless they are the run's
   * requester or an approver and the question is open; to accept, every entry must fit its field (`fields` says
   * which do not, for a form to show beside them).
   */
  answerQuestion(answer: InboundQuestionAnswer): Promise<QuestionReply>;
  /** The form of an open question (asked by any process), for a channel about to show it; null when it has ended. */
  openQuestion(questionId: string): Promise<QuestionCard | null>;
}

/** A chat channel: receives input for the engine and sends its messages to people. */
export interface ChannelAdapter extends Notifier {
  readonly name: string;
  start(handler: InboundHandler): Promise<void>;
  stop(): Promise<void>;
}
