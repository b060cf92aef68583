/**
 * Kysely table types for the tables made by `migrations/`. Keep in step with the latest migration.
 * Ids of bigserial columns are strings on pg and numbers on PGlite, so they are read through `Number()`.
 */
import type { ColumnType, Generated } from 'kysely';
import type { Json } from '../engine/types.ts';

// Written as JSON text (so strings and arrays survive pg's parameter encoding), read back parsed.
// Written once: the type forbids updates, as the rows holding these are never rewritten.
type FrozenJsonb<T> = ColumnType<T, string, never>;
type NullableJsonb<T> = ColumnType<T | null, string | null, string | null>;
type Timestamp = ColumnType<Date, Date | undefined, Date>;
type BigId = ColumnType<number | string, never, never>;

/** One run of a request. */
export interface RunsTable {
  id: string;
  status: string;
  channel: string;
  conversation_key: string;
  requester_id: string;
  requester_name: string | null;
  request: string;
  revision: Generated<number>;
  amendment_rounds: Generated<number>;
  report: string | null;
  approved_risk: string | null;
  tokens_used: Generated<number>;
  breakpoints: ColumnType<unknown, string | undefined, string>;
  /** Operation id of the last status change and amendment round, so a repeated write finds its own effect. */
  status_op: ColumnType<string | null, string | null | undefined, string | null>;
  amendment_op: ColumnType<string | null, string | null | undefined, string | null>;
  /** The run owes its report: set before it ends, cleared once the report was sent. */
  report_due: Generated<boolean>;
  /** The process that drives the run, until `lease_expires_at` (the database's clock); null when nobody does. */
  owner: ColumnType<string | null, string | null | undefined, string | null>;
  lease_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Raised by every new lease: writes carrying an older fence are refused. */
  fence: Generated<number>;
  /** Operation id of the takeover claim that gave the current lease (a repeat of that claim finds its runs). */
  claim_op: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the review now awaited runs out (set each time a review starts; read when the run changes hands). */
  review_due_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The Assistant the run belongs to, by name (null: Steward's own). */
  assistant: ColumnType<string | null, string | null | undefined, never>;
  /** The route the run took: `answer`, `quick` (also while the quick loop works) or `plan` (the default); null for older runs. */
  route: ColumnType<string | null, string | null | undefined, string | null>;
  /** The run whose `delegate` step made this one (null: a person started it). */
  parent_run_id: ColumnType<string | null, string | null | undefined, never>;
  /** The chat channel the conversation is in, where the conversation is a thread of it (null: the conversation). */
  place: ColumnType<string | null, string | null | undefined, never>;
  /** Micro-dollars the run's model calls reserved and spent (bigint: a string from pg). */
  spend_micro_usd: ColumnType<string | number, never, never>;
  /** An approver approved the run past the spend caps (its token budget still bounds it). */
  spend_exempt: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A tool definition pinned when a run was approved. */
export interface ToolPinsTable {
  id: BigId;
  run_id: string;
  tool: string;
  fingerprint: string;
  definition: ColumnType<unknown, string, string>;
  created_at: Timestamp;
}

/** Tokens a person used on one day (UTC), judged against the daily budget. */
export interface UserDailyTokensTable {
  id: BigId;
  channel: string;
  user_id: string;
  day: ColumnType<Date | string, string, string>;
  tokens: Generated<number>;
  created_at: Timestamp;
}

/** A platform event already handled (its id, prefixed with the platform). */
export interface InboundEventsTable {
  id: BigId;
  key: string;
  /** Operation id of the claim that inserted it. */
  op: ColumnType<string | null, string | null | undefined, never>;
  created_at: Timestamp;
}

/** A person's review preference, per platform user. */
export interface UserPreferencesTable {
  id: BigId;
  channel: string;
  user_id: string;
  /** Null when the person set only other preferences (then the default applies). */
  review: string | null;
  /** Whether the person's review cards offer suggested breakpoints. */
  breakpoint_suggestions: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An immutable plan revision of a run. */
export interface PlanRevisionsTable {
  id: BigId;
  run_id: string;
  revision: number;
  plan: FrozenJsonb<unknown>;
  reason: string;
  created_at: Timestamp;
}

/** One try at a step; (run_id, step_id, attempt) is unique. */
export interface StepAttemptsTable {
  id: BigId;
  run_id: string;
  step_id: string;
  attempt: number;
  revision: number;
  status: string;
  args: FrozenJsonb<Json>;
  output: NullableJsonb<Json>;
  error: NullableJsonb<unknown>;
  started_at: Date;
  ended_at: Date | null;
  duration_ms: number | null;
  /** The lease fence the attempt was started under (null for attempts from before leases). */
  fence: ColumnType<number | null, number | null | undefined, never>;
  /** The latest progress its server reported while it ran (`{ progress, total?, message? }`), and when. */
  progress: ColumnType<Json | null, never, string>;
  progress_at: ColumnType<Date | null, never, Date>;
  created_at: Timestamp;
}

/** A decision waiting for the process that drives its run. */
export interface RunCommandsTable {
  id: BigId;
  run_id: string;
  command: ColumnType<unknown, string, never>;
  taken_op: ColumnType<string | null, never, string>;
  created_at: Timestamp;
}

/** A person's action on a run. */
export interface DecisionsTable {
  id: BigId;
  run_id: string;
  revision: number;
  actor_id: string;
  actor_name: string | null;
  channel: string;
  action: string;
  accepted: boolean;
  note: string | null;
  op: ColumnType<string | null, string | null | undefined, never>;
  created_at: Timestamp;
}

/** Tokens used by one model call. */
export interface LlmUsageTable {
  id: BigId;
  run_id: string | null;
  role: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  /** Of `input_tokens`, those the provider read from its prompt cache. */
  cached_input_tokens: Generated<number>;
  /** What the call cost in micro-dollars (bigint: a string from pg); null when its model had no price. */
  cost_micro_usd: ColumnType<string | number | null, number | null | undefined, never>;
  /** What the call counted against spend caps: its cost, or its tokens at the default price; null before 0022. */
  charged_micro_usd: ColumnType<string | number | null, number | null | undefined, never>;
  /** The channel the call counted for (`<platform>:<channel>`); null before 0022. */
  spend_channel: ColumnType<string | null, string | null | undefined, never>;
  op: ColumnType<string | null, string | null | undefined, never>;
  created_at: Timestamp;
}

/** The append-only history of a run. */
export interface RunEventsTable {
  id: BigId;
  run_id: string;
  type: string;
  payload: FrozenJsonb<Json>;
  op: ColumnType<string | null, string | null | undefined, never>;
  created_at: Timestamp;
}

/** Token reservations and corrections already applied (a repeat of one changes nothing). */
export interface TokenOperationsTable {
  id: BigId;
  op: string;
  /** The output cap a reservation granted (null for corrections). */
  granted: number | null;
  limited_by: string | null;
  /** Micro-dollars a reservation took from the spend totals (null for corrections and before 0022). */
  spend_micro_usd: ColumnType<string | number | null, number | null | undefined, never>;
  created_at: Timestamp;
}

/** What model calls reserved and spent in one window (a UTC day or month) of the workspace, a channel or a person. */
export interface SpendTotalsTable {
  id: BigId;
  /** `workspace`, `channel` or `person`. */
  scope: string;
  /** '' for the workspace, `<platform>:<channel>` or `<platform>:<person id>`. */
  key: string;
  /** `day` or `month`. */
  period: string;
  /** The window's first day. */
  starts: ColumnType<Date | string, string, never>;
  micro_usd: ColumnType<string | number, never, never>;
  created_at: Timestamp;
}

type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** A named workflow; `version` is the one its fires run. */
export interface WorkflowsTable {
  id: string;
  name: string;
  owner_id: string;
  owner_name: string | null;
  owner_channel: string;
  conversation_channel: string;
  conversation_key: string;
  review: string;
  version: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Nullable<Date>;
}

/** One frozen version of a workflow; (workflow_id, version) is unique. */
export interface WorkflowVersionsTable {
  id: BigId;
  workflow_id: string;
  version: number;
  plan: FrozenJsonb<unknown>;
  pins: FrozenJsonb<unknown>;
  risk: string;
  note: string;
  source_run_id: string | null;
  created_by_id: string;
  created_by_name: string | null;
  created_by_channel: string;
  /** Operation id of the write that added it. */
  op: ColumnType<string | null, string | null | undefined, never>;
  created_at: Timestamp;
}

/** A cron schedule of a workflow; `next_fire_at` is the first scheduled time not yet claimed. */
export interface WorkflowSchedulesTable {
  id: string;
  workflow_id: string;
  cron: string;
  time_zone: string;
  catch_up: string;
  overlap: string;
  paused: Generated<boolean>;
  next_fire_at: Date | null;
  created_by_id: string;
  created_by_name: string | null;
  created_by_channel: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Nullable<Date>;
}

/** One claimed fire of a workflow (one per workflow and scheduled time, for scheduled fires). */
export interface WorkflowFiresTable {
  id: string;
  workflow_id: string;
  schedule_id: string | null;
  version: number;
  scheduled_at: Date;
  started_at: Date;
  outcome: string;
  note: string;
  run_id: string | null;
  /** The process that claimed it (its lease owner name). */
  claimed_by: string;
  created_at: Timestamp;
}

/** A run that amends a workflow in words: its approval saves a version of the workflow instead of running. */
export interface WorkflowAmendmentsTable {
  run_id: string;
  workflow_id: string;
  /** The version it amends: the new one is added only right after it. */
  version: number;
  created_at: Timestamp;
}

/** One delegation: a task handed to an Assistant as a child run, with its depth, its round and its messages. */
export interface DelegationsTable {
  id: string;
  parent_run_id: string | null;
  /** The child run's id, made before the run is created (no foreign key). */
  child_run_id: string;
  conversation_channel: string;
  conversation_key: string;
  assistant: string;
  requester_id: string;
  requester_name: string | null;
  requester_channel: string;
  depth: number;
  /** The chain's depth limit, inherited by children. */
  depth_limit: number;
  /** Unique per (conversation, assistant). */
  round: number;
  task: string;
  reply: Nullable<string>;
  /** An approver raised the chain's depth limit above the setting: the runs it hands out keep that room. */
  depth_raised: Generated<boolean>;
  messages: Generated<number>;
  /** Operation id of the last counted message. */
  message_op: Nullable<string>;
  created_at: Timestamp;
  ended_at: Nullable<Date>;
}

/** An approver's decision on a run's card to raise a brake above the operator's setting (issue 30). */
export interface BrakeRaisesTable {
  id: BigId;
  run_id: string;
  /** `depth`: the only brake a plan can name. */
  brake: string;
  value: number;
  approver_id: string;
  approver_name: string | null;
  approver_channel: string;
  created_at: Timestamp;
}

/** Child runs a person has going now (the concurrency brake's counter). */
export interface DelegationQuotasTable {
  id: BigId;
  channel: string;
  user_id: string;
  active: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Rounds between a conversation and one Assistant (the rounds brake's counter, never lowered). */
export interface DelegationRoundsTable {
  id: BigId;
  conversation_channel: string;
  conversation_key: string;
  assistant: string;
  rounds: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One refusal by a brake; `op` is the refused attempt's operation id (unique). */
export interface BrakeTripsTable {
  id: BigId;
  brake: string;
  subject: string;
  cap: number;
  count: number;
  op: string;
  created_at: Timestamp;
}

/** An Assistant (migration 0012). */
export interface AssistantsTable {
  id: BigId;
  name: string;
  purpose: string;
  instructions: string;
  models: ColumnType<Record<string, string>, string, string>;
  default_grant: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One grant of an Assistant: a tool (`server.tool`) or a server, allow or deny. */
export interface AssistantGrantsTable {
  id: BigId;
  assistant_id: ColumnType<number | string, number | string, never>;
  scope: string;
  target: string;
  effect: string;
  created_at: Timestamp;
}

/** One audited change to an Assistant, kept by name. */
export interface AssistantChangesTable {
  id: BigId;
  assistant: string;
  action: string;
  changed_by: string;
  changed_by_name: string | null;
  before: NullableJsonb<Json>;
  after: NullableJsonb<Json>;
  created_at: Timestamp;
}

/** A sign-in link of the web dashboard (migration 0016): only its token's hash is kept. */
export interface DashboardLinksTable {
  id: BigId;
  token_hash: string;
  channel: string;
  user_id: string;
  user_name: string | null;
  approver_roles: ColumnType<Json, string | undefined, never>;
  expires_at: Date;
  used_at: ColumnType<Date | null, never, Date>;
  created_at: Timestamp;
}

export interface DashboardSessionsTable {
  id: BigId;
  session_hash: string;
  channel: string;
  user_id: string;
  user_name: string | null;
  approver_roles: ColumnType<Json, string | undefined, never>;
  created_at: Timestamp;
  expires_at: Date;
  ended_at: ColumnType<Date | null, never, Date>;
}

/** The whole database as Kysely sees it. */
export interface DatabaseSchema {
  runs: RunsTable;
  plan_revisions: PlanRevisionsTable;
  step_attempts: StepAttemptsTable;
  decisions: DecisionsTable;
  llm_usage: LlmUsageTable;
  run_events: RunEventsTable;
  user_preferences: UserPreferencesTable;
  tool_pins: ToolPinsTable;
  user_daily_tokens: UserDailyTokensTable;
  inbound_events: InboundEventsTable;
  token_operations: TokenOperationsTable;
  run_commands: RunCommandsTable;
  workflows: WorkflowsTable;
  workflow_versions: WorkflowVersionsTable;
  workflow_schedules: WorkflowSchedulesTable;
  workflow_fires: WorkflowFiresTable;
  workflow_amendments: WorkflowAmendmentsTable;
  delegations: DelegationsTable;
  brake_raises: BrakeRaisesTable;
  delegation_quotas: DelegationQuotasTable;
  delegation_rounds: DelegationRoundsTable;
  brake_trips: BrakeTripsTable;
  assistants: AssistantsTable;
  assistant_grants: AssistantGrantsTable;
  assistant_changes: AssistantChangesTable;
  dashboard_links: DashboardLinksTable;
  dashboard_sessions: DashboardSessionsTable;
  spend_totals: SpendTotalsTable;
}
