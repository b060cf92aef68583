/** Builders for platform-neutral messages, with overrides, for the Slack adapter's unit tests. */
import type { PlanCard, PlanCardStep, ProgressUpdate } from '../../../src/engine/messages.ts';

/** A plan-card step; `n` numbers it. */
export function createStep(n: number, overrides: Partial<PlanCardStep> = {}): PlanCardStep {
  return {
    number: n,
    id: `step_${n}`,
    kind: 'tool',
    target: 'everything.echo',
    argsPreview: `{"message":"hello ${n}"}`,
    dependsOn: [],
    description: `say hello ${n}`,
    optional: false,
    risk: 'low',
    ...overrides,
  };
}

/** A plan card waiting for review, from Ada (U0ADA). */
export function createPlanCard(overrides: Partial<PlanCard> = {}): PlanCard {
  const steps = overrides.steps ?? [createStep(1), createStep(2, { dependsOn: ['step_1'] })];
  return {
    kind: 'plan',
    runId: '6f1c1a52-93a4-4e5e-9b53-0d6f0e0c0a01',
    revision: 0,
    summary: 'Say hello twice',
    steps,
    layers: [steps.map((s) => s.id)],
    risk: 'medium',
    risks: [],
    needsReview: true,
    amendmentsLeft: 3,
    requester: { id: 'U0ADA', channel: 'slack' },
    actions: ['approve', 'amend', 'cancel'],
    breakpoints: [],
    breakpointsBefore: [],
    suggestedBreakpoints: [],
    warnings: [],
    ...overrides,
  };
}

/** A progress update for a step. */
export function createProgress(overrides: Partial<ProgressUpdate> = {}): ProgressUpdate {
  return {
    kind: 'progress',
    runId: createPlanCard().runId,
    stepId: 'step_1',
    status: 'running',
    detail: 'calling everything.echo',
    finished: 0,
    total: 2,
    ...overrides,
  };
}

/** Every text string anywhere in a block tree. */
export function allTexts(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(allTexts);
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
      k === 'text' && typeof v === 'string' ? [v] : allTexts(v),
    );
  }
  return [];
}
