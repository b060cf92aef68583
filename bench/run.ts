/**
 * `npm run bench`: dispatcher throughput and overhead, side by side in one run.
 * The same plans go through the real RunDriver with (a) no store, (b) PostgreSQL, (c) PGlite, and tools that
 * answer at once (in process) or the real server-everything over stdio. Figures are medians of interleaved rounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatchState } from '../src/engine/dispatch.ts';
import { createPlan } from '../test/engine/fixtures.ts';
import type { Notifier, RunStore, ToolRunner } from '../src/engine/ports.ts';
import { RunDriver } from '../src/engine/run-driver.ts';
import { McpHost } from '../src/mcp/mcp-host.ts';
import { openDatabase } from '../src/store/database.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { everythingStdioConfig, mcpConfig } from '../test/helpers/mcp-servers.ts';
import { createTestDatabase } from '../test/helpers/databases.ts';
import { benchSteering } from './steering.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const STEPS = 50;

const instantTools: ToolRunner = {
  listTools: () => [],
  callTool: async (_name, args) => ({ ok: true, output: { content: [{ type: 'text', text: JSON.stringify(args) }] } }),
};
const silent: Notifier = { send: async () => undefined };
const noStore = new Proxy({}, { get: () => async () => undefined }) as RunStore;

function plans() {
  const chain = createPlan(Array.from({ length: STEPS }, (_, i) => ({ id: `s${i}`, tool: 'everything.echo', args: { message: `m${i}` }, dependsOn: i ? [`s${i - 1}`] : [] })));
  const fan = createPlan(Array.from({ length: STEPS }, (_, i) => ({ id: `s${i}`, tool: 'everything.echo', args: { message: `m${i}` } })));
  return { chain, fan };
}

async function runOnce(plan: ReturnType<typeof createPlan>, tools: ToolRunner, store: RunStore, runId: string): Promise<number> {
  const policies = Object.fromEntries(plan.steps.map((s) => [s.id, { idempotent: true, timeoutMs: 10_000, risk: 'low' as const, guardRefs: false, trustedRefFields: [] }]));
  const state = createDispatchState(plan, policies, { maxParallel: 8, maxAttempts: 1 });
  await store.createRun({ id: runId, conversation: { channel: 'bench', key: runId }, requester: { id: 'bench', channel: 'bench' }, request: 'bench', at: new Date() });
  await store.saveRevision(runId, 0, plan, 'bench', new Date());
  const driver = new RunDriver(runId, 0, { channel: 'bench', key: runId }, state, {
    tools, llm: { complete: () => Promise.reject(new Error('no llm in bench')) }, store, notifier: silent,
    clock: () => new Date(), log: () => undefined, recordUsage: async () => undefined, onHeld: () => undefined,
  });
  const t0 = performance.now();
  driver.start();
  const final = await driver.done;
  if (final.outcome !== 'completed') throw new Error(`bench run ended ${final.outcome}`);
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const pgliteDir = mkdtempSync(join(tmpdir(), 'steward-bench-'));
  let t = performance.now();
  const pglite = await openDatabase({ dataDir: pgliteDir });
  const pgliteOpen = performance.now() - t;
  await pglite.close();
  t = performance.now();
  const pgliteAgain = await openDatabase({ dataDir: pgliteDir });
  const pgliteReopen = performance.now() - t;
  const postgres = await createTestDatabase('postgres');
  t = performance.now();
  const { host } = await McpHost.connect(mcpConfig(everythingStdioConfig()));
  const mcpConnect = performance.now() - t;

  const stores: Record<string, RunStore> = { none: noStore, postgres: new PgRunStore(postgres.db), pglite: new PgRunStore(pgliteAgain.db) };
  const toolSets: Record<string, ToolRunner> = { 'in-process': instantTools, 'mcp stdio': host };
  const { chain, fan } = plans();
  const rows: { shape: string; tools: string; store: string; ms: number[] }[] = [];
  for (const shape of ['chain', 'fan']) {
    for (const tools of Object.keys(toolSets)) for (const store of Object.keys(stores)) rows.push({ shape, tools, store, ms: [] });
  }
  let n = 0;
  for (let round = 0; round <= ROUNDS; round++) {
    // Interleave every configuration in each round; round 0 is the warm-up and is not counted.
    for (const row of rows) {
      const ms = await runOnce(row.shape === 'chain' ? chain : fan, toolSets[row.tools]!, stores[row.store]!, `bench-${n++}`);
      if (round > 0) row.ms.push(ms);
    }
  }

  const out: string[] = [];
  out.push(`Steward bench: ${STEPS}-step plans, median of ${ROUNDS} interleaved rounds, Node ${process.version}, ${(await import('node:os')).cpus().length} cores.`, '');
  out.push('| shape | tools | store | run ms | ms / step | steps / s | vs no store |', '|---|---|---|---:|---:|---:|---:|');
  for (const row of rows) {
    const m = median(row.ms);
    const base = median(rows.find((r) => r.shape === row.shape && r.tools === row.tools && r.store === 'none')!.ms);
    out.push(`| ${row.shape} | ${row.tools} | ${row.store} | ${m.toFixed(1)} | ${(m / STEPS).toFixed(3)} | ${Math.round((STEPS * 1000) / m)} | ${(m / base).toFixed(2)}× |`);
  }
  out.push('', '| start-up | ms |', '|---|---:|');
  out.push(`| PGlite: new data folder + migrations | ${pgliteOpen.toFixed(0)} |`);
  out.push(`| PGlite: reopen existing data | ${pgliteReopen.toFixed(0)} |`);
  out.push(`| MCP: spawn server-everything + initialize + list tools | ${mcpConnect.toFixed(0)} |`);
  out.push('', ...(await benchSteering(Number(process.env.BENCH_STEER_ROUNDS ?? 30))));
  console.log(out.join('\n'));

  await host.close();
  await pgliteAgain.close();
  await postgres.close();
  rmSync(pgliteDir, { recursive: true, force: true });
}

await main();
