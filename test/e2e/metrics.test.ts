/**
 * `/metrics` on STEWARD_HEALTH_PORT, as Prometheus scrapes it: after one run on the console (real MCP server, fake
 * model priced by a catalog), the exposition parses strictly and counts the run by status, times its step by server,
 * tool and outcome, and counts the model's tokens and cost, with no run id, person or secret in any label.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { byRole, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { seedPglite } from '../helpers/databases.ts';
import { EVERYTHING_SCRIPT } from '../helpers/mcp-servers.ts';
import { parsePromText, type PromSample } from '../helpers/prom-text.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply } from './harness.ts';

let app: App | undefined;
let llm: FakeLlm | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  await llm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const API_KEY = 'sk-metrics-secret-0123456789';

it('counts a run, its step and its model tokens and cost, in the text format, with no id or secret', async () => {
  const plan = planReply([{ id: 'sum', tool: 'everything.get-sum', args: { a: 2, b: 3 } }]);
  llm = await startFakeLlm(
    byRole({
      planner: [{ text: plan, usage: { input: 4_000, output: 500 } }],
      synthesizer: [{ text: '2 + 3 = 5.', usage: { input: 1_000, output: 100 } }],
    }),
  );
  dir = mkdtempSync(join(tmpdir(), 'steward-metrics-'));
  await seedPglite(dir);
  const catalog = join(dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      models: { priced: { spec: 'openai:priced-model', usdPerMillionTokens: { input: 1, output: 5 } } },
      roles: { planner: 'priced', synthesizer: 'priced', classifier: 'priced', llm_step: 'priced' },
    }),
  );
  const mcp = { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'] } } };
  writeFileSync(join(dir, 'mcp.json'), JSON.stringify(mcp));
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const input = new PassThrough();
  app = await startApp({
    env: {
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: API_KEY,
      STEWARD_MODEL_CATALOG: catalog,
      STEWARD_HEALTH_PORT: '0',
      STEWARD_QUICK_ANSWERS: 'off',
      DATA_DIR: dir,
      MCP_CONFIG: join(dir, 'mcp.json'),
      USER: 'metrics-person',
    },
    input,
    output,
  });
  expect(printed).toContain(`Health: /healthz, /readyz and /metrics on port ${app.health?.port}.`);

  input.write('What is 2 + 3?\n');
  await waitUntil('the report', () => printed.includes('2 + 3 = 5.'), { details: () => printed });
  await app.steward.idle();
  const runs = await app.database.db.selectFrom('runs').select('id').execute();
  expect(runs).toHaveLength(1);

  const res = await fetch(`http://127.0.0.1:${app.health?.port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const { types, samples } = parsePromText(text);
  const value = (name: string, labels: Record<string, string>) =>
    samples.find((s) => s.name === name && matches(s, labels))?.value;

  expect(types.get('steward_runs')).toBe('gauge');
  expect(value('steward_runs', { status: 'completed' })).toBe(1);
  expect(value('steward_runs', { status: 'running' })).toBe(0);
  expect(value('steward_runs_leased', {})).toBe(0);
  expect(types.get('steward_runs_awaiting_owner')).toBe('gauge');
  expect(value('steward_runs_awaiting_owner', {})).toBe(0);

  expect(types.get('steward_step_duration_seconds')).toBe('histogram');
  const step = { server: 'everything', tool: 'get-sum', outcome: 'ok' };
  expect(value('steward_step_duration_seconds_count', step)).toBe(1);
  expect(value('steward_step_duration_seconds_bucket', { ...step, le: '+Inf' })).toBe(1);
  expect(value('steward_step_duration_seconds_sum', step)).toBeGreaterThan(0);

  const tokens = (role: string, direction: string) =>
    value('steward_model_tokens_total', { role, model: 'priced-model', direction });
  expect([tokens('planner', 'input'), tokens('planner', 'output')]).toEqual([4_000, 500]);
  expect([tokens('synthesizer', 'input'), tokens('synthesizer', 'output')]).toEqual([1_000, 100]);
  // 4,000 × $1 + 500 × $5 per million, and 1,000 × $1 + 100 × $5.
  expect(value('steward_model_cost_usd_total', { role: 'planner', model: 'priced-model' })).toBeCloseTo(0.0065, 9);
  expect(value('steward_model_cost_usd_total', { role: 'synthesizer', model: 'priced-model' })).toBeCloseTo(0.0015, 9);
  // prom-client's own process metrics, in this process's registry.
  expect(types.get('process_cpu_user_seconds_total')).toBe('counter');

  for (const secret of [runs[0]?.id ?? 'no run', API_KEY, 'metrics-person', 'What is 2'])
    expect(text).not.toContain(secret);
  expect(llm.failures).toEqual([]);
});

/** Whether a sample carries every label given. */
function matches(s: PromSample, labels: Record<string, string>): boolean {
  return Object.entries(labels).every(([k, v]) => s.labels[k] === v);
}

it("the test's parser refuses what a scraper would: a sample before its TYPE, a bad label or value", () => {
  const ok = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1\\"2"} 3\n';
  expect(parsePromText(ok).samples).toEqual([{ name: 'a_total', labels: { x: '1"2' }, value: 3 }]);
  expect(() => parsePromText('a_total 3\n')).toThrow(/before its TYPE/);
  expect(() => parsePromText('# TYPE a gauge\na{x=1} 3\n')).toThrow(/bad label/);
  expect(() => parsePromText('# TYPE a gauge\na 3x\n')).toThrow(/bad value/);
  expect(() => parsePromText('# TYPE a gauge\na 3')).toThrow(/newline/);
});
