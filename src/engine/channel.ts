/**
 * The adapter interface every chat channel implements (console now; Slack and Discord later).
 * A channel turns platform input into these inbound values and renders outbound messages; it holds no plan logic.
 */
import type { Conversation, Notifier } from './ports.ts';
import type { Actor, DecisionAction } from './types.ts';

/** Text someone addressed to Steward: a new request, or a reply in a run's thread. */
export interface InboundMessage {
  conversation: Conversation;
  actor: Actor;
  text: string;
}

/** A press of a button (or a typed command) on a card, naming the run and the revision the card showed. */
export interface InboundDecision {
  runId: string;
  revision: number;
  action: DecisionAction;
  actor: Actor;
  /** The amendment text, for `amend`. */
  text?: string;
}

/** What the engine offers to channels. */
export interface InboundHandler {
  message(message: InboundMessage): Promise<void>;
  decision(decision: InboundDecision): Promise<void>;
}

/** A chat channel: receives input for the engine and sends its messages to people. */
export interface ChannelAdapter extends Notifier {
  readonly name: string;
  start(handler: InboundHandler): Promise<void>;
  stop(): Promise<void>;
}
