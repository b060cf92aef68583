/**
 * A connection made through a link in a browser that was not signed in as the link's person waits for them to confirm
 * it in chat. Unanswered for a day, it is revoked at the authorization server (RFC 7009, as "Not me" does) and
 * forgotten, once whichever process looks; and only the tokens that link brought, never newer ones a later
 * authorization of the same person wrote meanwhile. Real parts: the SDK's authorization server and MCP server
 * (test/helpers/oauth-mcp-server.ts), McpHost, PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../src/engine/types.ts';
import { personOwner } from '../src/mcp/connection-store.ts';
import { parseMcpConfig } from '../src/mcp/mcp-config.ts';
import { McpHost } from '../src/mcp/mcp-host.ts';
import { PersonConnectionFlow } from '../src/person-connections.ts';
import { PENDING_CONNECTION_TTL_MS, PgConnectLinks } from '../src/store/pg-connect-links.ts';
import { PgConnectionStore } from '../src/store/pg-connection-store.ts';
import { parseSecretKey, SecretBox } from '../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from './helpers/databases.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from './helpers/oauth-mcp-server.ts';

const KEY = parseSecretKey(randomBytes(32).toString('base64'));
const ADA: Actor = { channel: 'slack', id: 'U0ADA', name: 'Ada' };
const start = new Date('2026-12-05T10:00:00Z');
const after = (ms: number) => new Date(start.getTime() + ms);

function config(url: string) {
  return parseMcpConfig(JSON.stringify({ mcpServers: { tracker: { url, auth: 'person' } } }), 'test mcp.json');
}

/** The browser the link was opened in, signed in at the authorization server as `subject`: allows at once. */
async function consent(url: string, subject: string): Promise<{ code: string; state: string }> {
  const response = await fetch(url, { redirect: 'manual', headers: { cookie: `as_user=${subject}` } });
  const back = new URL(response.headers.get('location') ?? '');
  return { code: back.searchParams.get('code') ?? '', state: back.searchParams.get('state') ?? '' };
}

describe('a connection waiting to be confirmed', () => {
  let server: OAuthMcpServer;
  let database: TestDatabase;
  let host: McpHost;
  let store: PgConnectionStore;
  let links: PgConnectLinks;
  let flow: PersonConnectionFlow;
  const logs: string[] = [];

  beforeAll(async () => {
    [server, database] = await Promise.all([
      startOAuthMcpServer({ consentAs: 'nobody' }),
      createTestDatabase('postgres'),
    ]);
    store = new PgConnectionStore(database.db, new SecretBox(KEY));
    ({ host } = await McpHost.connect(config(server.url), { connections: store, logger: () => undefined }));
    links = new PgConnectLinks(database.db);
    flow = new PersonConnectionFlow(host, links, 'http://127.0.0.1:1', (level, message) =>
      logs.push(`${level} ${message}`),
    );
  });
  afterAll(async () => {
    await host?.close();
    await Promise.all([server?.close(), database?.close()]);
  });

  /** A link of Ada's opened in a browser not signed in to the dashboard, allowed as `subject`, at `at`. */
  async function connectUnconfirmed(subject: string, at: Date) {
    const token = await links.issue({ server: 'tracker', person: ADA, runId: null }, at);
    const binding = randomBytes(8).toString('hex');
    const started = await flow.start(token, binding, at, false);
    const back = await consent(started!.url, subject);
    return { back, binding };
  }

  const pending = () => store.read('tracker', personOwner(ADA), 'pending');

  it('is revoked at the server and forgotten once a day has passed without an answer', async () => {
    const { back, binding } = await connectUnconfirmed('mallory@tracker', start);
    expect(await flow.finish(back.state, binding, back.code, after(1000))).toMatchObject({ pending: true });
    const kept = JSON.parse((await pending()) ?? '{}') as { refresh_token?: string };
    expect(kept.refresh_token).toMatch(/^canary-refresh-/);

    // Not yet: a day has not passed since it began to wait.
    await flow.expirePending(after(PENDING_CONNECTION_TTL_MS));
    expect(await pending()).toBeDefined();
    expect(server.revoked).toEqual([]);

    // Two processes look at once: it is revoked once and forgotten.
    const late = after(1000 + PENDING_CONNECTION_TTL_MS);
    await Promise.all([flow.expirePending(late), flow.expirePending(late)]);
    expect(await pending()).toBeUndefined();
    expect(server.revoked).toEqual([kept.refresh_token]);
    expect(logs.filter((l) => l.includes('did not confirm tracker within a day'))).toHaveLength(1);
    // A press on "Use this connection" left in the thread's history finds nothing now.
    expect(await flow.confirm('tracker', ADA, 'use', after(2000 + PENDING_CONNECTION_TTL_MS))).toBeNull();
    expect(await host.hasConnection('tracker', ADA)).toBe(false);
  });

  it('forgets only the tokens its link brought, never those a newer authorization wrote meanwhile', async () => {
    const old = await connectUnconfirmed('mallory@tracker', start);
    await flow.finish(old.back.state, old.binding, old.back.code, after(1000));
    const revokedBefore = server.revoked.length;
    // Ada authorizes again; her tokens are written as the pending ones, and her link is not marked pending yet when
    // the old one expires (the callback's two statements, with the expiry between them).
    const fresh = await connectUnconfirmed('ada@tracker', after(PENDING_CONNECTION_TTL_MS));
    expect(await links.complete(fresh.back.state, fresh.binding, after(1000 + PENDING_CONNECTION_TTL_MS))).toBeTruthy();
    await host.finishConnection('tracker', ADA, fresh.back.code, true);
    const written = await pending();

    await flow.expirePending(after(2000 + PENDING_CONNECTION_TTL_MS));
    expect(await pending()).toBe(written);
    expect(server.revoked.length).toBe(revokedBefore);
  });
});
