/**
 * A server that connects per person ("auth": "person") through McpHost: each person's calls go out under their own
 * tokens (counted at the server by the token's subject), a call names its person or is not made, a person with no
 * connection (or a revoked one) gets `connect` / `not_connected` with nothing sent, sessions close when idle, and
 * disconnecting revokes at the authorization server (RFC 7009) and forgets locally. The authorization server and the
 * MCP server are the SDK's own server side (test/helpers/oauth-mcp-server.ts); the store is PostgreSQL, sealed.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { parseMcpConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { PgConnectionStore } from '../../src/store/pg-connection-store.ts';
import { parseSecretKey, SecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const KEY = parseSecretKey(randomBytes(32).toString('base64'));
const alice: Actor = { channel: 'slack', id: 'UALICE', name: 'Alice' };
const bob: Actor = { channel: 'slack', id: 'UBOB', name: 'Bob' };
const carol: Actor = { channel: 'discord', id: '42', name: 'Carol' };

function config(url: string) {
  return parseMcpConfig(JSON.stringify({ mcpServers: { tracker: { url, auth: 'person' } } }), 'test mcp.json');
}

/** The person's browser, signed in at the authorization server as `subject`: allows, and hands back the code. */
async function consent(url: URL, subject: string): Promise<{ code: string; state: string }> {
  const response = await fetch(url, { redirect: 'manual', headers: { cookie: `as_user=${subject}` } });
  const back = new URL(response.headers.get('location') ?? '');
  return { code: back.searchParams.get('code') ?? '', state: back.searchParams.get('state') ?? '' };
}

async function connect(host: McpHost, person: Actor, subject: string): Promise<void> {
  const state = `state-${person.id}`;
  const url = await host.connectionUrl('tracker', person, state);
  const back = await consent(url, subject);
  expect(back.state).toBe(state);
  await host.finishConnection('tracker', person, back.code);
}

function whoami(host: McpHost, as?: Actor) {
  const options = { signal: new AbortController().signal, timeoutMs: 10_000 };
  return host.callTool('tracker.whoami', {}, as ? { ...options, as } : options);
}

describe('McpHost with a server that connects per person', () => {
  let server: OAuthMcpServer;
  let database: TestDatabase;
  const logs: string[] = [];
  const logger = (level: string, message: string) => logs.push(`${level} ${message}`);

  beforeAll(async () => {
    [server, database] = await Promise.all([
      startOAuthMcpServer({ consentAs: 'nobody' }),
      createTestDatabase('postgres'),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), database?.close()]);
  });

  it("runs each person's calls under their own tokens, and a person with no connection sends nothing", async () => {
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    const { host, failures } = await McpHost.connect(config(server.url), { connections: store, logger });
    try {
      expect(failures).toEqual([]);
      // Nobody has connected: nothing is listed yet, and nothing is sent for anyone.
      expect(host.listTools()).toEqual([]);
      const signal = new AbortController().signal;
      expect(await host.prepareAs('tracker.whoami', alice, { signal, timeoutMs: 5_000 })).toEqual({
        kind: 'connect',
        server: 'tracker',
      });
      expect(await whoami(host, alice)).toMatchObject({ ok: false, error: { code: 'not_connected' } });

      await connect(host, alice, 'alice@tracker');
      await connect(host, bob, 'bob@tracker');
      // The first session listed the tools: the planner sees them, marked as per person.
      const ready = await host.prepareAs('tracker.whoami', alice, { signal, timeoutMs: 5_000 });
      expect(ready).toMatchObject({ kind: 'ready', tool: { name: 'tracker.whoami', policy: { perPerson: true } } });
      expect(host.listTools().map((t) => t.name)).toEqual(['tracker.whoami']);

      const calls = [alice, bob, alice, bob, bob].map((p) => whoami(host, p));
      expect((await Promise.all(calls)).every((o) => o.ok)).toBe(true);
      const subjects = server.calls.map((c) => c.subject);
      expect(subjects.filter((s) => s === 'alice@tracker')).toHaveLength(2);
      expect(subjects.filter((s) => s === 'bob@tracker')).toHaveLength(3);
      expect(subjects).toHaveLength(5);

      // No person named: refused here, nothing sent. Carol never connected: nothing sent either.
      expect(await whoami(host)).toMatchObject({ ok: false, error: { code: 'not_connected' } });
      expect(await whoami(host, carol)).toMatchObject({ ok: false, error: { code: 'not_connected' } });
      expect(server.calls).toHaveLength(5);
      expect(host.openPersonSessions('tracker')).toBe(2);
    } finally {
      await host.close();
    }
    expect(host.openPersonSessions('tracker')).toBe(0);
  });

  it('a revoked connection that does not refresh comes back as not_connected, and its tokens are forgotten', async () => {
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    const { host } = await McpHost.connect(config(server.url), { connections: store, logger });
    try {
      await connect(host, carol, 'carol@tracker');
      expect(await whoami(host, carol)).toMatchObject({ ok: true });
      const before = server.calls.length;
      server.revokeSubject('carol@tracker');
      expect(await whoami(host, carol)).toMatchObject({ ok: false, error: { code: 'not_connected' } });
      expect(server.calls).toHaveLength(before);
      expect(await host.hasConnection('tracker', carol)).toBe(false);
      expect(await host.hasConnection('tracker', alice)).toBe(true);
    } finally {
      await host.close();
    }
  });

  it('a new process lists the catalog under a stored connection; idle sessions close', async () => {
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    const { host } = await McpHost.connect(config(server.url), { connections: store, logger, personIdleMs: 50 });
    try {
      expect(host.listTools().map((t) => t.name)).toEqual(['tracker.whoami']);
      expect(await whoami(host, alice)).toMatchObject({ ok: true });
      await waitUntil('the idle sessions to close', () => host.openPersonSessions('tracker') === 0);
      // Opened again for the next call.
      expect(await whoami(host, alice)).toMatchObject({ ok: true });
    } finally {
      await host.close();
    }
  });

  it('disconnect revokes at the authorization server and forgets locally; tokens never in clear', async () => {
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    const { host } = await McpHost.connect(config(server.url), { connections: store, logger });
    try {
      expect((await host.connectionsOf(bob)).map((c) => c.server)).toEqual(['tracker']);
      const [listed] = await host.connectionsOf(bob);
      expect(listed?.state).toBe('connected');
      expect(listed?.connectedAt).toBeInstanceOf(Date);
      const result = await host.disconnect('tracker', bob);
      expect(result).toEqual({ known: true, revoked: true });
      expect(server.revoked).toHaveLength(1);
      expect(server.issued).toContain(server.revoked[0]);
      expect(await host.connectionsOf(bob)).toEqual([
        { server: 'tracker', state: 'none', connectedAt: null, pending: false },
      ]);
      expect(await whoami(host, bob)).toMatchObject({ ok: false, error: { code: 'not_connected' } });
      expect(await host.disconnect('tracker', bob)).toEqual({ known: false, revoked: false });
    } finally {
      await host.close();
    }
    const rows = await sql<{ row: string }>`select t::text as row from mcp_connection_secrets t`.execute(database.db);
    const dump = rows.rows.map((r) => r.row).join('\n');
    for (const canary of server.issued) {
      expect(logs.join('\n')).not.toContain(canary);
      expect(dump).not.toContain(canary);
      expect(dump.toLowerCase()).not.toContain(Buffer.from(canary).toString('hex'));
    }
  });

  it('a connection whose access token is past its time with no refresh token to renew it lists as expired', async () => {
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    const { host } = await McpHost.connect(config(server.url), { connections: store, logger });
    const dave: Actor = { channel: 'slack', id: 'UDAVE' };
    const eve: Actor = { channel: 'slack', id: 'UEVE' };
    try {
      const owner = (p: Actor) => ({ kind: 'person' as const, personId: `${p.channel}:${p.id}` });
      const tokens = (more: object) => JSON.stringify({ access_token: 'a', token_type: 'Bearer', ...more });
      await store.write('tracker', owner(dave), 'tokens', tokens({ expires_in: 60 }));
      await store.write('tracker', owner(eve), 'tokens', tokens({ expires_in: 60, refresh_token: 'r' }));
      const [written] = await host.connectionsOf(dave);
      const later = new Date(written!.connectedAt!.getTime() + 61_000);
      expect(await host.connectionsOf(dave, new Date(written!.connectedAt!.getTime() + 59_000))).toMatchObject([
        { state: 'connected' },
      ]);
      expect(await host.connectionsOf(dave, later)).toMatchObject([{ server: 'tracker', state: 'expired' }]);
      // A refresh token renews it at the next call: still connected.
      expect(await host.connectionsOf(eve, later)).toMatchObject([{ state: 'connected' }]);
    } finally {
      await host.close();
    }
  });
  it('a refused code while connecting again leaves the working connection (the SDK forgets only tokens refused)', async () => {
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    const { host } = await McpHost.connect(config(server.url), { connections: store, logger });
    const dora: Actor = { channel: 'slack', id: 'UDORA', name: 'Dora' };
    try {
      await connect(host, dora, 'dora@tracker');
      expect(await whoami(host, dora)).toMatchObject({ ok: true });
      // She starts connecting again; the callback that comes back carries a code the server refuses (a stale tab).
      await host.connectionUrl('tracker', dora, 'state-again');
      await expect(host.finishConnection('tracker', dora, 'code-never-issued')).rejects.toThrow();
      expect(await store.connections({ owner: { kind: 'person', personId: 'slack:UDORA' } })).toHaveLength(1);
      expect(await whoami(host, dora)).toMatchObject({ ok: true });
    } finally {
      await host.close();
    }
  });
});
