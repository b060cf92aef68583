/**
 * A server behind OAuth, reached through McpHost with the SDK's own auth flow and the encrypted PostgreSQL store:
 * a local authorization server (the SDK's server-side helpers) in front of a Streamable HTTP MCP server that checks
 * each call's bearer token. The "browser" follows the consent page's redirect, as a person's click would.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMcpConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost, type Authorizer } from '../../src/mcp/mcp-host.ts';
import { PgConnectionStore } from '../../src/store/pg-connection-store.ts';
import { parseSecretKey, SecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';

const KEY = parseSecretKey(randomBytes(32).toString('base64'));

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

describe('McpHost with an OAuth server ("auth": "workspace")', () => {
  let server: OAuthMcpServer;
  let database: TestDatabase;
  const logs: string[] = [];
  const logger = (level: string, message: string) => logs.push(`${level} ${message}`);

  beforeAll(async () => {
    [server, database] = await Promise.all([
      startOAuthMcpServer({ consentAs: 'alice' }),
      createTestDatabase('postgres'),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), database?.close()]);
  });

  it('authorizes once, sends each call with the token, refreshes an expired one, and keeps tokens sealed', async () => {
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    let authorizations = 0;
    const counting: Authorizer = (request) => {
      authorizations += 1;
      return browser(request);
    };
    const { host, failures } = await McpHost.connect(config(server.url), {
      connections: store,
      authorize: counting,
      logger,
    });
    try {
      expect(failures).toEqual([]);
      const first = await whoami(host);
      expect(first).toMatchObject({ ok: true });
      expect(JSON.stringify(first)).toContain('alice');
      expect(server.calls).toHaveLength(1);
      expect(server.calls[0]).toEqual({ subject: 'alice', token: server.issued[0] });

      server.expireAccessTokens();
      expect(await whoami(host)).toMatchObject({ ok: true });
      expect(server.refreshes).toBe(1);
      expect(server.calls[1]?.subject).toBe('alice');
      // The refreshed access token, not the expired one.
      expect(server.calls[1]?.token).toBe(server.issued[2]);
    } finally {
      await host.close();
    }
    expect(authorizations).toBe(1);

    // Another process with the same database connects with the stored tokens: no one is asked again.
    const again = await McpHost.connect(config(server.url), { connections: store, authorize: counting, logger });
    try {
      expect(again.failures).toEqual([]);
      expect(await whoami(again.host)).toMatchObject({ ok: true });
      expect(authorizations).toBe(1);
    } finally {
      await again.host.close();
    }

    // Canaries: no token the authorization server issued is in the logs or in any row of the table in clear.
    const rows = await sql<{ row: string }>`select t::text as row from mcp_connection_secrets t`.execute(database.db);
    expect(rows.rows.length).toBeGreaterThan(0);
    const dump = rows.rows.map((r) => r.row).join('\n');
    const hexDump = dump.toLowerCase();
    for (const canary of server.issued) {
      expect(logs.join('\n')).not.toContain(canary);
      expect(dump).not.toContain(canary);
      expect(hexDump).not.toContain(Buffer.from(canary).toString('hex'));
    }
  });

  it('rotates the key: rows sealed under the old key are sealed again under the new one, and still open', async () => {
    const oldBox = new SecretBox(KEY);
    const newKey = parseSecretKey(randomBytes(32).toString('base64'));
    const owner = { kind: 'workspace' } as const;
    await new PgConnectionStore(database.db, oldBox).write('rotating', owner, 'tokens', '{"access_token":"x"}');

    const onlyNew = new PgConnectionStore(database.db, new SecretBox(newKey));
    await expect(onlyNew.read('rotating', owner, 'tokens')).rejects.toThrow(/neither STEWARD_SECRETS_KEY/);
    const rotating = new PgConnectionStore(database.db, new SecretBox(newKey, [KEY]));
    expect(await rotating.sealAgain()).toBeGreaterThanOrEqual(1);
    expect(await onlyNew.read('rotating', owner, 'tokens')).toBe('{"access_token":"x"}');
    expect(await rotating.sealAgain()).toBe(0);
  });

  it('refuses a row moved to another server or owner (the ciphertext is bound to its row)', async () => {
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    await store.write('one', { kind: 'person', personId: 'slack:U1' }, 'tokens', '{"access_token":"y"}');
    await sql`update mcp_connection_secrets set owner = 'person:slack:U2' where server = 'one'`.execute(database.db);
    await expect(store.read('one', { kind: 'person', personId: 'slack:U2' }, 'tokens')).rejects.toThrow(
      /failed authentication/,
    );
  });
});
