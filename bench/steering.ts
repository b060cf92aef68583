/**
 * Pause and Stop latency with steps in flight: the real Steward on PostgreSQL, the audit MCP server over
 * stdio (four 5-second sleeps in flight), the fake LLM. Measures press → decision answered (state committed
 * in PostgreSQL and the person told), and for Stop also press → run fully stopped, and steps started after Stop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OutboundMessage } from '../src/engine/messages.ts';
import { Steward } from '../src/engine/flows/steward.ts';
import { createLlmClient } from '../src/llm/model-router.ts';
import { McpHost } from '../src/mcp/mcp-host.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { byRole, startFakeLlm } from '../test/fakes/fake-llm-server.ts';
import { createTestDatabase } from '../test/helpers/databases.ts';
import { auditStdioConfig, mcpConfig } from '../test/helpers/mcp-servers.ts';
import { BENCH_BUDGETS } from './profile.ts';

const IN_FLIGHT = 4;

/** Runs the pause/stop measurements and returns Markdown lines. */
export async function benchSteering(rounds: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-steer-'));
  const steps = [
    ...Array.from({ length: IN_FLIGHT }, (_, i) => ({ id: `s${i}`, tool: 'audit.sleep', args: { ms: 5000 } })),
    {
      id: 'after',
      tool: 'audit.sleep',
      args: { ms: 1 },
      dependsOn: Array.from({ length: IN_FLIGHT }, (_, i) => `s${i}`),
    },
  ];
  const plan = JSON.stringify({ summary: 'sleep', needsTools: true, steps });
  const llm = await startFakeLlm(byRole({ planner: plan, synthesizer: 'stopped' }));
  const db = await createTestDatabase('postgres');
  const { host } = await McpHost.connect(mcpConfig(auditStdioConfig(join(dir, 'audit.jsonl'))));
  const seen: { at: number; m: OutboundMessage }[] = [];
  const steward = new Steward({
    llm: createLlmClient({
      openai: { apiKey: 'bench', baseURL: llm.baseURL, maxRetries: 0 },
      models: { planner: 'p', classifier: 'c', synthesizer: 's', llm_step: 'l' },
    }),
    tools: host,
    store: new PgRunStore(db.db),
    clock: () => new Date(),
    newId: () => crypto.randomUUID(),
    log: () => undefined,
    notifier: { send: async (_c, m) => void seen.push({ at: performance.now(), m }) },
    settings: {
      maxParallel: 8,
      maxAttempts: 1,
      amendmentCap: 3,
      maxRepairs: 0,
      reviewTimeoutMs: 600_000,
      budgets: BENCH_BUDGETS,
    },
  });
  const actor = { id: 'bench', channel: 'bench' };
  const pause: number[] = [];
  const stop: number[] = [];
  const stopped: number[] = [];
  let startedAfterStop = 0;
  for (let i = 0; i < rounds; i++) {
    seen.length = 0;
    await steward.message({ conversation: { channel: 'bench', key: `r${i}` }, actor, text: 'sleep' });
    const runId = (seen.find((s) => s.m.kind === 'plan')?.m as { runId: string }).runId;
    while (seen.filter((s) => s.m.kind === 'progress' && s.m.status === 'running').length < IN_FLIGHT)
      await new Promise((r) => setTimeout(r, 2));
    let t = performance.now();
    await steward.decision({ runId, revision: 0, action: 'pause', actor });
    pause.push(performance.now() - t);
    t = performance.now();
    const mark = seen.length;
    await steward.decision({ runId, revision: 0, action: 'stop', actor });
    stop.push(performance.now() - t);
    await steward.idle();
    const report = seen.find((s) => s.m.kind === 'report');
    stopped.push((report?.at ?? performance.now()) - t);
    startedAfterStop += seen.slice(mark).filter((s) => s.m.kind === 'progress' && s.m.status === 'running').length;
  }
  await steward.shutdown();
  await host.close();
  await db.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
  const q = (xs: number[], p: number) =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
  const row = (name: string, xs: number[]) =>
    `| ${name} | ${q(xs, 0.5).toFixed(1)} | ${q(xs, 0.99).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`;
  return [
    `Pause and Stop with ${IN_FLIGHT} MCP calls in flight (stdio), PostgreSQL, ${rounds} runs:`,
    '',
    '| measure | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|',
    row('Pause: press → state committed and person told', pause),
    row('Stop: press → state committed and person told', stop),
    row('Stop: press → calls cancelled, run stopped, report sent', stopped),
    '',
    `Steps started after Stop: ${startedAfterStop}.`,
  ];
}
