/**
 * Two processes (two McpHosts, each with its own PgConnectionStore over its own pool on one PostgreSQL), or two
 * sessions of one process on PGlite's single connection, find the same connection's access token expired at once. The authorization server rotates refresh tokens and takes a reused one
 * for a breach (RFC 6749 section 10.4, RFC 9700 section 4.14.2): it refuses it and revokes what replaced it. Before
 * the refresh guard, both sent the same refresh token; the second was refused, and the SDK's invalidateCredentials
 * then deleted the tokens the first had just saved: the connection was gone.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryConnectionStore, type ConnectionOwner } from '../../src/mcp/connection-store.ts';
import { parseMcpConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost, type Authorizer } from '../../src/mcp/mcp-host.ts';
import { openDatabase } from '../../src/store/database.ts';
import { PgConnectionStore } from '../../src/store/pg-connection-store.ts';
import { parseSecretKey, SecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, testDatabaseUrlFor } from '../helpers/databases.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const KEY = parseSecretKey(randomBytes(32).toString('base64'));
const WORKSPACE: ConnectionOwner = { kind: 'workspace' };

/** What a click on "Allow" does: the consent page redirects to Steward's callback with the code. */
const browser: Authorizer = async ({ url }) => {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  return location ? (new URL(location).searchParams.get('code') ?? undefined) : undefined;
};

function config(url: string) {
  return parseMcpConfig(JSON.stringify({ mcpServers: { tracker: { url, auth: 'workspace' } } }), 'test mcp.json');
}

async function whoami(host: McpHost) {
  return host.callTool('tracker.whoami', {}, { signal: new AbortController().signal, timeoutMs: 10_000 });
}

/** Two stores on one database: two pools of one PostgreSQL (two processes), or one PGlite (two sessions, one process). */
const setups: [string, () => Promise<{ stores: [PgConnectionStore, PgConnectionStore]; close(): Promise<void> }>][] = [
  [
    'PostgreSQL, two processes (two pools)',
    async () => {
      const database = await createTestDatabase('postgres');
      const second = await openDatabase({ databaseUrl: testDatabaseUrlFor(database.name), dataDir: tmpdir() });
      return {
        stores: [
          new PgConnectionStore(database.db, new SecretBox(KEY)),
          new PgConnectionStore(second.db, new SecretBox(KEY)),
        ],
        close: async () => {
          await second.close();
          await database.close();
        },
      };
    },
  ],
  [
    'PGlite, two sessions of one process (one connection)',
    async () => {
      const database = await createTestDatabase('pglite');
      return {
        stores: [
          new PgConnectionStore(database.db, new SecretBox(KEY)),
          new PgConnectionStore(database.db, new SecretBox(KEY)),
        ],
        close: () => database.close(),
      };
    },
  ],
];

describe.each(setups)('an expired access token refreshed twice at once: %s', (_name, open) => {
  let server: OAuthMcpServer;
  let opened: Awaited<ReturnType<typeof open>>;
  const logs: string[] = [];
  const logger = (level: string, message: string) => logs.push(`${level} ${message}`);

  beforeAll(async () => {
    [server, opened] = await Promise.all([startOAuthMcpServer({ consentAs: 'alice' }), open()]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), opened?.close()]);
  });

  it('is refreshed once: the second uses the tokens the first stored, and the connection stays', async () => {
    const [storeA, storeB] = opened.stores;
    // Connected once, by an approver: from here on neither process has anyone to ask.
    const connecting = await McpHost.connect(config(server.url), { connections: storeA, authorize: browser, logger });
    expect(connecting.failures).toEqual([]);
    await connecting.host.close();

    const a = await McpHost.connect(config(server.url), { connections: storeA, logger });
    const b = await McpHost.connect(config(server.url), { connections: storeB, logger });
    try {
      expect([a.failures, b.failures]).toEqual([[], []]);
      server.expireAccessTokens();
      const refusedBefore = server.refusals;
      // Both processes' calls are refused with the expired token before any refresh is answered.
      const gate = server.holdRefreshes();
      const calls = Promise.all([whoami(a.host), whoami(b.host)]);
      await server.refusalsReached(refusedBefore + 2);
      gate.release();
      const [fromA, fromB] = await calls;

      expect(server.reusedRefreshTokens).toEqual([]);
      expect(server.refreshes).toBe(1);
      expect([fromA, fromB]).toMatchObject([{ ok: true }, { ok: true }]);
      expect(server.calls.map((c) => c.subject)).toEqual(['alice', 'alice']);
      // Both came with the one refreshed access token.
      const refreshedAccess = server.issued[2];
      expect(server.calls.map((c) => c.token)).toEqual([refreshedAccess, refreshedAccess]);
      expect(await storeA.connections({ server: 'tracker' })).toHaveLength(1);
      const stored = JSON.parse((await storeB.read('tracker', WORKSPACE, 'tokens')) ?? '{}') as {
        access_token?: string;
      };
      expect(stored.access_token).toBe(refreshedAccess);

      // And both go on working with them.
      expect([await whoami(a.host), await whoami(b.host)]).toMatchObject([{ ok: true }, { ok: true }]);
      expect(server.refreshes).toBe(1);
    } finally {
      await Promise.all([a.host.close(), b.host.close()]);
    }
  });
});

describe('ConnectionStore.hold', () => {
  it('PostgreSQL: a second hold on another pool begins only after the first ends, and sees what it stored', async () => {
    const database = await createTestDatabase('postgres');
    const other = await openDatabase({ databaseUrl: testDatabaseUrlFor(database.name), dataDir: tmpdir() });
    let release = () => {};
    try {
      const one = new PgConnectionStore(database.db, new SecretBox(KEY));
      const two = new PgConnectionStore(other.db, new SecretBox(KEY));
      await one.write('tracker', WORKSPACE, 'tokens', 'v1');
      const seen: string[] = [];
      const held = new Promise<void>((resolve) => (release = resolve));
      let entered: () => void = () => {};
      const firstIn = new Promise<void>((resolve) => (entered = resolve));
      const first = one.hold('tracker', WORKSPACE, 'tokens', async (h) => {
        seen.push(`first saw ${h.value}`);
        entered();
        await held;
        await h.replace('v2');
        seen.push('first replaced');
      });
      await firstIn;
      const secondHold = two.hold('tracker', WORKSPACE, 'tokens', (h) => {
        seen.push(`second saw ${h.value}`);
        return Promise.resolve();
      });
      await waitUntil('the second hold to wait on the row lock', async () => {
        const waiting = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
          where datname = ${database.name} and wait_event_type = 'Lock'`.execute(database.db);
        return waiting.rows[0]?.n === 1;
      });
      release();
      await Promise.all([first, secondHold]);
      expect(seen).toEqual(['first saw v1', 'first replaced', 'second saw v2']);
    } finally {
      release();
      await other.close();
      await database.close();
    }
  });

  it('memory: holds of one key follow one another', async () => {
    const store = createMemoryConnectionStore();
    await store.write('tracker', WORKSPACE, 'tokens', 'v1');
    const seen: string[] = [];
    const first = store.hold('tracker', WORKSPACE, 'tokens', async (h) => {
      seen.push(`first saw ${h.value}`);
      await Promise.resolve();
      await h.replace('v2');
    });
    const secondHold = store.hold('tracker', WORKSPACE, 'tokens', async (h) => {
      seen.push(`second saw ${h.value}`);
      await h.forget();
    });
    await Promise.all([first, secondHold]);
    expect(seen).toEqual(['first saw v1', 'second saw v2']);
    expect(await store.read('tracker', WORKSPACE, 'tokens')).toBeUndefined();
  });
});
