/**
 * Benchmark 3: the dispatcher's own cost. The same plans go through the real RunDriver with no store, PostgreSQL
 * (as configured, and with synchronous_commit off to show what waiting for each commit's WAL flush costs) or
 * PGlite, and tools that answer at once (in process) or server-everything's `echo` over stdio or Streamable HTTP.
 * Tool time is measured per call and taken out: overhead = run time − the tools' critical path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatchState } from '../src/engine/run/dispatch-state.ts';
import type { Notifier, RunRecords, StepLog, ToolRunner } from '../src/engine/ports.ts';
import { RunDriver } from '../src/engine/flows/run-driver.ts';
import { McpHost } from '../src/mcp/mcp-host.ts';
import { openDatabase, type StoreDatabase } from '../src/store/database.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { createPlan } from '../test/engine/fixtures.ts';
import pg from 'pg';
import { createTestDatabase, testDatabaseUrl, testDatabaseUrlFor } from '../test/helpers/databases.ts';
import { everythingStdioConfig, mcpConfig } from '../test/helpers/mcp-servers.ts';
import { header, median, row, spread, sum } from './stats.ts';
import { Timeline, timedTools } from './timeline.ts';

/** One measured run of the dispatcher. */
export interface OverheadRow {
  section: 'overhead';
  shape: string;
  tools: string;
  store: string;
  steps: number;
  round: number;
  wallMs: number;
  toolMs: number;
  overheadMs: number;
}

const MAX_PARALLEL = 8;
const SHAPES = { single: 1, chain: 50, fan: 50 } as const;
type OverheadShape = keyof typeof SHAPES;

const instantTools: ToolRunner = {
  listTools: () => [],
  callTool: async (_name, args) => ({ ok: true, value: { content: [{ type: 'text', text: JSON.stringify(args) }] } }),
};
const silent: Notifier = { send: async () => undefined };
/** What a driven run needs stored: its row and plan, and its step attempts. */
type DriverStore = RunRecords & StepLog;

const noStore = new Proxy({}, { get: () => async () => undefined }) as DriverStore;

function planFor(shape: OverheadShape, server: string) {
  return createPlan(
    Array.from({ length: SHAPES[shape] }, (_, i) => ({
      id: `s${i}`,
      tool: `${server}.echo`,
      args: { message: `m${i}` },
      dependsOn: shape === 'chain' && i ? [`s${i - 1}`] : [],
    })),
  );
}

/** Runs one plan to its end through the RunDriver; returns the wall time. */
export async function runDriverOnce(
  plan: ReturnType<typeof createPlan>,
  tools: ToolRunner,
  store: DriverStore,
  runId: string,
): Promise<number> {
  const policies = Object.fromEntries(
    plan.steps.map((s) => [
      s.id,
      { idempotent: true, timeoutMs: 10_000, risk: 'low' as const, guardRefs: false, trustedRefFields: [] },
    ]),
  );
  const state = createDispatchState(plan, policies, { maxParallel: MAX_PARALLEL, maxAttempts: 1 });
  await store.createRun({
    id: runId,
    conversation: { channel: 'bench', key: runId },
    requester: { id: 'bench', channel: 'bench' },
    request: 'bench',
    at: new Date(),
    // Held from the start (fence 0), as Steward holds a run it drives, so every step write is fenced.
    leaseMs: 60_000,
  });
  await store.saveRevision(runId, 0, plan, 'bench', new Date());
  const driver = new RunDriver(
    { runId, revision: 0, conversation: { channel: 'bench', key: runId }, pins: [], fence: 0 },
    state,
    {
      tools,
      llm: { complete: () => Promise.reject(new Error('no llm in bench')) },
      store,
      notifier: silent,
      clock: () => new Date(),
      log: () => undefined,
      onHold: () => undefined,
      onLost: () => undefined,
    },
  );
  const t0 = performance.now();
  driver.start();
  const final = await driver.done;
  if (final.outcome !== 'completed') throw new Error(`bench run ended ${final.outcome}`);
  return performance.now() - t0;
}

/** A second pool on the same database whose sessions do not wait for the WAL flush at commit. */
async function openAsyncCommit(name: string): Promise<StoreDatabase> {
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  } finally {
    await admin.end();
  }
  return openDatabase({ databaseUrl: testDatabaseUrlFor(name), dataDir: tmpdir() });
}

/** `runs` 50-step chains with tools that answer at once on `store` (for the CPU profile). */
export async function driverChains(store: DriverStore, runs: number): Promise<void> {
  for (let i = 0; i < runs; i++)
    await runDriverOnce(planFor('chain', 'everything'), instantTools, store, `profile-${i}-${crypto.randomUUID()}`);
}

/** The tools' lower bound: their sum in a chain, otherwise the longest call or the busy time spread over the lanes. */
function toolBound(shape: OverheadShape, durations: number[]): number {
  if (shape !== 'fan') return sum(durations);
  return Math.max(0, ...durations, sum(durations) / MAX_PARALLEL);
}

/** Runs every configuration, interleaved, `rounds` times after a warm-up round. */
export async function benchOverhead(options: {
  rounds: number;
  tools: ToolRunner;
  onRow: (r: OverheadRow) => void;
}): Promise<{ lines: string[]; rows: OverheadRow[] }> {
  const pgliteDir = mkdtempSync(join(tmpdir(), 'steward-bench-'));
  let t = performance.now();
  const first = await openDatabase({ dataDir: pgliteDir });
  const pgliteOpen = performance.now() - t;
  await first.close();
  t = performance.now();
  const pglite = await openDatabase({ dataDir: pgliteDir });
  const pgliteReopen = performance.now() - t;
  t = performance.now();
  const { host } = await McpHost.connect(mcpConfig(everythingStdioConfig()));
  const mcpConnect = performance.now() - t;
  await host.close();
  const postgres = await createTestDatabase('postgres');
  const asyncCommit = await openAsyncCommit(postgres.name);
  const timeline = new Timeline();
  const stores: Record<string, DriverStore> = {
    none: noStore,
    postgres: new PgRunStore(postgres.db),
    'postgres, async commit': new PgRunStore(asyncCommit.db),
    pglite: new PgRunStore(pglite.db),
  };
  const transports: Record<string, { runner: ToolRunner; server: string }> = {
    'in-process': { runner: instantTools, server: 'everything' },
    'mcp stdio': { runner: options.tools, server: 'everything' },
    'mcp http': { runner: options.tools, server: 'web' },
  };
  const rows: OverheadRow[] = [];
  let n = 0;
  try {
    for (let round = 0; round <= options.rounds; round++) {
      // Every configuration in each round; round 0 is the warm-up and is not counted.
      for (const shape of Object.keys(SHAPES) as OverheadShape[]) {
        for (const [tools, { runner, server }] of Object.entries(transports)) {
          for (const [storeName, store] of Object.entries(stores)) {
            timeline.reset();
            const wallMs = await runDriverOnce(
              planFor(shape, server),
              timedTools(runner, timeline),
              store,
              `bench-${n++}`,
            );
            const toolMs = toolBound(
              shape,
              timeline.spans.map((s) => s.end - s.start),
            );
            const r: OverheadRow = {
              section: 'overhead',
              shape,
              tools,
              store: storeName,
              steps: SHAPES[shape],
              round,
              wallMs,
              toolMs,
              overheadMs: wallMs - toolMs,
            };
            if (round > 0) {
              rows.push(r);
              options.onRow(r);
            }
          }
        }
      }
    }
  } finally {
    await pglite.close();
    await asyncCommit.close();
    await postgres.close();
    rmSync(pgliteDir, { recursive: true, force: true });
  }
  return {
    rows,
    lines: [...overheadTable(rows, options.rounds), '', ...startupTable(pgliteOpen, pgliteReopen, mcpConnect)],
  };
}

function overheadTable(rows: OverheadRow[], rounds: number): string[] {
  const out = [
    `Plans of 1 step and of 50 steps (a chain, and a fan-out with maxParallel ${MAX_PARALLEL}) through the real RunDriver; medians of ${rounds} interleaved rounds, overhead with p25–p75. Overhead = run time − tools (chain: their sum; fan: the longest call or their sum over ${MAX_PARALLEL} lanes). "postgres, async commit" is the same server with synchronous_commit off: not a setting to run with (a crash could lose a step's committed intent), but the difference to "postgres" is what waiting for each commit's WAL flush costs.`,
    '',
    ...header(
      [
        'shape',
        'tools',
        'store',
        'run ms',
        'tools ms',
        'overhead ms / step',
        'overhead ms / run',
        'steps / s',
        'vs no store',
      ],
      3,
    ),
  ];
  const groups = new Map<string, OverheadRow[]>();
  for (const r of rows)
    groups.set(`${r.shape}|${r.tools}|${r.store}`, [...(groups.get(`${r.shape}|${r.tools}|${r.store}`) ?? []), r]);
  for (const [key, rs] of groups) {
    const [shape, tools] = key.split('|') as [string, string];
    const first = rs[0] as OverheadRow;
    const wall = median(rs.map((r) => r.wallMs));
    const base = median((groups.get(`${shape}|${tools}|none`) ?? rs).map((r) => r.wallMs));
    const over = rs.map((r) => r.overheadMs);
    out.push(
      row([
        first.shape,
        first.tools,
        first.store,
        wall.toFixed(1),
        median(rs.map((r) => r.toolMs)).toFixed(1),
        spread(
          over.map((o) => o / first.steps),
          3,
        ),
        spread(over, 1),
        Math.round((first.steps * 1000) / wall),
        `${(wall / base).toFixed(2)}×`,
      ]),
    );
  }
  return out;
}

function startupTable(pgliteOpen: number, pgliteReopen: number, mcpConnect: number): string[] {
  return [
    ...header(['start-up', 'ms']),
    row(['PGlite: new data folder + migrations', pgliteOpen.toFixed(0)]),
    row(['PGlite: reopen existing data', pgliteReopen.toFixed(0)]),
    row(['MCP: spawn server-everything + initialize + list tools', mcpConnect.toFixed(0)]),
  ];
}
