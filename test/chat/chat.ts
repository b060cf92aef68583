/**
 * One chat platform as the shared chat scenarios (test/chat/*-spec.ts) drive it: a person mentions Steward, replies
 * in the run's thread, presses a card's buttons and reads the card, the thread and what they were told privately.
 * `slackChat` and `discordChat` map these verbs onto the Slack and Discord end-to-end harnesses; the scenario matrix's
 * `Person` (test/scenarios/person.ts) speaks the matrix's fixed sentences one level above.
 */
import type { Steward, StewardSettings } from '../../src/engine/flows/steward.ts';
import type { McpServerConfig } from '../../src/mcp/mcp-config.ts';
import type { PgRunStore } from '../../src/store/pg-run-store.ts';
import type { FakeLlm, FakeLlmScript } from '../fakes/fake-llm-server.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import type { Found } from '../helpers/wait.ts';
import type { SetUp } from '../helpers/connect-origin.ts';

/** Ada asks; Bob is a bystander; Boss is a configured approver. */
export type Who = 'ada' | 'bob' | 'boss';

/** A card's controls, named the same on both platforms. */
export type Action =
  'approve' | 'amend' | 'cancel' | 'pause' | 'resume' | 'stop' | 'ask-first' | 'save-workflow' | 'suggested';

/** A message Steward posted, as a person reads it now. */
export interface Shown {
  /** The platform's id of the message (Slack: its ts; Discord: its id): the same while it is edited in place. */
  id: string;
  text: string;
  /** The card's buttons, as `Action`s (and any other control under its platform name). */
  actions: string[];
  /** The labels on its buttons, as shown. */
  labels: string[];
  /** The steps its breakpoint picker shows as picked. */
  picked: string[];
}

/** What a chat stage starts with. */
export interface ChatOptions {
  db: 'postgres' | 'pglite';
  servers: McpServerConfig[];
  script: FakeLlmScript;
  settings?: Partial<StewardSettings>;
  /** Parts started on the stage's database before its MCP host (people's connections: `connectOrigin`). */
  setup?: SetUp;
  /** Servers may ask questions (MCP elicitation), as the app wires it. */
  questions?: boolean;
}

/** A press as the platform took it. */
export interface Pressed {
  /** The platform's own name for the press (Discord: the interaction's id; Slack: where its calls start). */
  id: string;
  /** What the presser alone was shown for it (a refusal, a confirmation), as text. */
  privately(): string[];
}

/** A chat platform, its Steward and its fakes, as a person uses them. */
export interface Chat {
  readonly platform: 'slack' | 'discord';
  readonly llm: FakeLlm;
  readonly db: TestDatabase;
  readonly store: PgRunStore;
  readonly steward: Steward;
  /** The actor id a stored decision names `who` by. */
  idOf(who: Who): string;
  /** `text` in bold, as the platform's markup writes it on a card. */
  bold(text: string): string;
  /** How a card names the Assistant `name` whose run it is. */
  assistant(name: string): string;
  /** Mentions Steward with a request; resolves with the thread the run talks in, once the run is stored. */
  mention(text: string, as?: Who): Promise<string>;
  /** A plain reply in a thread; resolves once Steward is done with it. */
  reply(thread: string, text: string, as?: Who): Promise<void>;
  /** The run card in a thread (the first one, when a child run's card shares it); throws while there is none. */
  card(thread: string): Shown;
  /** Every run card in a thread, in the order they were posted. */
  cards(thread: string): Shown[];
  /** Every other message Steward posted in the thread for everyone, in order. */
  replies(thread: string): Shown[];
  /** Presses a button on a message as it stands now; resolves once Steward is done with the press. */
  press(message: Shown, action: Action, as?: Who): Promise<Pressed>;
  /** Picks these steps (and only these) in the card's breakpoint picker; resolves once Steward is done with it. */
  pick(card: Shown, stepIds: string[], as?: Who): Promise<void>;
  /** Submits the amendment form opened last with this text. */
  submitAmend(text: string, as?: Who): Promise<void>;
  /** How many forms (modals) Steward opened so far. */
  formsOpened(): number;
  /** Each edit of a message after it was posted: when (ms), and its text then. */
  edits(message: Shown): { at: number; text: string }[];
  /**
   * Everything Steward showed `who` alone, in order, whatever it answered (a connect link, a question about a
   * connection, an answer to a command or press): Slack's ephemeral messages, Discord's private replies and DMs.
   */
  told(as: Who): Shown[];
  /** Presses `button` (`connection-use`, `connection-notme`) on a message `told` showed; what they were told for it. */
  pressPrivate(message: Shown, button: 'connection-use' | 'connection-notme', as?: Who): Promise<string[]>;
  /** Presses Answer… or Decline on a server's question; what the presser alone was told for it. */
  pressQuestion(message: Shown, button: 'answer' | 'decline', as?: Who): Promise<string[]>;
  /**
   * Presses Answer… on a server's question and sends its form (every page of it) with `values` by field label, the
   * other fields as the form shows them; what the person alone was told (a refused entry, Discord's next part).
   */
  answerQuestion(message: Shown, values: Record<string, string>, as?: Who): Promise<string[]>;
  /** `/steward <text>` as `who`: what it answered that person privately. */
  command(text: string, as: Who): Promise<string[]>;
  /** How many messages Steward posted for everyone so far, anywhere. */
  posted(): number;
  /** Calls the platform refused (any error answer), as lines for a failure's message. */
  refused(): string[];
  waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs?: number): Promise<Found<T>>;
  /** Stops everything and fails on an MCP call outside an approved plan, a leaked secret or a platform limit broken. */
  close(): Promise<void>;
}

/** Starts a chat stage on one platform. */
export type StartChat = (options: ChatOptions) => Promise<Chat>;
