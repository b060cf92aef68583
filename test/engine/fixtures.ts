/** Builders for engine tests: tools, plans, step policies, stored attempts and dispatch states, with overrides. */
import type { Plan } from '../../src/engine/plan/plan-schema.ts';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import type { StoredStepAttempt } from '../../src/engine/ports.ts';
import { createDispatchState, type DispatchState, type StepRuntime } from '../../src/engine/run/dispatch-state.ts';
import type { StepPolicy } from '../../src/engine/run/step-policies.ts';
import type { Json, StepError, ToolInfo } from '../../src/engine/types.ts';

/** A tool as the MCP host would report it. */
export function createTool(name: string, overrides: Partial<ToolInfo> = {}): ToolInfo {
  const [server = 'srv', tool = name] = name.split(/\.(.*)/s);
  return {
    name,
    server,
    tool,
    description: `the ${tool} tool`,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    annotations: { readOnlyHint: true },
    fingerprint: `fp-${name}`,
    definition: { name },
    ...overrides,
    policy: { allowed: true, timeoutMs: 1000, ...overrides.policy },
  };
}

/** A plan parsed through the real schema, so defaults apply as they do for the planner's output. */
export function createPlan(steps: unknown[], overrides: Record<string, unknown> = {}): Plan {
  return planSchema.parse({ summary: 'test plan', needsTools: true, steps, ...overrides });
}

/** A tool definition shaped as the MCP host pins it (name, title, description, schemas, annotations, server). */
export function createDefinition(overrides: Record<string, Json> = {}): Json {
  return {
    name: 'echo',
    title: 'Echo',
    description: 'Echoes back the input.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    outputSchema: null,
    annotations: { readOnlyHint: true },
    server: { name: 'everything', version: '1.0.0' },
    ...overrides,
  };
}

/** What the dispatcher knows about a step's tool: by default a low-risk, non-idempotent, unguarded tool. */
export function createPolicy(overrides: Partial<StepPolicy> = {}): StepPolicy {
  return { idempotent: false, timeoutMs: 1000, risk: 'low', guardRefs: false, trustedRefFields: [], ...overrides };
}

/** The same policy for every step of a plan, with per-step overrides. */
export function createPolicies(
  plan: Plan,
  overrides: Partial<StepPolicy> = {},
  perStep: Record<string, Partial<StepPolicy>> = {},
): Record<string, StepPolicy> {
  return Object.fromEntries(plan.steps.map((s) => [s.id, createPolicy({ ...overrides, ...perStep[s.id] })]));
}

/** A step failure; retryable by default (a timeout). */
export function createStepError(overrides: Partial<StepError> = {}): StepError {
  return { code: 'timeout', message: 'timed out', retryable: true, ...overrides };
}

/** One stored attempt at a step, as the run store returns it: by default the first attempt, succeeded. */
export function createAttempt(stepId: string, overrides: Partial<StoredStepAttempt> = {}): StoredStepAttempt {
  return {
    stepId,
    attempt: 1,
    revision: 0,
    status: 'succeeded',
    args: {},
    output: null,
    error: null,
    startedAt: new Date('2026-01-01T10:00:00Z'),
    endedAt: new Date('2026-01-01T10:00:01Z'),
    ...overrides,
  };
}

/** A dispatch state for a plan, with some steps' runtimes set (e.g. already succeeded with an output). */
export function createState(
  plan: Plan,
  steps: Record<string, StepRuntime> = {},
  overrides: Partial<DispatchState> = {},
): DispatchState {
  const state = createDispatchState(plan, createPolicies(plan), { maxParallel: 4, maxAttempts: 3 });
  return { ...state, ...overrides, steps: { ...state.steps, ...steps } };
}
