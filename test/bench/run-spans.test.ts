import { describe, expect, it } from 'vitest';
import { ALL_CALLS, inFlightMs, QUICK_CALLS, quickPhases, RecordingTelemetry, unionMs } from '../../bench/run-spans.ts';

const t = (ms: number) => new Date(1_000_000 + ms);
const model = (role: 'butler' | 'planner', start: number, end: number) => ({
  runId: 'r1',
  role,
  model: 'm',
  inputTokens: 1,
  outputTokens: 1,
  startedAt: t(start),
  endedAt: t(end),
});
const call = (stepId: string, start: number, end: number) => ({
  runId: 'r1',
  stepId,
  attempt: 1,
  tool: 'x.y',
  outcome: 'ok',
  startedAt: t(start),
  endedAt: t(end),
  args: {},
  output: null,
});

describe("Steward's own time from its spans", () => {
  it('counts overlapping intervals once, and gaps not at all', () => {
    expect(unionMs([])).toBe(0);
    expect(unionMs([{ start: 10, end: 20 }])).toBe(10);
    expect(
      unionMs([
        { start: 30, end: 40 },
        { start: 10, end: 20 },
        { start: 15, end: 25 },
        { start: 32, end: 35 },
      ]),
    ).toBe(25);
  });

  it("a quick answer's path leaves out the planner asked beside it; a planned run counts every call", () => {
    const telemetry = new RecordingTelemetry();
    telemetry.modelCalled(model('planner', 0, 200));
    telemetry.modelCalled(model('butler', 5, 50));
    for (let i = 1; i <= 8; i++) telemetry.stepAttemptEnded(call(`quick:${i}`, 60, 80 + i));
    telemetry.modelCalled(model('butler', 95, 150));
    const spans = telemetry.take('r1');
    expect(inFlightMs(spans, QUICK_CALLS)).toBe(45 + 28 + 55);
    expect(inFlightMs(spans, ALL_CALLS)).toBe(200);
    expect(quickPhases(spans, t(0).getTime(), t(160).getTime())).toEqual({
      before: 5,
      toCalls: 10,
      toModel: 7,
      after: 10,
    });
    // Taken once: a call told later starts a new record.
    expect(telemetry.take('r1')).toEqual({ models: [], attempts: [] });
  });
});
