/**
 * The Steward side of the Slack and Discord benchmarks, wired as the composition root wires it (src/app.ts): a real
 * channel adapter (made by the caller), Steward with the production defaults, the audit MCP server over stdio,
 * PostgreSQL. Three seams are instrumented without touching src/: the ToolRunner (when each call starts, when its
 * signal aborts, when it settles), the store (when a state change commits), and the notifier (what Steward sends and
 * when the platform accepted it). The pg pool is opened here so its waits can be sampled.
 */
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { ChannelAdapter, InboundHandler } from '../src/engine/channel.ts';
import type { OutboundMessage } from '../src/engine/messages.ts';
import type { Conversation, RunStore, ToolCallOutcome, ToolRunner } from '../src/engine/ports.ts';
import { Steward, type StewardSettings } from '../src/engine/flows/steward.ts';
import type { RunStatus } from '../src/engine/types.ts';
import { DEFAULT_DB_POOL_SIZE, DEFAULT_MAX_PARALLEL } from '../src/config.ts';
import { createLlmClient } from '../src/llm/model-router.ts';
import { McpHost } from '../src/mcp/mcp-host.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import type { DatabaseSchema } from '../src/store/schema.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../test/helpers/databases.ts';
import { auditStdioConfig, mcpConfig } from '../test/helpers/mcp-servers.ts';
import { epochNow } from './slack-peers.ts';
import { withOverrides } from './store-overrides.ts';

/** Steward's defaults from src/config.ts (STEWARD_MAX_PARALLEL and friends, token budgets included). */
export const PRODUCTION_SETTINGS: StewardSettings = {
  maxParallel: DEFAULT_MAX_PARALLEL,
  maxAttempts: 3,
  amendmentCap: 3,
  maxRepairs: 2,
  reviewTimeoutMs: 900_000,
  approvers: [],
  budgets: { perRun: 200_000, perUserPerDay: 2_000_000 },
};

/** Callbacks for the instrumented seams; every time is epoch ms (`epochNow`). */
export interface StewardHooks {
  /** A tool call starts; the returned callbacks learn when its signal aborts and when it settles. */
  toolCall?: (name: string, at: number) => { aborted?: (at: number) => void; settled?: (at: number) => void } | void;
  /** A state change committed (the conditional UPDATE won). */
  committed?: (runId: string, to: RunStatus, at: number) => void;
  /** Steward handed a message to the channel at `sentAt`; the channel returned at `doneAt` (`ok`: no error). */
  notify?: (conversation: Conversation, message: OutboundMessage, sentAt: number, doneAt: number, ok: boolean) => void;
  /** A step's intent was committed (its row written before the call is sent). */
  stepStarted?: (runId: string, stepId: string, at: number) => void;
  /** A platform payload became an engine call (for Slack, after Bolt's ack). */
  inbound?: (kind: 'message' | 'decision', key: string, at: number) => void;
}

/** A running Steward on one channel adapter, with its pool for sampling. */
export interface BenchSteward<C extends ChannelAdapter> {
  steward: Steward;
  channel: C;
  store: RunStore;
  pool: pg.Pool;
  /** The pool's size: Steward's default (STEWARD_DB_POOL_SIZE) unless the bench asked for another. */
  poolMax: number;
  db: TestDatabase;
  /** Pool checkouts since the last `reset`: how long they took, and how many queued (all connections busy at the cap). */
  poolStats: PoolStats;
  /** Steward's log, counted (errors, warnings, failed card updates) with the first lines kept: not every line, so the heap figures stay Steward's. */
  logs: LogTally;
  close(): Promise<void>;
}

/** Counts of Steward's log lines, and the first warnings and errors. */
export interface LogTally {
  errors: number;
  warnings: number;
  cardUpdatesFailed: number;
  first: string[];
}

/**
 * `store`, reporting each committed state change and each step start to `hooks`. A start is written in a wave
 * (`recordSteps`, with the ends before it, or with a quick answer's round) or alone (`recordStepStarted`): both are
 * tapped, as is a run's end written with its last steps' ends.
 */
function hookedStore(store: RunStore, hooks: StewardHooks): RunStore {
  return withOverrides(store, {
    async transition(runId, from, to, options) {
      const won = await store.transition(runId, from, to, options);
      if (won) hooks.committed?.(runId, to, epochNow());
      return won;
    },
    async recordSteps(w) {
      const recorded = await store.recordSteps(w);
      if (!recorded.startsHeld) for (const s of w.started) hooks.stepStarted?.(w.runId, s.stepId, epochNow());
      // A run's end is usually written with its last steps' ends.
      if (w.endRun && recorded.runEnded) hooks.committed?.(w.runId, w.endRun.status, epochNow());
      return recorded;
    },
    async recordStepStarted(a) {
      await store.recordStepStarted(a);
      hooks.stepStarted?.(a.runId, a.stepId, epochNow());
    },
  });
}

function timedTools(host: McpHost, hooks: StewardHooks): ToolRunner {
  return {
    listTools: () => host.listTools(),
    refreshTool: (name, options) => host.refreshTool(name, options),
    async callTool(name, args, options): Promise<ToolCallOutcome> {
      const seen = hooks.toolCall?.(name, epochNow()) ?? {};
      options.signal.addEventListener('abort', () => seen.aborted?.(epochNow()), { once: true });
      try {
        return await host.callTool(name, args, options);
      } finally {
        seen.settled?.(epochNow());
      }
    },
  };
}

function timedHandler(steward: Steward, hooks: StewardHooks): InboundHandler {
  return {
    message: (m) => (hooks.inbound?.('message', m.conversation.key, epochNow()), steward.message(m)),
    decision: (d) => (hooks.inbound?.('decision', d.runId, epochNow()), steward.decision(d)),
    canDecide: (runId, actor) => steward.canDecide(runId, actor),
    claimDelivery: (id) => steward.claimDelivery(id),
    history: (runId, to) => steward.history(runId, to),
    setReviewPreference: (actor, p) => steward.setReviewPreference(actor, p),
    setBreakpointSuggestions: (actor, on) => steward.setBreakpointSuggestions(actor, on),
    activeRuns: (actor) => steward.activeRuns(actor),
    recentRuns: (actor, limit) => steward.recentRuns(actor, limit),
    reviewPreference: (actor) => steward.reviewPreference(actor),
    workflowsOf: (actor) => steward.workflowsOf(actor),
    editablePlan: (runId) => steward.editablePlan(runId),
    checkEdit: (d) => steward.checkEdit(d),
    workflowCommand: (r) => steward.workflowCommand(r),
    assistantCommand: (r) => steward.assistantCommand(r),
    dashboardLink: (a) => steward.dashboardLink(a),
    connections: (a, c) => steward.connections(a, c),
    answerQuestion: (a) => steward.answerQuestion(a),
    openQuestion: (id) => steward.openQuestion(id),
  };
}

/** Checkout counts and times in constant memory (a histogram, not a list), so they do not weigh on the heap figures. */
export class PoolStats {
  checkouts = 0;
  queued = 0;
  /** Statements sent (each `query` on a checked-out client, BEGIN and COMMIT included). */
  statements = 0;
  /** Checkout times in microseconds. */
  readonly micros: RecordableHistogram = createHistogram();

  record(ms: number, queued: boolean): void {
    this.checkouts += 1;
    if (queued) this.queued += 1;
    this.micros.record(Math.max(1, Math.round(ms * 1000)));
  }

  reset(): void {
    this.checkouts = 0;
    this.queued = 0;
    this.statements = 0;
    this.micros.reset();
  }
}

const counted = new WeakSet<pg.PoolClient>();

function countStatements(client: pg.PoolClient, stats: PoolStats): void {
  if (counted.has(client)) return;
  counted.add(client);
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    stats.statements += 1;
    return query(...args);
  };
}

/** Opens a pool like src/store/database.ts does (`max` connections, 10 s connect timeout), timing every checkout. */
function openPool(url: string, stats: PoolStats, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 10_000, max });
  pool.on('error', () => undefined);
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  // Kysely's PostgresDriver checks out with the promise form of connect().
  (pool as unknown as { connect: () => Promise<pg.PoolClient> }).connect = async () => {
    const queued = pool.idleCount === 0 && pool.totalCount >= max;
    const t = performance.now();
    const client = await connect();
    stats.record(performance.now() - t, queued);
    countStatements(client, stats);
    return client;
  };
  return pool;
}

/** Starts Steward on the channel `o.channel` makes (given Steward's log), against the fake LLM at `llmBaseURL`. */
export async function startBenchSteward<C extends ChannelAdapter>(o: {
  llmBaseURL: string;
  channel: (log: (level: 'info' | 'warn' | 'error', message: string) => void) => C;
  auditLog: string;
  hooks: StewardHooks;
  settings?: Partial<StewardSettings>;
  poolMax?: number;
}): Promise<BenchSteward<C>> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  try {
    const db = await createTestDatabase('postgres');
    cleanups.push(() => db.close());
    const poolStats = new PoolStats();
    const poolMax = o.poolMax ?? DEFAULT_DB_POOL_SIZE;
    const pool = openPool(testDatabaseUrlFor(db.name), poolStats, poolMax);
    const kysely = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
    cleanups.push(() => kysely.destroy());
    const { host, failures } = await McpHost.connect(mcpConfig(auditStdioConfig(o.auditLog)));
    cleanups.push(() => host.close());
    if (failures.length > 0) throw new Error(`MCP servers failed: ${JSON.stringify(failures)}`);
    const logs: LogTally = { errors: 0, warnings: 0, cardUpdatesFailed: 0, first: [] };
    const log = (level: string, message: string) => {
      if (level === 'error') logs.errors += 1;
      if (level === 'warn') logs.warnings += 1;
      if (message.includes('card update failed')) logs.cardUpdatesFailed += 1;
      if (level !== 'info' && logs.first.length < 50) logs.first.push(`${level} ${message}`);
    };
    const channel = o.channel(log);
    const store = hookedStore(new PgRunStore(kysely), o.hooks);
    const models = {
      planner: 'planner-model',
      classifier: 'classifier-model',
      synthesizer: 'synth-model',
      llm_step: 'step-model',
    };
    const steward = new Steward({
      llm: createLlmClient({ openai: { apiKey: 'bench', baseURL: o.llmBaseURL }, models }),
      tools: timedTools(host, o.hooks),
      store,
      log,
      notifier: {
        send: async (conversation, message) => {
          const sentAt = epochNow();
          let ok = false;
          try {
            await channel.send(conversation, message);
            ok = true;
          } finally {
            o.hooks.notify?.(conversation, message, sentAt, epochNow(), ok);
          }
        },
      },
      clock: () => new Date(),
      newId: () => crypto.randomUUID(),
      settings: { ...PRODUCTION_SETTINGS, ...o.settings },
    });
    await channel.start(timedHandler(steward, o.hooks));
    cleanups.push(async () => {
      await steward.shutdown();
      await channel.stop();
    });
    return { steward, channel, store, pool, poolMax, db, poolStats, logs, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A plan the fake planner returns: `steps` as given, as JSON text. */
export function planText(summary: string, steps: Record<string, unknown>[]): string {
  return JSON.stringify({ summary, needsTools: true, steps });
}
