/**
 * Start-up through the real entry point (`startApp`) with a server of `"auth": "workspace"` that nobody has authorized
 * yet: it is no failure, the start-up summary says it waits for an approver, and `/readyz` stays ready (connecting
 * it needs this very process's web origin, so holding traffic back for it would never end).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';

describe('a workspace server waiting for an approver, at start', () => {
  let db: TestDatabase;
  let llm: FakeLlm;
  let oauth: OAuthMcpServer;
  let app: App;
  let dir: string;
  let printed = '';

  beforeAll(async () => {
    [db, llm, oauth] = await Promise.all([
      createTestDatabase('postgres'),
      startFakeLlm(),
      startOAuthMcpServer({ consentAs: 'nobody' }),
    ]);
    dir = mkdtempSync(join(tmpdir(), 'steward-ws-start-'));
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { ws: { url: oauth.url, auth: 'workspace' } } }));
    const output = new PassThrough();
    output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    app = await startApp({
      env: {
        DATABASE_URL: testDatabaseUrlFor(db.name),
        STEWARD_HEALTH_PORT: '0',
        STEWARD_DASHBOARD_PORT: '0',
        STEWARD_DASHBOARD_HOST: '127.0.0.1',
        STEWARD_DASHBOARD_SECRET: randomBytes(32).toString('base64'),
        STEWARD_SECRETS_KEY: randomBytes(32).toString('base64'),
        OPENAI_BASE_URL: llm.baseURL,
        STEWARD_QUICK_ANSWERS: 'off',
        STEWARD_MODEL: 'm',
        DATA_DIR: dir,
        MCP_CONFIG: join(dir, 'mcp.json'),
      },
      input: new PassThrough(),
      output,
    });
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([llm?.close(), oauth?.close(), db?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is no failure: the summary says it waits for an approver, and the process is ready', async () => {
    const said = printed;
    expect(said).toContain('ws (waits for an approver to connect it for the workspace)');
    expect(said).not.toMatch(/! MCP server "ws" could not start/);
    const res = await fetch(`http://127.0.0.1:${app.health?.port ?? 0}/readyz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { checks: { name: string; ok: boolean; detail?: string }[] };
    expect(body.checks).toContainEqual({ name: 'mcp:ws', ok: true, detail: 'waits for an approver to connect it' });
  });
});
