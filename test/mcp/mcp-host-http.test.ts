import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { httpServerConfig, mcpConfig, startEverythingHttp } from '../helpers/mcp-servers.ts';

let server: { url: string; close: () => Promise<void> };
let host: McpHost;
const signal = () => new AbortController().signal;

beforeAll(async () => {
  server = await startEverythingHttp();
  const connected = await McpHost.connect(mcpConfig(httpServerConfig(server.url, { overrides: { risk: 'high' } })));
  expect(connected.failures).toEqual([]);
  host = connected.host;
});

afterAll(async () => {
  await host?.close();
  await server?.close();
});

describe('McpHost over Streamable HTTP with server-everything', () => {
  it('lists qualified tools with annotations', () => {
    const tools = host.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['everything.echo', 'everything.get-sum']));
    expect(tools.find((t) => t.name === 'everything.get-sum')).toMatchObject({
      annotations: { readOnlyHint: true, idempotentHint: true },
      policy: { allowed: true, risk: 'high', timeoutMs: 60_000 },
    });
    expect(host.serverInfo('everything')).toEqual({ name: 'mcp-servers/everything', version: '2.0.0' });
    expect(host.serverPid('everything')).toBeUndefined();
  });

  it('calls echo and get-sum with exact results', async () => {
    expect(
      await host.callTool('everything.echo', { message: 'over http' }, { signal: signal(), timeoutMs: 5000 }),
    ).toEqual({
      ok: true,
      value: { content: [{ type: 'text', text: 'Echo: over http' }] },
    });
    expect(await host.callTool('everything.get-sum', { a: 0.5, b: -3 }, { signal: signal(), timeoutMs: 5000 })).toEqual(
      {
        ok: true,
        value: { content: [{ type: 'text', text: 'The sum of 0.5 and -3 is -2.5.' }] },
      },
    );
  });

  it('returns cancelled within 100 ms of an abort mid-call', async () => {
    const controller = new AbortController();
    const call = host.callTool(
      'everything.trigger-long-running-operation',
      { duration: 2, steps: 4 },
      { signal: controller.signal, timeoutMs: 10_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    const abortedAt = performance.now();
    controller.abort();
    expect(await call).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    expect(performance.now() - abortedAt).toBeLessThan(100);
  });

  it('returns timeout past the timeout, over HTTP too', async () => {
    const outcome = await host.callTool(
      'everything.trigger-long-running-operation',
      { duration: 1, steps: 1 },
      { signal: signal(), timeoutMs: 200 },
    );
    expect(outcome).toMatchObject({ ok: false, error: { code: 'timeout', retryable: true } });
  });
});
