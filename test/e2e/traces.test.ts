/**
 * OpenTelemetry traces as a collector gets them: one run on the console (a real MCP server, the fake model), with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a local OTLP/HTTP receiver. Closing the app (the SIGTERM path) flushes
 * the last spans: the run's span, a span per step attempt and per model call under it, in one trace, with the run id,
 * tool and outcome as attributes and no argument value. Without an endpoint nothing is sent and no SDK is set up.
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
import { startOtlpCollector, type OtlpCollector, type ReceivedSpan } from '../helpers/otlp-collector.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply } from './harness.ts';

let app: App | undefined;
let llm: FakeLlm | undefined;
let collector: OtlpCollector | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  await llm?.close();
  await collector?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const API_KEY = 'sk-traces-secret-0123456789';
const CANARY = 'canary-argument-7f3e91';
const PLAN = planReply([
  { id: 'say', tool: 'everything.echo', args: { message: CANARY } },
  { id: 'sum', tool: 'everything.get-sum', args: { a: 2, b: 3 } },
]);
type RoleScript = Parameters<typeof byRole>[0];

/** Starts Steward on the console with one MCP server (everything) and the fake model; `env` adds to it. */
async function start(
  env: Record<string, string>,
  replies: RoleScript = {
    planner: [{ text: PLAN, usage: { input: 4_000, output: 500 } }],
    synthesizer: [{ text: 'Echoed, and 2 + 3 = 5.', usage: { input: 1_000, output: 100 } }],
  },
): Promise<{ input: PassThrough; printed: () => string }> {
  llm = await startFakeLlm(byRole(replies));
  dir = mkdtempSync(join(tmpdir(), 'steward-traces-'));
  await seedPglite(dir);
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
      STEWARD_MODEL: 'gpt-test',
      STEWARD_QUICK_ANSWERS: 'off',
      DATA_DIR: dir,
      MCP_CONFIG: join(dir, 'mcp.json'),
      USER: 'traces-person',
      ...env,
    },
    input,
    output,
  });
  return { input, printed: () => printed };
}

it('sends a run, its step attempts and model calls as one trace, with ids and outcomes, no argument values', async () => {
  collector = await startOtlpCollector();
  const { input, printed } = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/` });
  expect(printed()).toContain(`Traces: OTLP to ${collector.url}/v1/traces.`);
  input.write(`Echo ${CANARY} and add 2 and 3\n`);
  await waitUntil('the report', () => printed().includes('2 + 3 = 5.'), { details: printed });
  await app?.steward.idle();
  const [run] = await app!.database.db.selectFrom('runs').select(['id', 'created_at']).execute();
  // Closing is the SIGTERM path: the spans still batched are sent before it returns.
  await app?.close();
  app = undefined;
  expect(collector.refused).toEqual([]);
  const spans = collector.spans;

  const runs = spans.filter((s) => s.name === 'steward.run');
  expect(runs).toHaveLength(1);
  const root = runs[0] as ReceivedSpan;
  expect(root.parentSpanId).toBeUndefined();
  expect(root.attributes).toMatchObject({
    'steward.run.id': run?.id,
    'steward.run.status': 'completed',
    'steward.run.route': 'plan',
  });
  expect(root.resource['service.name']).toBe('steward');
  // From the run's creation to its report.
  expect(root.startNs).toBe(BigInt(run!.created_at.getTime()) * 1_000_000n);

  const steps = spans.filter((s) => s.name.startsWith('execute_tool '));
  expect(steps.map((s) => s.attributes['steward.step.tool']).sort()).toEqual(['everything.echo', 'everything.get-sum']);
  for (const s of steps) {
    expect(s.attributes).toMatchObject({
      'steward.run.id': run?.id,
      'steward.step.server': 'everything',
      'steward.step.attempt': 1,
      'steward.step.outcome': 'ok',
    });
    expect(s.attributes['steward.step.id']).toBe(
      s.attributes['steward.step.tool'] === 'everything.echo' ? 'say' : 'sum',
    );
    expect(s.attributes).not.toHaveProperty('steward.step.args');
    expect(s.attributes).not.toHaveProperty('steward.step.output');
  }

  const models = spans.filter((s) => s.name.startsWith('chat '));
  const byRoleSeen = new Map(models.map((m) => [m.attributes['steward.model.role'], m.attributes]));
  expect(byRoleSeen.get('planner')).toMatchObject({
    'gen_ai.usage.input_tokens': 4_000,
    'gen_ai.usage.output_tokens': 500,
  });
  expect(byRoleSeen.get('synthesizer')).toMatchObject({
    'gen_ai.usage.input_tokens': 1_000,
    'gen_ai.usage.output_tokens': 100,
  });

  // One trace; every step and model call a child of the run's span, inside its time.
  for (const s of [...steps, ...models]) {
    expect(s.traceId).toBe(root.traceId);
    expect(s.parentSpanId).toBe(root.spanId);
    expect(s.startNs >= root.startNs && s.endNs <= root.endNs).toBe(true);
  }
  for (const body of collector.bodies) {
    expect(body).not.toContain(CANARY);
    expect(body).not.toContain(API_KEY);
    expect(body).not.toContain('traces-person');
  }
});

it('without an OTLP endpoint sets up no tracing and sends nothing', async () => {
  collector = await startOtlpCollector();
  // The service name alone turns nothing on.
  const { input, printed } = await start({ OTEL_SERVICE_NAME: 'steward-off' });
  expect(app?.tracing).toBeUndefined();
  expect(printed()).not.toContain('Traces:');
  input.write(`Echo ${CANARY} and add 2 and 3\n`);
  await waitUntil('the report', () => printed().includes('2 + 3 = 5.'), { details: printed });
  await app?.steward.idle();
  await app?.close();
  app = undefined;
  expect(collector.bodies).toEqual([]);
});

it("traces a quick answer: the read-only loop's call and the butler's turns under the run, route quick", async () => {
  collector = await startOtlpCollector();
  const { input, printed } = await start(
    { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, STEWARD_QUICK_ANSWERS: 'on' },
    {
      butler: [
        { text: '', toolCalls: [{ id: 'call_1', name: 'everything__echo', args: { message: CANARY } }] },
        'It said it back.',
      ],
    },
  );
  input.write(`Echo ${CANARY}\n`);
  await waitUntil('the answer', () => printed().includes('It said it back.'), { details: printed });
  await app?.steward.idle();
  await app?.close();
  app = undefined;
  const root = collector.spans.find((s) => s.name === 'steward.run');
  expect(root?.attributes).toMatchObject({ 'steward.run.status': 'completed', 'steward.run.route': 'quick' });
  const call = collector.spans.find((s) => s.name === 'execute_tool everything.echo');
  expect(call?.attributes).toMatchObject({
    'steward.step.id': 'quick:1',
    'steward.step.attempt': 1,
    'steward.step.outcome': 'ok',
  });
  const turns = collector.spans.filter((s) => s.attributes['steward.model.role'] === 'butler');
  expect(turns).toHaveLength(2);
  for (const s of [call, ...turns]) expect(s?.parentSpanId).toBe(root?.spanId);
  expect(collector.bodies.join('')).not.toContain(CANARY);
});
