/**
 * What the operator reads when a server refuses Steward for want of authorization.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMcpConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';

async function failureFor(entry: Record<string, unknown>): Promise<string> {
  const config = parseMcpConfig(JSON.stringify({ mcpServers: { tracker: entry } }), 'test mcp.json');
  const { host, failures } = await McpHost.connect(config, { connectTimeoutMs: 10_000 });
  await host.close();
  expect(failures).toHaveLength(1);
  return failures[0]?.message ?? '';
}

describe('a server that answers 401 with an OAuth challenge', () => {
  let server: OAuthMcpServer;
  beforeAll(async () => {
    server = await startOAuthMcpServer({ consentAs: 'alice' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('with no auth configured: says it wants OAuth, where its metadata is, and the mcp.json lines to add', async () => {
    const message = await failureFor({ url: server.url });
    expect(message).toContain('it wants OAuth authorization (HTTP 401');
    expect(message).toContain(`${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`);
    expect(message).toContain(`"tracker": { "url": "${server.url}", "auth": "workspace" }`);
    expect(message).toContain('"auth": "person"');
  });

  it('with a static Authorization header it refuses: says so, and to use "auth" instead of the header', async () => {
    const message = await failureFor({ url: server.url, headers: { Authorization: 'Bearer static-canary' } });
    expect(message).toContain('refused the Authorization header from mcp.json');
    expect(message).toContain('(and remove the Authorization header)');
    expect(message).not.toContain('static-canary');
  });

  it('with "auth": "workspace" and no one to authorize: says someone must authorize at the server', async () => {
    const message = await failureFor({ url: server.url, auth: 'workspace' });
    expect(message).toContain(`it needs someone to authorize Steward at ${new URL(server.url).origin}`);
    expect(server.calls).toEqual([]);
  });
});
