import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { mcpConfig, serverConfig } from '../helpers/mcp-servers.ts';

// A small server of our own for what server-everything does not do (pages, JSON-RPC errors).
const FIXTURE = fileURLToPath(new URL('./fixtures/paged-server.mjs', import.meta.url));

let host: McpHost;
const logs: string[] = [];
const options = () => ({ signal: new AbortController().signal, timeoutMs: 5000 });

beforeAll(async () => {
  const connected = await McpHost.connect(
    mcpConfig(serverConfig('paged', { command: process.execPath, args: [FIXTURE] })),
    {
      logger: (level, message) => logs.push(`${level}: ${message}`),
    },
  );
  expect(connected.failures).toEqual([]);
  host = connected.host;
});

afterAll(async () => {
  await host?.close();
});

describe('McpHost with a paginating fixture server', () => {
  it('follows nextCursor to the last page of tools', () => {
    expect(host.listTools().map((t) => t.name)).toEqual([
      'paged.tool-0',
      'paged.tool-1',
      'paged.tool-2',
      'paged.add-tool',
      'paged.rpc-error',
    ]);
    expect(host.serverInfo('paged')).toEqual({ name: 'paged-fixture', version: '1.2.3' });
  });

  it('calls a tool found on a later page', async () => {
    expect(await host.callTool('paged.tool-2', {}, options())).toEqual({
      ok: true,
      value: { content: [{ type: 'text', text: 'tool-2' }] },
    });
  });

  it('turns a JSON-RPC error from the server into tool_error', async () => {
    expect(await host.callTool('paged.rpc-error', {}, options())).toEqual({
      ok: false,
      error: {
        code: 'tool_error',
        retryable: false,
        message: 'paged.rpc-error failed: the fixture refuses these arguments (MCP error -32602)',
      },
    });
  });

  it('refreshes its tool list on notifications/tools/list_changed', async () => {
    await host.callTool('paged.add-tool', {}, options());
    await expect.poll(() => host.listTools().map((t) => t.name), { timeout: 2000 }).toContain('paged.added-5');
    expect(await host.callTool('paged.added-5', {}, options())).toMatchObject({ ok: true });
    expect(logs).toContain('info: MCP server "paged" now offers 6 tools');
  });
});
