/**
 * An approver connecting a workspace server ("auth": "workspace") in their browser while its connection, down for
 * want of tokens, keeps trying to come back on its own. Those attempts cannot authorize anyone (no browser is behind
 * them), so they must leave alone what the approver's authorization relies on: the client registration its code was
 * issued to and its PKCE verifier. The authorization server and MCP server are the SDK's own server side
 * (test/helpers/oauth-mcp-server.ts); the store is PostgreSQL, sealed.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { parseMcpConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { PgConnectionStore } from '../../src/store/pg-connection-store.ts';
import { parseSecretKey, SecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';

const KEY = parseSecretKey(randomBytes(32).toString('base64'));
const boss: Actor = { channel: 'slack', id: 'UBOSS', name: 'Boss' };

describe('McpHost: an approver connects a workspace server while its connection retries by itself', () => {
  let server: OAuthMcpServer;
  let database: TestDatabase;

  beforeAll(async () => {
    [server, database] = await Promise.all([
      startOAuthMcpServer({ consentAs: 'nobody' }),
      createTestDatabase('postgres'),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), database?.close()]);
  });

  it('the retries in between replace neither the client nor the verifier: the code is exchanged and calls go out as the approver', async () => {
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    const config = parseMcpConfig(
      JSON.stringify({ mcpServers: { ws: { url: server.url, auth: 'workspace' } } }),
      'test mcp.json',
    );
    const { host } = await McpHost.connect(config, {
      connections: store,
      logger: () => {},
      // Retries come fast, so several fall between the approver's start and finish.
      reconnect: { initialDelayMs: 10, maxDelayMs: 20 },
    });
    try {
      // Each round disconnects (its client registration is forgotten with its tokens), then connects again at once,
      // as an approver does from chat: the connection's own attempts race the approver's registration.
      for (let round = 1; round <= 5; round += 1) {
        // The approver starts just as one of those attempts is refused and goes on to authorize by itself.
        await server.refusalsReached(server.refusals + 1);
        const url = await host.connectionUrl('ws', boss, `state-${round}`);
        const consent = await fetch(url, { redirect: 'manual', headers: { cookie: 'as_user=boss@tracker' } });
        const code = new URL(consent.headers.get('location') ?? '').searchParams.get('code') ?? '';
        // The approver is slow to come back: the connection tries (and is refused) a few more times meanwhile.
        await server.refusalsReached(server.refusals + 4);

        await host.finishConnection('ws', boss, code);
        const signal = new AbortController().signal;
        expect(await host.callTool('ws.whoami', {}, { signal, timeoutMs: 10_000 })).toMatchObject({ ok: true });
        expect(server.calls.map((c) => c.subject)).toEqual(Array(round).fill('boss@tracker'));
        expect(await host.disconnect('ws', boss)).toEqual({ known: true, revoked: true });
      }
    } finally {
      await host.close();
    }
  });
});
