/**
 * The Steward of the workflow bench, wired as the composition root wires it: PostgreSQL (a fresh test database,
 * Steward's default pool), the audit MCP server over stdio, the fake LLM through the real openai SDK, production
 * settings, the workflow store and the croner calendar. The notifier only counts what is sent (no channel's cost is
 * measured here), and a watch on the run store notes, in memory, when each run completed and when its report went
 * out, so the bench waits on those facts. Steward's pool is opened here so its statements can be counted.
 */
import { Kysely, PostgresDialect, type LogEvent } from 'kysely';
import pg from 'pg';
import { DEFAULT_DB_POOL_SIZE } from '../src/config.ts';
import { CronerCalendar } from '../src/cron/croner-calendar.ts';
import { Steward } from '../src/engine/flows/steward.ts';
import type { RunStore } from '../src/engine/ports.ts';
import { createLlmClient } from '../src/llm/model-router.ts';
import { McpHost } from '../src/mcp/mcp-host.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { PgWorkflowStore } from '../src/store/pg-workflow-store.ts';
import type { DatabaseSchema } from '../src/store/schema.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../test/helpers/databases.ts';
import { auditStdioConfig, mcpConfig } from '../test/helpers/mcp-servers.ts';
import { PRODUCTION_SETTINGS } from './bench-steward.ts';
import { withOverrides } from './store-overrides.ts';

/** When each run started running, completed, and sent its report (epoch ms), as the run store it watches saw it. */
export class RunTimes {
  readonly runningAt = new Map<string, number>();
  readonly completedAt = new Map<string, number>();
  readonly reportedAt = new Map<string, number>();
  changed: () => void = () => undefined;

  /** `store`, with the transitions it won and the reports it marked sent noted here. */
  watch(store: RunStore): RunStore {
    return withOverrides(store, {
      transition: async (runId, from, to, options) => {
        const won = await store.transition(runId, from, to, options);
        if (won && to === 'running' && !this.runningAt.has(runId)) this.runningAt.set(runId, Date.now());
        if (won && to === 'completed') this.completedAt.set(runId, Date.now());
        return won;
      },
      markReportSent: async (runId, at) => {
        await store.markReportSent(runId, at);
        this.reportedAt.set(runId, Date.now());
        this.changed();
      },
    });
  }
}

/** Statements Steward sent, by verb and first table (e.g. `update runs`): how many, and their time in ms. */
export class StatementStats {
  readonly byKind = new Map<string, { count: number; ms: number }>();

  record(e: LogEvent): void {
    const text = e.query.sql;
    const verb = /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase() ?? '?';
    const table = /\b(?:from|into|update)\s+"?(\w+)"?/i.exec(text)?.[1] ?? '';
    const key = `${verb} ${table}`.trim();
    const k = this.byKind.get(key) ?? { count: 0, ms: 0 };
    k.count += 1;
    k.ms += e.queryDurationMillis;
    this.byKind.set(key, k);
  }

  reset(): void {
    this.byKind.clear();
  }
}

/** The running Steward and what the bench reads of it. */
export interface WorkflowSteward {
  steward: Steward;
  host: McpHost;
  db: TestDatabase;
  store: RunStore;
  /** When each run started running, completed and reported. */
  times: RunTimes;
  workflows: PgWorkflowStore;
  /** Messages Steward sent (cards, reports, notices). */
  sent: { count: number };
  /** Connections in Steward's pool. */
  poolMax: number;
  /** Statements Steward's pool ran (the bench's own reads go through `db`, uncounted). */
  statements: StatementStats;
  /** Warnings and errors Steward logged, counted, with the first few kept. */
  logs: { warnings: number; errors: number; first: string[] };
  /** Resolves once `n` runs have sent their report; rejects after `timeoutMs` saying how far it got. */
  reported(n: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts Steward on a fresh PostgreSQL database against the fake LLM at `llmBaseURL`. */
export async function startWorkflowSteward(o: { llmBaseURL: string; auditLog: string }): Promise<WorkflowSteward> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  try {
    const db = await createTestDatabase('postgres');
    cleanups.push(() => db.close());
    const { host, failures } = await McpHost.connect(mcpConfig(auditStdioConfig(o.auditLog)));
    cleanups.push(() => host.close());
    if (failures.length > 0) throw new Error(`MCP servers failed: ${JSON.stringify(failures)}`);
    const logs = { warnings: 0, errors: 0, first: [] as string[] };
    const log = (level: 'info' | 'warn' | 'error', message: string) => {
      if (level === 'info') return;
      logs[level === 'warn' ? 'warnings' : 'errors'] += 1;
      if (logs.first.length < 20) logs.first.push(`${level} ${message}`);
    };
    // Steward's own pool, as src/store/database.ts opens it, with every statement counted.
    const statements = new StatementStats();
    // BENCH_DB_POOL_SIZE tries another size (as in sections 5 and 6); Steward's default otherwise.
    const poolMax = Number(process.env['BENCH_DB_POOL_SIZE']) || DEFAULT_DB_POOL_SIZE;
    const pool = new pg.Pool({
      connectionString: testDatabaseUrlFor(db.name),
      connectionTimeoutMillis: 10_000,
      max: poolMax,
    });
    pool.on('error', () => undefined);
    const kysely = new Kysely<DatabaseSchema>({
      dialect: new PostgresDialect({ pool }),
      log: (e) => statements.record(e),
    });
    cleanups.push(() => kysely.destroy());
    const runs = new PgRunStore(kysely);
    const times = new RunTimes();
    const store = times.watch(runs);
    const workflows = new PgWorkflowStore(kysely, { owner: runs.owner });
    const models = {
      planner: 'planner-model',
      classifier: 'classifier-model',
      synthesizer: 'synth-model',
      llm_step: 'step-model',
    };
    const sent = { count: 0 };
    const steward = new Steward({
      llm: createLlmClient({ openai: { apiKey: 'bench', baseURL: o.llmBaseURL }, models }, log),
      tools: host,
      store,
      log,
      notifier: { send: async () => void (sent.count += 1) },
      clock: () => new Date(),
      newId: () => crypto.randomUUID(),
      settings: PRODUCTION_SETTINGS,
      signals: db.signals,
      workflows,
      calendar: new CronerCalendar(),
    });
    cleanups.push(() => steward.shutdown());
    const reported = (n: number, timeoutMs: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          times.changed = () => undefined;
          reject(new Error(`${times.reportedAt.size} of ${n} fired runs reported within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        times.changed = () => {
          if (times.reportedAt.size < n) return;
          clearTimeout(timer);
          resolve();
        };
        times.changed();
      });
    return { steward, host, db, store, times, workflows, poolMax, sent, statements, logs, reported, close };
  } catch (err) {
    await close();
    throw err;
  }
}
