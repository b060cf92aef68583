/**
 * Questions MCP servers ask a person mid-call (MCP `elicitation/create`, form mode), in Steward's words.
 *
 * - question: a server's request for a few values, asked on the run's thread on behalf of one step's call.
 * - field: one value the form asks for (text, number, yes/no, one choice, several choices).
 * - answer: what goes back to the server: `accept` with the values, `decline`, or `cancel`.
 */
import type { Actor, Json } from './types.ts';

/** One value a question asks for, read from the server's `requestedSchema` (only flat, primitive properties). */
export type QuestionField = {
  name: string;
  /** The field's title, else its name. */
  label: string;
  description: string;
  required: boolean;
} & (
  | {
      kind: 'text';
      format?: 'email' | 'uri' | 'date' | 'date-time';
      minLength?: number;
      maxLength?: number;
      default?: string;
    }
  | { kind: 'number'; integer: boolean; minimum?: number; maximum?: number; default?: number }
  | { kind: 'boolean'; default?: boolean }
  | { kind: 'choice'; options: QuestionOption[]; default?: string }
  | { kind: 'choices'; options: QuestionOption[]; minItems?: number; maxItems?: number; default?: string[] }
);

/** One allowed value of a choice, and the words shown for it. */
export interface QuestionOption {
  value: string;
  label: string;
}

/** What goes back to the server (MCP `ElicitResult`). */
export type QuestionAnswer =
  { action: 'accept'; content: Record<string, Json> } | { action: 'decline' } | { action: 'cancel' };

/** The call a question arrived during: the run and step it was made for, and whose connection it ran under. */
export interface QuestionCall {
  runId: string;
  stepId: string;
  /** When the call gives up (the step's own timeout): a question cannot outlive the call that asks it. */
  callDeadline: Date;
}

/** A server's question as it arrived. */
export interface QuestionRequest {
  server: string;
  /** The server's words (its `message`). */
  message: string;
  /** The server's `requestedSchema`, as sent. */
  requestedSchema: Json;
}

/**
 * Where the MCP host sends a server's question. Resolves to the answer for the server; never rejects. `signal`
 * aborts when the server or the call gives up on it (the answer is then `cancel`).
 */
export interface ServerQuestions {
  ask(call: QuestionCall, request: QuestionRequest, signal: AbortSignal): Promise<QuestionAnswer>;
}

/** The reason a step's call is aborted with when its run is stopped: a question open during it ends as `stopped`. */
export const RUN_STOPPED = 'the run was stopped';

/** What someone who may not answer a question (neither the requester nor an approver) is told. */
export const QUESTION_REFUSAL = 'Only the person who asked for this run, or an approver, can answer its questions.';

/** How a question ended, as stored and shown. */
export type QuestionOutcome = 'accepted' | 'declined' | 'cancelled' | 'timedOut' | 'refused' | 'stopped';

/** A person's answer to a question, as a channel hands it in: raw values by field name. */
export interface InboundQuestionAnswer {
  questionId: string;
  actor: Actor;
  action: 'accept' | 'decline';
  /** For `accept`: what the person entered, by field name (text as typed; a list for several choices). */
  values?: Record<string, string | string[] | boolean | null>;
}

/** A question as stored with its step (migration 0025). */
export interface StoredQuestion {
  id: string;
  runId: string;
  stepId: string;
  server: string;
  message: string;
  requestedSchema: Json;
  askedAt: Date;
  deadlineAt: Date;
  /** Null while it is open. */
  outcome: QuestionOutcome | null;
  /** What went back to the server, for `accepted`. */
  content: Json | null;
  answeredBy: Actor | null;
  /** Why it ended as it did, in words (a refusal's reason, a stop). */
  reason: string | null;
  closedAt: Date | null;
}

/** How a question ends: its outcome, the content sent back, who answered, why. */
export interface QuestionClose {
  outcome: QuestionOutcome;
  content?: Json;
  by?: Actor;
  reason?: string;
}

/** Where questions are kept. */
export interface QuestionLog {
  addQuestion(
    question: Omit<StoredQuestion, 'outcome' | 'content' | 'answeredBy' | 'reason' | 'closedAt'>,
  ): Promise<void>;
  /** Ends an open question; false when it had ended already (the first ending wins, in any process). */
  closeQuestion(id: string, close: QuestionClose, at: Date): Promise<boolean>;
  getQuestion(id: string): Promise<StoredQuestion | null>;
  /** A run's questions, oldest first. */
  questionsOf(runId: string): Promise<StoredQuestion[]>;
}
