/**
 * Steward's Prometheus metrics, served at `/metrics` on the health port: the only file that imports prom-client.
 * Labels are low-cardinality on purpose (a status, a server and tool from the configuration, a model role and name,
 * a platform and API method); never a run id, an argument, a person or a secret. Each process keeps its own
 * registry, so several Steward processes in one test (or one process's restarts) never share a series.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How long a scrape reuses the runs-by-status read: a scraper polling every second cannot load the database. */
const RUNS_CACHE_MS = 5_000;

/** Seconds a step's tool call may take, as bucket bounds: from a quick read to a long export. */
const STEP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** What the metrics read at scrape time. */
export interface MetricSources {
  /** Runs by status, from the database. */
  runsByStatus: () => Promise<Record<string, number>>;
  /** Runs that need a process and have none, from the database. */
  runsAwaitingOwner?: () => Promise<number>;
  /** Runs this process holds a lease on. */
  runsLeased: () => number;
  /** Chat platform calls waiting in this process's outbox or in flight, by platform (only those that have one). */
  outboxPending?: () => Record<string, number>;
  now?: () => number;
  log?: (level: 'warn', message: string) => void;
}

/** One model call's settled usage, as the spend ledger records it. */
export interface ModelUse {
  role: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** At the catalog's prices; absent or null when the model has none (then no cost is counted). */
  costMicroUsd?: number | null;
}

/** Steward's metrics in one registry of their own, with Node's process metrics. */
export class PromMetrics {
  private readonly registry = new Registry();
  private readonly steps: Histogram<'server' | 'tool' | 'outcome'>;
  private readonly tokens: Counter<'role' | 'model' | 'direction'>;
  private readonly cost: Counter<'role' | 'model'>;
  private readonly limited: Counter<'platform' | 'method'>;
  /** Database reads kept for `RUNS_CACHE_MS`, by what they read. */
  private readonly reads = new Map<string, { at: number; value: Promise<unknown> }>();

  constructor(private readonly sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const read = () => this.cached('runs by status', sources.runsByStatus, {});
    const awaiting = sources.runsAwaitingOwner;
    const readAwaiting = awaiting && (() => this.cached<number | null>('runs awaiting an owner', awaiting, null));
    new Gauge({
      name: 'steward_runs',
      help: 'Runs in the database by status (read at most every 5 s).',
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        for (const [status, n] of Object.entries(await read())) this.set({ status }, n);
      },
    });
    if (readAwaiting)
      new Gauge({
        name: 'steward_runs_awaiting_owner',
        help: 'Runs that need a process and have none (never held, released, or their lease lapsed; read at most every 5 s).',
        registers,
        async collect() {
          // Not read: NaN, Prometheus's "unknown" (a gauge without labels always has a sample).
          this.set((await readAwaiting()) ?? Number.NaN);
        },
      });
    new Gauge({
      name: 'steward_runs_leased',
      help: 'Runs this process holds a lease on (drives or reports).',
      registers,
      collect() {
        this.set(sources.runsLeased());
      },
    });
    new Gauge({
      name: 'steward_outbox_pending',
      help: "Chat platform calls waiting in this process's outbox (paced, or after a 429) or in flight, by platform.",
      labelNames: ['platform'],
      registers,
      collect() {
        this.reset();
        for (const [platform, n] of Object.entries(sources.outboxPending?.() ?? {})) this.set({ platform }, n);
      },
    });
    this.steps = new Histogram({
      name: 'steward_step_duration_seconds',
      help: 'An MCP tool call (a step attempt or a quick answer), from asking to its answer (slot wait included).',
      labelNames: ['server', 'tool', 'outcome'],
      buckets: STEP_BUCKETS,
      registers,
    });
    this.tokens = new Counter({
      name: 'steward_model_tokens_total',
      help: 'Model tokens settled in the spend ledger, by role, model and direction (input or output).',
      labelNames: ['role', 'model', 'direction'],
      registers,
    });
    this.cost = new Counter({
      name: 'steward_model_cost_usd_total',
      help: "Model cost in US dollars at the catalog's prices (models without prices add nothing).",
      labelNames: ['role', 'model'],
      registers,
    });
    this.limited = new Counter({
      name: 'steward_outbox_rate_limited_total',
      help: 'Calls a chat platform answered with 429 (each is sent again after Retry-After), by platform and method.',
      labelNames: ['platform', 'method'],
      registers,
    });
  }

  /** Notes a tool call that ended: `server.tool`, its outcome (`ok`, `tool_error` or a step error code), seconds. */
  stepEnded(tool: string, outcome: string, seconds: number): void {
    const dot = tool.indexOf('.');
    this.steps.observe({ server: tool.slice(0, Math.max(0, dot)), tool: tool.slice(dot + 1), outcome }, seconds);
  }

  /** Notes a model call's settled tokens and cost. */
  modelUsed(use: ModelUse): void {
    const { role, model } = use;
    this.tokens.inc({ role, model, direction: 'input' }, use.inputTokens);
    this.tokens.inc({ role, model, direction: 'output' }, use.outputTokens);
    if (typeof use.costMicroUsd === 'number') this.cost.inc({ role, model }, use.costMicroUsd / 1_000_000);
  }

  /** Notes a 429 from a chat platform. */
  rateLimited(platform: string, method: string): void {
    this.limited.inc({ platform, method });
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** A read shared by scrapes within `RUNS_CACHE_MS`; a failed one is logged, gives `empty`, and is not kept. */
  private cached<T>(what: string, read: () => Promise<T>, empty: T): Promise<T> {
    const now = (this.sources.now ?? Date.now)();
    const kept = this.reads.get(what);
    if (kept && now - kept.at < RUNS_CACHE_MS) return kept.value as Promise<T>;
    const value = read().catch((err: unknown) => {
      this.reads.delete(what);
      this.sources.log?.('warn', `metrics: ${what} not read: ${(err as Error).message}`);
      return empty;
    });
    this.reads.set(what, { at: now, value });
    return value;
  }
}
