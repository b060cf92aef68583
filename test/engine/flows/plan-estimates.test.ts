import { describe, expect, it } from 'vitest';
import type { EstimateHistoryData } from '../../../src/engine/estimate-history.ts';
import { PlanEstimates } from '../../../src/engine/flows/plan-estimates.ts';
import { validatePlan } from '../../../src/engine/plan/validate-plan.ts';
import { createPlan, createTool } from '../fixtures.ts';

const history: EstimateHistoryData = { tools: { 'srv.work': { p50Ms: 100, p90Ms: 200, samples: 5 } }, roles: {} };

function fanOut(n: number) {
  const steps = Array.from({ length: n }, (_, i) => ({ id: `s${i + 1}`, tool: 'srv.work' }));
  const v = validatePlan(createPlan(steps), [createTool('srv.work')]);
  if (!v.ok) throw new Error(v.error.join('; '));
  return v.value;
}

function estimates(maxParallel?: number): PlanEstimates {
  return new PlanEstimates({
    history: { readEstimateHistory: async () => history },
    clock: () => new Date(0),
    log: () => undefined,
    prices: [],
    maxParallel,
  });
}

describe("a plan card's estimate", () => {
  it('counts the waves the settings’ maxParallel runs a fan-out in', async () => {
    expect((await estimates(4).forCard('run', 1, fanOut(10)))?.durationMs).toEqual({ low: 300, high: 600 });
    expect((await estimates(10).forCard('run', 1, fanOut(10)))?.durationMs).toEqual({ low: 100, high: 200 });
  });
});
