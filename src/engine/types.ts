/**
 * Terminology
 * - run: one request being served, from the planner call to the report.
 * - plan revision: an immutable version of a run's plan (0 = first plan; amendments and edits add revisions).
 * - step: one node of the plan's DAG: an MCP tool call, an LLM text call, or a condition.
 * - attempt: one try at running a step (retries of idempotent tools make more than one).
 * - decision: a person's Approve / Amend / Cancel / Pause / Resume / Stop on a run, naming the revision it saw.
 * - effect: work the pure engine asks its runner to do (call a tool, notify, finish); data, not I/O.
 */

/** Risk of a step or plan; the plan's risk is the highest of its steps. */
export type RiskLevel = 'low' | 'medium' | 'high';

/** JSON value as carried in tool arguments and outputs. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A tool the planner may use, as the MCP host reports it, with the operator's overrides applied. */
export interface ToolInfo {
  /** Qualified name used in plans: `<server>.<tool>`. */
  name: string;
  server: string;
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** JSON Schema of the call's `structuredContent`, when the tool declares one. */
  outputSchema?: Record<string, unknown>;
  annotations: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  /** Operator policy from the MCP config (overrides win over annotations). */
  policy: {
    allowed: boolean;
    risk?: RiskLevel;
    idempotent?: boolean;
    timeoutMs: number;
    /** Treat as risky for data flow even if annotations say otherwise. */
    sensitive?: boolean;
    /** Argument fields that may take a value from an earlier step without a second confirmation. */
    trustedRefFields?: string[];
    /** Most calls the tool's server gets at once, across all runs (`maxConcurrency` in mcp.json); unset: no limit. */
    maxConcurrency?: number;
    /** Why the tool is not allowed, when not by configuration: a clause after its name (an Assistant's grant). */
    notAllowed?: string;
    /** Its server connects per person (`"auth": "person"`): each call runs under the requester's own connection. */
    perPerson?: true;
    /** Its server's one connection was made by an approver in their browser: each call runs as the workspace. */
    asWorkspace?: true;
  };
  /**
   * The tool as scored for each value of its `server` argument (only Steward's `steward.read_resource` has them: a read
   * takes the annotations and policy of the server it reads from). The tool itself is the most open of them.
   */
  byServer?: Record<string, ToolInfo>;
  /**
   * SHA-256 over the tool's full definition (name, title, description, input and output schemas, annotations)
   * and the server's reported name and version: pinned at approval, compared before each step.
   */
  fingerprint: string;
  /** The definition that was hashed, kept to show what changed. */
  definition: Json;
}

/** Result of an MCP tool call, as the protocol returns it (content blocks, optional structured content). */
export interface ToolOutput {
  content: Json[];
  structuredContent?: Json;
  isError?: boolean;
  /** Set when the output was larger than the bound and was cut: its full size and hash, for audit. */
  truncated?: { bytes: number; sha256: string };
}

/** Lifecycle of a run, as stored. */
export type RunStatus =
  'planning' | 'awaiting_review' | 'running' | 'paused' | 'stopping' | 'completed' | 'failed' | 'cancelled' | 'stopped';

/** Unfinished run statuses: such a run owns its conversation (replies go to it) and is resumed after a restart. */
export const ACTIVE_STATUSES = [
  'planning',
  'awaiting_review',
  'running',
  'paused',
  'stopping',
] as const satisfies readonly RunStatus[];

/** Terminal run statuses: nothing changes a run after it reaches one. */
export const TERMINAL_STATUSES = [
  'completed',
  'failed',
  'cancelled',
  'stopped',
] as const satisfies readonly RunStatus[];

/** Every run status, in lifecycle order (for lists and filters). */
export const RUN_STATUSES = [...ACTIVE_STATUSES, ...TERMINAL_STATUSES] as const satisfies readonly RunStatus[];

/** Statuses in which a person can still change the plan (edit, amend, breakpoints) and stop it from its card. */
export const STEERABLE_STATUSES = ['awaiting_review', 'running', 'paused'] as const satisfies readonly RunStatus[];

/** Active statuses once the run has a plan: every active status but `planning`. */
export const PLANNED_STATUSES = [
  'awaiting_review',
  'running',
  'paused',
  'stopping',
] as const satisfies readonly RunStatus[];

/** Statuses of a run driven step by step: its decisions go to its driver. */
export const DRIVEN_STATUSES = ['running', 'paused', 'stopping'] as const satisfies readonly RunStatus[];

/** Whether a person can still change the plan of a run in this status (see `STEERABLE_STATUSES`). */
export function isSteerable(status: string): boolean {
  return (STEERABLE_STATUSES as readonly string[]).includes(status);
}

/** Whether a run in this status is finished for good. */
export function isTerminal(status: RunStatus): boolean {
  return (TERMINAL_STATUSES as readonly RunStatus[]).includes(status);
}

/** Lifecycle of one step within a run. */
export type StepStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped' | 'cancelled';

/** Kinds of failure the engine distinguishes; adapters translate foreign errors into these. */
export type ErrorCode =
  | 'timeout'
  | 'tool_error'
  | 'server_unavailable'
  | 'unknown_tool'
  | 'reference_failed'
  | 'cancelled'
  | 'llm_failed'
  | 'interrupted'
  | 'not_granted'
  | 'spend_capped'
  /**
   * A server that connects per person refused the requester's connection (never made, or revoked and not refreshed):
   * the call did not run, and the step waits for them to connect.
   */
  | 'not_connected'
  | 'internal';

/** A failure as the engine sees it: a closed code, a sentence for people, and whether trying again may help. */
export interface StepError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

/** Who pressed or typed something, on which channel. */
export interface Actor {
  id: string;
  name?: string;
  channel: string;
  /**
   * The platform roles the person held when they acted, as the platform reported them with the action (Discord's
   * member roles); an approver may be named by role. Never stored: a role counts only as of the press.
   */
  roles?: string[];
}

/** How much a person wants to review: every plan, only medium and high risk ones (default), or none. */
export type ReviewPreference = 'all' | 'risky' | 'none';

/** A person's action on a run. */
export type DecisionAction =
  'approve' | 'amend' | 'cancel' | 'pause' | 'resume' | 'stop' | 'edit' | 'breakpoint' | 'raise' | 'widen';
