/**
 * What the operator reads when a server refuses Steward for want of authorization.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

  it('with "auth": "workspace" and no one authorized yet: not a failure; it waits for an approver to connect it from chat', async () => {
    const config = parseMcpConfig(
      JSON.stringify({ mcpServers: { tracker: { url: server.url, auth: 'workspace' } } }),
      'test mcp.json',
    );
    const lines: string[] = [];
    const { host, failures } = await McpHost.connect(config, {
      connectTimeoutMs: 10_000,
      logger: (level, message) => lines.push(`${level} ${message}`),
    });
    await host.close();
    expect(failures).toEqual([]);
    expect(host.awaitingApprover()).toEqual(['tracker']);
    expect(lines).toContain(
      'info MCP server "tracker" waits for an approver to connect it for the workspace (connections connect tracker)',
    );
    expect(server.calls).toEqual([]);
  });
});

describe('OAuth traffic stays on https (or loopback)', () => {
  it('refuses an authorization server that the protected-resource metadata names on plain http', async () => {
    const http = createServer((req, res) => {
      if (req.url?.startsWith('/.well-known/oauth-protected-resource')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ resource: url, authorization_servers: ['http://auth.example.test'] }));
        return;
      }
      const metadata = `${origin}/.well-known/oauth-protected-resource/mcp`;
      res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${metadata}"` });
      res.end();
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const url = `${origin}/mcp`;
    try {
      const message = await failureFor({ url, auth: 'workspace' });
      expect(message).toContain('refused to send OAuth traffic to http://auth.example.test: it is not https');
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});

describe('"auth": "person"', () => {
  it('starts without reaching the server while nobody has connected, says so, and is not a readiness dependency', async () => {
    const config = parseMcpConfig(
      JSON.stringify({ mcpServers: { tracker: { url: 'https://tracker.example.test/mcp', auth: 'person' } } }),
      'test mcp.json',
    );
    const lines: string[] = [];
    const { host, failures } = await McpHost.connect(config, { logger: (level, m) => lines.push(`${level} ${m}`) });
    await host.close();
    expect(failures).toEqual([]);
    expect(host.serverStatus()).toEqual([]);
    expect(host.personServers()).toEqual(['tracker']);
    expect(lines).toContain(
      'info MCP server "tracker" connects per person; its tools are listed once someone connects',
    );
  });
});
