import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallOutcome } from '../../src/engine/ports.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { everythingStdioConfig, mcpConfig } from '../helpers/mcp-servers.ts';

const LONG_OP = 'everything.trigger-long-running-operation';
const CANARY = 'STEWARD_CANARY_SECRET';

let host: McpHost;
const logs: string[] = [];
const signal = () => new AbortController().signal;

beforeAll(async () => {
  // Set before the children spawn: they must not see it, although they do see what the config names.
  process.env[CANARY] = 'canary-value-do-not-leak';
  process.env.STEWARD_TEST_VISIBLE = 'passed-on-purpose';
  const connected = await McpHost.connect(
    mcpConfig(
      everythingStdioConfig({
        overrides: {
          risk: 'medium',
          tools: { 'get-sum': { risk: 'low', timeoutMs: 1234, idempotent: true }, 'get-env': { allowed: false } },
        },
      }),
      everythingStdioConfig({
        name: 'capped',
        overrides: { maxTotalTimeoutMs: 800, env: { VISIBLE_TO_SERVER: '${STEWARD_TEST_VISIBLE}' } },
      }),
    ),
    { logger: (level, message) => logs.push(`${level}: ${message}`) },
  );
  expect(connected.failures).toEqual([]);
  host = connected.host;
});

afterAll(async () => {
  await host?.close();
  delete process.env[CANARY];
  delete process.env.STEWARD_TEST_VISIBLE;
});

describe('McpHost over stdio with server-everything', () => {
  it('lists qualified tools with annotations and policy overrides (tool over server)', () => {
    const tools = host.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['everything.echo', 'everything.get-sum', LONG_OP, 'capped.echo']));
    const echo = tools.find((t) => t.name === 'everything.echo');
    expect(echo).toMatchObject({
      server: 'everything',
      tool: 'echo',
      description: 'Echoes back the input string',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      policy: { allowed: true, risk: 'medium', timeoutMs: 60_000 },
    });
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(tools.find((t) => t.name === 'everything.get-sum')?.policy).toEqual({
      allowed: true,
      risk: 'low',
      idempotent: true,
      timeoutMs: 1234,
    });
    expect(tools.find((t) => t.name === 'capped.echo')?.policy).toEqual({ allowed: true, timeoutMs: 60_000 });
  });

  it('leaves out tools that demand task-based execution', () => {
    expect(host.listTools().map((t) => t.name)).not.toContain('everything.simulate-research-query');
  });

  it('reports the server name and version from initialize', () => {
    expect(host.serverInfo('everything')).toEqual({ name: 'mcp-servers/everything', version: '2.0.0' });
    expect(host.serverInfo('nope')).toBeUndefined();
  });

  it('calls echo and get-sum with exact results', async () => {
    expect(await host.callTool('everything.echo', { message: 'hello' }, { signal: signal(), timeoutMs: 5000 })).toEqual(
      {
        ok: true,
        value: { content: [{ type: 'text', text: 'Echo: hello' }] },
      },
    );
    expect(await host.callTool('everything.get-sum', { a: 2, b: 40 }, { signal: signal(), timeoutMs: 5000 })).toEqual({
      ok: true,
      value: { content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }] },
    });
  });

  it('passes structured content through', async () => {
    const outcome = await host.callTool(
      'everything.get-structured-content',
      { location: 'Chicago' },
      { signal: signal(), timeoutMs: 5000 },
    );
    // Vitest types its asymmetric matchers as `any`; `as unknown` keeps that out of the typed expectation.
    expect(outcome.ok && outcome.value.structuredContent).toMatchObject({
      temperature: expect.any(Number) as unknown,
    });
  });

  it('returns an isError result as an output for the engine to judge', async () => {
    const outcome = await host.callTool('everything.get-sum', { a: 'two' }, { signal: signal(), timeoutMs: 5000 });
    expect(outcome).toMatchObject({ ok: true, value: { isError: true } });
  });

  it('answers unknown_tool for unknown servers, unknown tools, names without a dot and disallowed tools', async () => {
    const options = { signal: signal(), timeoutMs: 1000 };
    for (const name of ['nope.echo', 'everything.nope', 'echo', '.echo', 'everything.get-env']) {
      const outcome = await host.callTool(name, {}, options);
      expect(outcome, name).toMatchObject({ ok: false, error: { code: 'unknown_tool', retryable: false } });
    }
  });

  it('returns timeout promptly when a call runs past its timeout', async () => {
    const started = performance.now();
    const outcome = await host.callTool(LONG_OP, { duration: 2, steps: 1 }, { signal: signal(), timeoutMs: 300 });
    const elapsed = performance.now() - started;
    expect(outcome).toEqual({
      ok: false,
      error: { code: 'timeout', retryable: true, message: `${LONG_OP} did not answer within 300 ms.` },
    });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(600);
  });

  it('lets progress extend the timeout: ten 150 ms steps finish under a 500 ms timeout', async () => {
    const started = performance.now();
    const outcome = await host.callTool(LONG_OP, { duration: 1.5, steps: 10 }, { signal: signal(), timeoutMs: 500 });
    expect(outcome).toMatchObject({
      ok: true,
      value: { content: [{ text: expect.stringMatching(/completed/) as unknown }] },
    });
    expect(performance.now() - started).toBeGreaterThan(1400);
  });

  it('still caps a call that keeps reporting progress at maxTotalTimeoutMs', async () => {
    const started = performance.now();
    const outcome = await host.callTool(
      'capped.trigger-long-running-operation',
      { duration: 3, steps: 20 },
      { signal: signal(), timeoutMs: 500 },
    );
    const elapsed = performance.now() - started;
    expect(outcome).toMatchObject({ ok: false, error: { code: 'timeout', retryable: true } });
    expect(outcome.ok === false && outcome.error.message).toMatch(/hard limit of 800 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(790);
    expect(elapsed).toBeLessThan(1300);
  });

  it('returns cancelled within 100 ms of the signal being aborted mid-call', async () => {
    const controller = new AbortController();
    const call = host.callTool(LONG_OP, { duration: 2, steps: 4 }, { signal: controller.signal, timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const abortedAt = performance.now();
    controller.abort();
    const outcome = await call;
    expect(performance.now() - abortedAt).toBeLessThan(100);
    expect(outcome).toEqual({
      ok: false,
      error: { code: 'cancelled', retryable: false, message: `${LONG_OP} was cancelled.` },
    });
  });

  it('returns cancelled at once for a signal that is already aborted', async () => {
    const outcome = await host.callTool(
      'everything.echo',
      { message: 'x' },
      { signal: AbortSignal.abort(), timeoutMs: 1000 },
    );
    expect(outcome).toMatchObject({ ok: false, error: { code: 'cancelled' } });
  });

  it('keeps serving many calls that share one caller signal (no listener pile-up)', async () => {
    const shared = new AbortController().signal;
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          host.callTool('everything.echo', { message: `m${i}` }, { signal: shared, timeoutMs: 5000 }),
        ),
      );
      expect(outcomes.every((o) => o.ok)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it("passes a stdio child only the safe defaults and the configured env, never the bot's secrets", async () => {
    // get-env is disallowed on "everything" by the config above, so ask the second server.
    const outcome = await host.callTool('capped.get-env', {}, { signal: signal(), timeoutMs: 5000 });
    const env = JSON.parse(textOf(outcome)) as Record<string, string>;
    expect(env[CANARY]).toBeUndefined();
    expect(env.VISIBLE_TO_SERVER).toBe('passed-on-purpose');
    expect(env.PATH).toBe(process.env.PATH);
    const safeDefaults = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];
    expect(Object.keys(env).filter((k) => !safeDefaults.includes(k))).toEqual(['VISIBLE_TO_SERVER']);
  });
});

function textOf(outcome: ToolCallOutcome): string {
  const block = outcome.ok ? outcome.value.content[0] : undefined;
  if (typeof block !== 'object' || block === null || Array.isArray(block) || typeof block.text !== 'string') {
    throw new Error(`expected a text block, got ${JSON.stringify(outcome)}`);
  }
  return block.text;
}
