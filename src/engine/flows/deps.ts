/** What Steward is built from: the ports, the clock and id source, a log, and the settings. */
import type { ScheduleLimits } from '../workflow/schedule-limits.ts';
import type {
  DashboardLinks,
  PersonConnections,
  LlmClient,
  ModelRole,
  Notifier,
  RunSignals,
  RunStore,
  ServerPrompts,
  TokenBudgets,
  TokenSettlement,
  ToolRunner,
} from '../ports.ts';
import type { QuestionLog } from '../server-questions.ts';
import type { RunTelemetry } from '../run-telemetry.ts';
import type { EstimateHistory } from '../estimate-history.ts';
import type { PricedModel, RoleModels } from '../model-cost.ts';
import type { SpendCaps } from '../spend.ts';
import type { AssistantStore } from '../assistant/assistants.ts';
import type { DelegationLimits, DelegationStore } from '../assistant/delegations.ts';
import type { CronCalendar, WorkflowStore } from '../workflows.ts';

/** Writes one line to the operator's log (never to people). */
export type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

/** Limits and policies, all from configuration. */
export interface StewardSettings {
  maxParallel: number;
  maxAttempts: number;
  amendmentCap: number;
  maxRepairs: number;
  reviewTimeoutMs: number;
  /** How long a server's question waits for an answer before it is declined (10 minutes unless set). */
  questionTimeoutMs?: number;
  /** Actors (as `<channel>:<id>`) who may decide on anyone's runs. */
  approvers?: string[];
  /** Most tools the planner is shown (default `DEFAULT_PLANNER_TOOLS`); a larger catalog is narrowed to the request. */
  plannerTools?: number;
  /** Model tokens per call, per run and per person per day; without them only the per-call defaults hold. */
  budgets?: ModelTokenBudgets;
  /** How long a run's lease lasts unless renewed (default 15 s): a dead process's runs wait this long for a new owner. */
  leaseMs?: number;
  /** The IANA zone of a workflow schedule that names none (default UTC). */
  timeZone?: string;
  /** How often schedules may fire, and how many may be live (defaults: `DEFAULT_SCHEDULE_LIMITS`). */
  scheduleLimits?: ScheduleLimits;
  /** Prices of the catalog's models, so each call's cost is recorded; a model without one costs "unknown". */
  modelPrices?: readonly PricedModel[];
  /**
   * Spend caps in money and the price of a model without one; unset: no caps, and unpriced models at
   * `DEFAULT_PRICE_PER_MILLION` (spend is counted all the same).
   */
  spend?: SpendSettings;
  /** The model catalog's names: the models an Assistant may be given per role (none without a catalog). */
  modelNames?: readonly string[];
  /** Quick answers (flows/quick-answer.ts): a new request may be answered by a short read-only tool loop; off if unset. */
  quickAnswers?: QuickAnswerSettings;
  /** The brakes on delegation (default `DEFAULT_DELEGATION_LIMITS`), judged in the database. */
  delegation?: DelegationLimits;
  /** How often a delegate step waiting for its child run looks at it (default 1 s; sooner when it ends here). */
  delegationPollMs?: number;
  /** How long a delegate step waits for its child run before stopping it (default 6 hours). */
  delegateTimeoutMs?: number;
}

/** The operator's spend settings: the caps, the default price, and the model each role's calls go to. */
export interface SpendSettings {
  caps: SpendCaps;
  /** US dollars per million tokens (input and output alike) for a model without a price: never free. */
  defaultPricePerMillion: number;
  /** Each role's model, so a call is priced before it is sent. */
  roleModels?: RoleModels;
}

/** Caps of the quick-answer loop: model turns, and model tokens (prompt and answer) over all its turns. */
export interface QuickAnswerSettings {
  maxTurns: number;
  maxTokens: number;
  /**
   * When the planner is asked: beside the front desk, at once (the default: a request handed over loses no round
   * trip, one answered wastes the planner's prompt), or only once the front desk hands over (`after`: STEWARD_QUICK_PLANNER).
   */
  frontDesk?: 'beside' | 'after';
}

/**
 * Token budgets with the output cap of each call by role (`perCall`): a call's answer may take at most the smaller
 * of its role's cap and what the run's and the person's budgets have left.
 */
export interface ModelTokenBudgets extends TokenBudgets {
  perCall?: Partial<Record<ModelRole, number>>;
}

/**
 * Output caps when none are configured. 16,000 tokens is about 64,000 characters, room for a plan of 100 ordinary
 * steps; the classifier answers one word; a report or an `llm` step's text fits in 4,000.
 */
export const DEFAULT_OUTPUT_CAPS: Readonly<Record<ModelRole, number>> = {
  planner: 16_000,
  classifier: 256,
  synthesizer: 4_000,
  llm_step: 4_000,
  butler: 2_000,
};

/** Everything the composition root hands to `Steward`; each flow keeps only the parts it uses. */
export interface StewardDeps {
  llm: LlmClient;
  tools: ToolRunner;
  store: RunStore;
  notifier: Notifier;
  clock: () => Date;
  newId: () => string;
  log: Log;
  settings: StewardSettings;
  /** Signals from other processes on the same database; without them, queued decisions wait for the next round. */
  signals?: RunSignals;
  /** Recurring workflows: without both, workflow commands answer that workflows are not set up. */
  workflows?: WorkflowStore;
  calendar?: CronCalendar;
  /** Assistants and their grants: without it, Assistant commands answer that they are not set up. */
  assistants?: AssistantStore;
  /** Delegation's brakes: with `assistants`, plans may hand steps to Assistants (`steward.delegate`). */
  delegations?: DelegationStore;
  /** Recent durations and token counts: with it, plan cards carry an estimate (`flows/plan-estimates.ts`). */
  estimateHistory?: EstimateHistory;
  /** Sign-in links of the web dashboard: without it, `dashboardLink` answers null (the dashboard is off). */
  dashboardLinks?: DashboardLinks;
  /** People's own connections to servers that connect per person; absent when no server does. */
  connections?: PersonConnections;
  /** Where servers' questions are stored; without it, no question is shown (each is declined). */
  questions?: QuestionLog;
  /** The MCP servers' prompts, offered as starting points (`prompts`); without it, none are. */
  prompts?: ServerPrompts;
  /** Told of model calls, step attempts and run ends, for traces; without it nothing is told (tracing is off). */
  telemetry?: RunTelemetry;
}

/** The metered model client of one run (its tokens count against the run's and the requester's budgets). */
export type LlmForRun = (
  run: {
    id: string;
    requester: { id: string; channel: string; name?: string };
    /** The run's Assistant: its models per role are used where it names one. */
    assistant?: string | null;
  },
  /** `settle`: how each call's settlement is stored (see `meteredLlm`); by default by a statement of its own. */
  options?: { settle?: (s: TokenSettlement) => Promise<void> },
) => LlmClient;
