/**
 * An approver connecting a workspace server ("auth": "workspace") in their browser while its connection, down for
 * want of tokens, keeps its backoff going. Its attempts cannot authorize anyone (no browser is behind them): while no
 * tokens are stored they leave the server alone (an attempt would only register one more OAuth client there), and
 * nothing they do may touch what the approver's authorization relies on (the client registration its code was issued
 * to, its PKCE verifier). The authorization server and MCP server are the SDK's own server side
 * (test/helpers/oauth-mcp-server.ts); the store is PostgreSQL, sealed.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import type { ConnectionStore } from '../../src/mcp/connection-store.ts';
import { parseMcpConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { PgConnectionStore } from '../../src/store/pg-connection-store.ts';
import { parseSecretKey, SecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const KEY = parseSecretKey(randomBytes(32).toString('base64'));
const boss: Actor = { channel: 'slack', id: 'UBOSS', name: 'Boss' };

/** The store, counting how often the workspace's tokens were looked for (each turn of the backoff looks once). */
function counted(store: ConnectionStore): ConnectionStore & { tokenReads: number } {
  const c = Object.assign(Object.create(store) as ConnectionStore, { tokenReads: 0 });
  c.read = async (server, owner, secret) => {
    if (secret === 'tokens') c.tokenReads += 1;
    return store.read(server, owner, secret);
  };
  return c;
}

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

  it('while no tokens are stored its retries leave the server alone; the approver connects, and calls go out as the approver', async () => {
    const store = counted(new PgConnectionStore(database.db, new SecretBox(KEY)));
    const config = parseMcpConfig(
      JSON.stringify({ mcpServers: { ws: { url: server.url, auth: 'workspace' } } }),
      'test mcp.json',
    );
    const registered = () => server.clientsRegistered;
    const { host } = await McpHost.connect(config, {
      connections: store,
      logger: () => {},
      // Retries come fast, so several fall between the approver's start and finish.
      reconnect: { initialDelayMs: 10, maxDelayMs: 20 },
    });
    const turns = (n: number) => {
      const from = store.tokenReads;
      return waitUntil(`${n} turns of the backoff`, () => store.tokenReads >= from + n);
    };
    try {
      // Each round disconnects (its tokens forgotten and revoked), then connects again, as an approver does from chat.
      for (let round = 1; round <= 5; round += 1) {
        // Down, with no tokens: its backoff turns without a request to the server, so without a registration.
        await turns(3);
        const [refusals, clients] = [server.refusals, registered()];
        await turns(5);
        expect([server.refusals, registered()]).toEqual([refusals, clients]);

        const url = await host.connectionUrl('ws', boss, `state-${round}`);
        const consent = await fetch(url, { redirect: 'manual', headers: { cookie: 'as_user=boss@tracker' } });
        const code = new URL(consent.headers.get('location') ?? '').searchParams.get('code') ?? '';
        // The approver is slow to come back: the connection's backoff turns meanwhile.
        await turns(4);

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
