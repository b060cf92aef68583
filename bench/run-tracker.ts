/**
 * What the concurrency bench watches in Steward's process while a load runs: each run's timeline (mention handled,
 * card posted, run ended, report delivered), the event-loop delay, the heap per run in flight (after a forced GC),
 * and how long pg pool checkouts waited.
 */
import { median, quantile } from './stats.ts';
import { createHistogram } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { SlackPeers } from './slack-peers.ts';
import type { StewardHooks } from './bench-steward.ts';
import type { SlackSteward } from './slack-steward.ts';

/** Everything a load level needs. */
export interface LoadContext {
  peers: SlackPeers;
  app: SlackSteward;
  tracker: RunTracker;
  auditLog: string;
}

/** The channel of the probe run, a run that stays live for the whole bench and whose card the presses land on. */
export const PROBE_CHANNEL = 'C0PROBE';

/** One run's timeline in epoch ms, keyed by its conversation (`<channel>:<thread ts>`). */
export interface RunTimes {
  inbound: number;
  runId?: string;
  /** When Steward handed the plan card to the channel (`card` is when the channel returned: Slack took it). */
  cardQueued?: number;
  card?: number;
  cardOk?: boolean;
  ended?: number;
  status?: string;
  /** When Steward handed the report to the channel (`report` is when Slack took it). */
  reportQueued?: number;
  report?: number;
  reportOk?: boolean;
  /** The run could not start (no plan): told with an error notice instead of a report. */
  refused?: boolean;
}

const TERMINAL = new Set(['completed', 'failed', 'stopped', 'cancelled']);

/**
 * Follows every run Steward handles, through the instrumented seams; counts stay O(1) to read, so polling is cheap.
 * Runs are keyed by their conversation key, or by `nameOf(key)` when given: Discord's keys are snowflakes, so the
 * Discord bench names each thread after its level (`D0N100X0042`) to watch a level by prefix as Slack's channels do.
 */
export class RunTracker {
  readonly runs = new Map<string, RunTimes>();

  constructor(private readonly nameOf: (conversationKey: string) => string = (key) => key) {}

  private readonly keys = new Map<string, string>();
  private readonly counts = new Map<string, { started: number; settled: number }>();
  private readonly done = new WeakSet<RunTimes>();

  readonly hooks: StewardHooks = {
    inbound: (kind, conversationKey, at) => {
      const key = this.nameOf(conversationKey);
      if (kind !== 'message' || this.runs.has(key)) return;
      this.runs.set(key, { inbound: at });
      for (const c of this.countsOf(key)) c.started += 1;
    },
    notify: (conversation, m, sentAt, doneAt, ok) => {
      const key = this.nameOf(conversation.key);
      const t = this.runs.get(key);
      if (!t) return;
      if (m.kind === 'plan' && t.runId === undefined) {
        Object.assign(t, { runId: m.runId, cardQueued: sentAt, card: doneAt, cardOk: ok });
        this.keys.set(m.runId, key);
      } else if (m.kind === 'report') Object.assign(t, { reportQueued: sentAt, report: doneAt, reportOk: ok });
      else if (m.kind === 'notice' && m.level === 'error' && t.runId === undefined) t.refused = true;
      this.settle(key, t);
    },
    committed: (runId, to, at) => {
      const t = this.runs.get(this.keys.get(runId) ?? '');
      if (t && TERMINAL.has(to)) Object.assign(t, { ended: at, status: to });
    },
  };

  /** Starts counting the runs of channels starting with `prefix` (before any of them is mentioned). */
  watch(prefix: string): void {
    this.counts.set(prefix, { started: 0, settled: 0 });
  }

  /** Runs whose conversation is in a channel starting with `prefix` (a scan: for the end of a level). */
  of(prefix: string): RunTimes[] {
    return [...this.runs].filter(([key]) => key.startsWith(prefix)).map(([, t]) => t);
  }

  /** Runs of a watched prefix with nothing more to come: reported, refused, or whose card never reached Slack (so no driver). */
  settled(prefix: string): number {
    return this.counts.get(prefix)?.settled ?? 0;
  }

  inFlight(prefix: string): number {
    const c = this.counts.get(prefix);
    return c ? c.started - c.settled : 0;
  }

  private countsOf(key: string): { started: number; settled: number }[] {
    return [...this.counts].filter(([prefix]) => key.startsWith(prefix)).map(([, c]) => c);
  }

  private settle(key: string, t: RunTimes): void {
    if (this.done.has(t) || !(t.report !== undefined || t.refused || t.cardOk === false)) return;
    this.done.add(t);
    for (const c of this.countsOf(key)) c.settled += 1;
  }
}

/** `global.gc`, exposed at run time when node was not started with --expose-gc. */
export const forceGc: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/** Heap in use after a full GC, in bytes. */
export function heapAfterGc(): number {
  forceGc();
  return process.memoryUsage().heapUsed;
}

const RESOLUTION_MS = 5;

/** Samples taken while a load level runs; `stop` returns them. */
export interface LoadSampler {
  stop(): LoadSamples;
}

/** What the sampler saw. */
export interface LoadSamples {
  eldP50Ms: number;
  eldP99Ms: number;
  eldMaxMs: number;
  /** Heap after GC minus the baseline, divided by the runs in flight then; at the sample with the most in flight. */
  heapPerRunBytes: number;
  inFlightAtHeap: number;
  /** Epoch-ms windows of forced GCs (presses acknowledged across one are set aside). */
  gcWindows: [number, number][];
  maxPoolWaiting: number;
}

/**
 * Starts sampling: event-loop delay (a 5 ms interval timer's lateness; the forced GCs are left out, since
 * monitorEventLoopDelay would count them), a GC-and-heap sample whenever the runs in flight grow by a quarter, and
 * the pool's waiting count every 5 ms.
 */
export function startSampling(o: {
  baseline: number;
  inFlight: () => number;
  waiting: () => number;
  now: () => number;
}): LoadSampler {
  const delays = createHistogram();
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    delays.record(Math.max(1, Math.round((now - last - RESOLUTION_MS) * 1000)));
    last = now;
  }, RESOLUTION_MS);
  let measuredAt = 0;
  let best = { perRun: Number.NaN, inFlight: 0 };
  let maxWaiting = 0;
  const gcWindows: [number, number][] = [];
  const memory = setInterval(() => {
    const n = o.inFlight();
    if (n <= Math.max(0, measuredAt * 1.25)) return;
    measuredAt = n;
    const start = o.now();
    const heap = heapAfterGc();
    gcWindows.push([start, o.now()]);
    last = performance.now();
    if (n >= best.inFlight) best = { perRun: (heap - o.baseline) / n, inFlight: n };
  }, 200);
  const pool = setInterval(() => (maxWaiting = Math.max(maxWaiting, o.waiting())), 5);
  return {
    stop() {
      for (const t of [tick, memory, pool]) clearInterval(t);
      const ms = (us: number) => us / 1000;
      return {
        eldP50Ms: ms(delays.percentile(50)),
        eldP99Ms: ms(delays.percentile(99)),
        eldMaxMs: ms(delays.max),
        heapPerRunBytes: best.perRun,
        inFlightAtHeap: best.inFlight,
        gcWindows,
        maxPoolWaiting: maxWaiting,
      };
    },
  };
}

/** The timing figures of a level's runs, the same on every platform (ms from the tracker's epoch clock). */
export function runFigures(runs: readonly RunTimes[]) {
  const firstIn = Math.min(...runs.map((r) => r.inbound));
  const lastOut = Math.max(...runs.map((r) => r.report ?? r.ended ?? r.inbound));
  const done = runs.filter((r) => r.status === 'completed');
  const runMs = done.flatMap((r) => (r.report !== undefined ? [r.report - r.inbound] : []));
  const engineMs = done.flatMap((r) => (r.ended !== undefined ? [r.ended - r.inbound] : []));
  const reportAfterEnd = done.flatMap((r) =>
    r.report !== undefined && r.ended !== undefined ? [r.report - r.ended] : [],
  );
  const reportInChannel = done.flatMap((r) =>
    r.report !== undefined && r.reportQueued !== undefined ? [r.report - r.reportQueued] : [],
  );
  return {
    wallS: (lastOut - firstIn) / 1000,
    runsPerS: done.length / ((lastOut - firstIn) / 1000),
    runP50Ms: median(runMs),
    runP99Ms: quantile(runMs, 0.99),
    engineP50Ms: median(engineMs),
    engineP99Ms: quantile(engineMs, 0.99),
    cardP50Ms: median(runs.flatMap((r) => (r.card !== undefined ? [r.card - r.inbound] : []))),
    reportAfterEndP50Ms: median(reportAfterEnd),
    reportAfterEndP99Ms: quantile(reportAfterEnd, 0.99),
    reportInChannelP50Ms: median(reportInChannel),
    reportInChannelP99Ms: quantile(reportInChannel, 0.99),
  };
}
