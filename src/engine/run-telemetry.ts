/**
 * What Steward tells of its runs' work as it happens, for traces: each model call of a run, each step attempt that
 * was sent (a plan's or the quick loop's), and each run's end. The composition root wires an adapter (src/tracing.ts,
 * OpenTelemetry) when traces are exported; without one nothing is told. Each call returns at once and never throws:
 * telemetry never holds up or breaks a run. Run ends are told by the store's wrapper in flows/run-ends.ts.
 */
import type { ModelRole } from './ports.ts';
import type { Json, RunStatus } from './types.ts';

/** One model call made for a run, ended (answered or failed). */
export interface ModelCallTelemetry {
  runId: string;
  role: ModelRole;
  /** The model that answered (as the provider named it), or the one asked for when the call failed. */
  model: string;
  inputTokens: number;
  outputTokens: number;
  startedAt: Date;
  endedAt: Date;
  /** Why it failed; absent when it answered. */
  error?: string;
}

/** One step attempt whose call went out (or was refused right before it), ended. */
export interface StepAttemptTelemetry {
  runId: string;
  stepId: string;
  attempt: number;
  /** `server.tool`, or the step's kind for a step that is no tool call (`llm`). */
  tool: string;
  /** `ok`, `tool_error` (the tool answered `isError`) or the step's error code (`timeout`, `cancelled`...). */
  outcome: string;
  /** The error's message, when it failed. */
  error?: string;
  startedAt: Date;
  endedAt: Date;
  /** The arguments as sent and the output; the adapter keeps them only when content is opted in. */
  args: Json;
  output: Json | null;
}

/** A run that ended: its report stored, or a terminal status reached that owes no report. */
export interface RunEndTelemetry {
  runId: string;
  status: RunStatus;
  at: Date;
}

/** The telemetry port (see the file's comment). */
export interface RunTelemetry {
  modelCalled(call: ModelCallTelemetry): void;
  stepAttemptEnded(attempt: StepAttemptTelemetry): void;
  runEnded(end: RunEndTelemetry): void;
}
