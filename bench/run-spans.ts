/**
 * Steward's own time per request, from what it tells of its work (the telemetry port, src/engine/run-telemetry.ts)
 * rather than from a latency model: the wall time from the message to the answer, less the union of the intervals in
 * which one of the run's model calls or tool calls (step attempts) was in flight. What is left is time no call was
 * out: Steward's own CPU, its database writes and reads, and its waits on the event loop.
 *
 * The port's timestamps are Dates (whole milliseconds): each interval's ends are truncated alike, so its length is off
 * by less than 1 ms either way and unbiased; medians over a section's runs are good to well under a millisecond.
 */
import type { ModelCallTelemetry, RunTelemetry, StepAttemptTelemetry } from '../src/engine/run-telemetry.ts';

/** The calls one run told of. */
export interface RunSpans {
  models: ModelCallTelemetry[];
  attempts: StepAttemptTelemetry[];
}

/** A RunTelemetry that keeps every run's calls until they are taken. */
export class RecordingTelemetry implements RunTelemetry {
  private readonly runs = new Map<string, RunSpans>();

  modelCalled(call: ModelCallTelemetry): void {
    this.of(call.runId).models.push(call);
  }

  stepAttemptEnded(attempt: StepAttemptTelemetry): void {
    this.of(attempt.runId).attempts.push(attempt);
  }

  runEnded(): void {}

  /** The run's calls told so far, forgotten here (one told later, as a dropped call's, starts a new record). */
  take(runId: string): RunSpans {
    const spans = this.runs.get(runId) ?? { models: [], attempts: [] };
    this.runs.delete(runId);
    return spans;
  }

  /** Forgets every run (calls told after their run was measured). */
  clear(): void {
    this.runs.clear();
  }

  private of(runId: string): RunSpans {
    let spans = this.runs.get(runId);
    if (!spans) this.runs.set(runId, (spans = { models: [], attempts: [] }));
    return spans;
  }
}

/** A span of time, in milliseconds. */
export interface Interval {
  start: number;
  end: number;
}

/** How long at least one of `intervals` covers (overlaps counted once). */
export function unionMs(intervals: readonly Interval[]): number {
  const sorted = [...intervals].filter((i) => i.end > i.start).sort((a, b) => a.start - b.start);
  let total = 0;
  let open: Interval | undefined;
  for (const i of sorted) {
    if (open && i.start <= open.end) open.end = Math.max(open.end, i.end);
    else {
      if (open) total += open.end - open.start;
      open = { ...i };
    }
  }
  return open ? total + open.end - open.start : total;
}

/** Which of a run's calls count as in flight: all of them, or those a quick answer waited on. */
export type SpanFilter = { model: (c: ModelCallTelemetry) => boolean; attempt: (a: StepAttemptTelemetry) => boolean };

export const ALL_CALLS: SpanFilter = { model: () => true, attempt: () => true };

/**
 * A quick answer's own path: its butler calls and its rounds' tool calls. The planner call asked beside the front
 * desk is in flight the whole while but off the path (it is dropped when the front desk answers), so it is not counted.
 */
export const QUICK_CALLS: SpanFilter = {
  model: (c) => c.role === 'butler',
  attempt: (a) => a.stepId.startsWith('quick:'),
};

/** The time in which a counted call was in flight. */
export function inFlightMs(spans: RunSpans, filter: SpanFilter): number {
  const span = (s: { startedAt: Date; endedAt: Date }) => ({ start: s.startedAt.getTime(), end: s.endedAt.getTime() });
  return unionMs([...spans.models.filter(filter.model).map(span), ...spans.attempts.filter(filter.attempt).map(span)]);
}

/**
 * Where a quick answer's own time went, in ms: before its first butler call (from `startMs`, the message), between
 * its turns (from a butler call's end to its round's first call sent, and from the round's last call back to the
 * next butler call), and after its last butler call (to `endMs`, the answer sent). Time zones of the clock the spans
 * were told in (Date milliseconds).
 */
export function quickPhases(spans: RunSpans, startMs: number, endMs: number): Record<string, number> {
  const models = spans.models.filter(QUICK_CALLS.model).sort((a, b) => +a.startedAt - +b.startedAt);
  const calls = spans.attempts.filter(QUICK_CALLS.attempt);
  const first = models[0];
  const last = models[models.length - 1];
  if (!first || !last) return {};
  let toCalls = 0;
  let toModel = 0;
  for (const [i, m] of models.entries()) {
    const next = models[i + 1];
    if (!next) break;
    const round = calls.filter((c) => +c.startedAt >= +m.endedAt && +c.endedAt <= +next.startedAt);
    if (round.length === 0) continue;
    toCalls += Math.min(...round.map((c) => +c.startedAt)) - +m.endedAt;
    toModel += +next.startedAt - Math.max(...round.map((c) => +c.endedAt));
  }
  return { before: +first.startedAt - startMs, toCalls, toModel, after: endMs - +last.endedAt };
}
