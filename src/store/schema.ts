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
  /** When the review now awaited runs out (set each time a review starts; read when the run changes hands). */
  review_due_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
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
  review: string;
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
  created_at: Timestamp;
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
}
