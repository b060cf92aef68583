/**
 * Timing wrappers around Steward's ports: every LLM call, tool call and store call is recorded as a span on one
 * timeline (runs in the bench are sequential, so the timeline is reset per run). Interval helpers measure how much
 * of one kind of span is not hidden behind another.
 */
import type { LlmClient, ToolRunner } from '../src/engine/ports.ts';

/** One timed call: `name` is the LLM role, the tool name or the store method. */
export interface Span {
  kind: 'llm' | 'tool' | 'store';
  name: string;
  /** Tool arguments as JSON, to match calls to plan steps. */
  detail?: string;
  start: number;
  end: number;
}

/** The spans of the run in progress. */
export class Timeline {
  spans: Span[] = [];

  reset(): void {
    this.spans = [];
  }

  /** Times a promise-returning call. */
  async time<T>(kind: Span['kind'], name: string, work: () => Promise<T>, detail?: string): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      this.spans.push({ kind, name, start, end: performance.now(), ...(detail === undefined ? {} : { detail }) });
    }
  }
}

/** An LlmClient that records each call under its role. */
export function timedLlm(inner: LlmClient, timeline: Timeline): LlmClient {
  return { complete: (request) => timeline.time('llm', request.role, () => inner.complete(request)) };
}

/** A ToolRunner that records each call with its arguments. */
export function timedTools(inner: ToolRunner, timeline: Timeline): ToolRunner {
  return {
    listTools: () => inner.listTools(),
    callTool: (name, args, options) =>
      timeline.time('tool', name, () => inner.callTool(name, args, options), JSON.stringify(args)),
  };
}

/** A ToolRunner whose results are passed on no sooner than `floorMs` after the call started (a modelled tool time). */
export function flooredTools(inner: ToolRunner, floorMs: number): ToolRunner {
  return {
    listTools: () => inner.listTools(),
    callTool: async (name, args, options) => {
      const started = performance.now();
      const outcome = await inner.callTool(name, args, options);
      const wait = floorMs - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return outcome;
    },
  };
}

/** A store (any of the run store's ports) whose every method is recorded. */
export function timedStore<S extends object>(inner: S, timeline: Timeline): S {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        timeline.time('store', String(prop), () =>
          (value as (...a: unknown[]) => Promise<unknown>).apply(target, args),
        );
    },
  });
}

type Interval = [number, number];

/** The union of intervals, sorted and merged. */
export function union(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const out: Interval[] = [];
  for (const [s, e] of sorted) {
    const last = out.at(-1);
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** Time covered by `a` and not by `b`. */
export function exclusiveMs(a: readonly Interval[], b: readonly Interval[]): number {
  const ub = union(b);
  let total = 0;
  for (const [s, e] of union(a)) {
    let covered = 0;
    for (const [bs, be] of ub) covered += Math.max(0, Math.min(e, be) - Math.max(s, bs));
    total += e - s - covered;
  }
  return total;
}

/** Spans as intervals. */
export function intervals(spans: readonly Span[]): Interval[] {
  return spans.map((s) => [s.start, s.end]);
}
