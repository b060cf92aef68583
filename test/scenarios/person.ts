/**
 * A person on one channel, as the scenario driver needs them: each channel says how a person asks, decides and
 * reads there (typed commands on the console; mentions, thread replies, buttons and modals on Slack), and how what
 * the oracle names (a report, a status answer, a breakpoint) looks in that channel's words.
 */
import type { Steward } from '../../src/engine/flows/steward.ts';
import type { PgRunStore } from '../../src/store/pg-run-store.ts';
import type { AuditServer } from '../e2e/harness.ts';
import type { FakeLlm } from '../fakes/fake-llm-server.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import type { Seen } from './oracle.ts';

/** A position in what the person was shown, to read or wait from. */
export type Mark = number;

/** What the driver does through a channel. */
export interface Person {
  llm: FakeLlm;
  audit: AuditServer;
  db: TestDatabase;
  store: PgRunStore;
  steward(): Steward;
  /** Turns review of every plan on (early start off), as the person would. */
  reviewAll(): Promise<void>;
  /** Asks the quick question as a request of its own and waits for its answer. */
  askQuick(): Promise<void>;
  /** Starts the other request, which stays active. */
  startOther(): Promise<void>;
  /** Sets up the Assistant "ops" (granted the audit server's tools); absent where the channel's driver cannot. */
  makeAssistant?: () => Promise<void>;
  /** Saves the last run as the workflow SAID.workflow, each fire waiting for approval; absent where not driven. */
  saveWorkflow?: () => Promise<void>;
  /** Fires the saved workflow now. */
  fire?: () => Promise<void>;
  /** Asks the cell's request (with another run active when `besides`; of the Assistant `assistant` when given). */
  ask(besides: boolean, assistant?: string): Promise<void>;
  mark(): Mark;
  /** The next card offering Approve after `from`, as text. */
  card(from: Mark): Promise<string>;
  /** Whether a card (as `card` returned it) offers Amend, as an ordinary review card does. */
  offersAmend(card: string): boolean;
  /** How many cards were shown after `from`. */
  cards(from: Mark): number;
  /** Waits until the person was shown `what` after `from`. */
  waitSeen(what: Seen, from: Mark): Promise<void>;
  seen(what: Seen, from: Mark): boolean;
  /** Report messages shown after `from`. */
  reports(from: Mark): number;
  /** Everything shown after `from`, for a failure's message. */
  transcript(from: Mark): string;
  /** With a second Steward process on the database: the MCP calls it made, and whether it showed a card or report. */
  other?: { calls: () => number; showedRun: () => boolean };
  /** Steward restarts between the card and the decision; absent where the channel's stage cannot. */
  restart?: () => Promise<void>;
  approve(): Promise<void>;
  /** An approver (another person; on the console, Boss at a terminal of their own) presses Approve on the card. */
  approveAsApprover(): Promise<void>;
  amend(text: string): Promise<void>;
  /** Sends the steps as an edit of the plan (`change` says the same, for channels that edit one step's text). */
  edit(steps: unknown[], change: { stepId: string; from: string; to: string }): Promise<void>;
  /** Cancel on the card; a card for steps held mid-run offers Stop in its place (it does the same there). */
  cancel(): Promise<void>;
  breakpoint(stepId: string): Promise<void>;
  continueRun(): Promise<void>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
  askStatus(): Promise<void>;
  history(): Promise<void>;
  /** Asks the quick question as a new request while the cell's run is active. */
  newQuick(): Promise<void>;
  close(): Promise<void>;
}
