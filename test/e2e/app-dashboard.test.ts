/**
 * The dashboard as the app starts it from the environment: on STEWARD_DASHBOARD_PORT, with links from the console's
 * `dashboard` command pointing at the port it got, the secret never printed, and gone when the app closes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { EVERYTHING_SCRIPT } from '../helpers/mcp-servers.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { itNeeding } from '../helpers/needs.ts';
import { waitUntil } from '../helpers/wait.ts';

const SECRET = `dashboard-secret-${crypto.randomUUID()}`;

describe('the app with STEWARD_DASHBOARD_PORT', () => {
  let llm: FakeLlm;
  let app: App | undefined;
  let dir: string;
  let database: TestDatabase;
  let printed = '';
  const input = new PassThrough();

  beforeAll(async () => {
    llm = await startFakeLlm();
    // A database of its own: the app migrates what it opens.
    database = await createTestDatabase('postgres');
    dir = mkdtempSync(join(tmpdir(), 'steward-dashboard-'));
    const mcp = { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'] } } };
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify(mcp));
    const output = new PassThrough();
    output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    app = await startApp({
      env: {
        DATABASE_URL: testDatabaseUrlFor(database.name),
        STEWARD_DASHBOARD_PORT: '0',
        STEWARD_DASHBOARD_SECRET: SECRET,
        OPENAI_BASE_URL: llm.baseURL,
        STEWARD_QUICK_ANSWERS: 'off',
        STEWARD_MODEL: 'm',
        DATA_DIR: dir,
        MCP_CONFIG: join(dir, 'mcp.json'),
        USER: 'ada',
      },
      input,
      output,
    });
  });
  afterAll(async () => {
    await app?.close();
    await llm?.close();
    await database?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the dashboard, and the console prints a link to it that signs this person in once', async () => {
    const port = app?.dashboard?.port;
    expect(port).toBeGreaterThan(0);
    expect(printed).toContain(`Dashboard: on port ${port}; sign-in links point at http://127.0.0.1:${port}.`);
    input.write('dashboard\n');
    const link = await waitUntil(
      'the link',
      () => /sign-in link \(works once, for 15 minutes\): (\S+)/.exec(printed)?.[1],
    );
    expect(link).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/signin/`));
    const token = link.split('/signin/')[1] ?? '';
    const signIn = () =>
      fetch(`http://127.0.0.1:${port}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: `http://127.0.0.1:${port}` },
        body: new URLSearchParams({ token }).toString(),
      });
    const first = await signIn();
    expect(first.status).toBe(303);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const runs = await fetch(`http://127.0.0.1:${port}/runs`, { headers: { cookie } });
    expect(runs.status).toBe(200);
    expect(await runs.text()).toContain('Signed in as ada (console)');
    expect((await signIn()).status).toBe(403);

    // Signing out ends the session itself: the cookie, copied before, no longer opens anything.
    const out = await fetch(`http://127.0.0.1:${port}/signout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: `http://127.0.0.1:${port}`, cookie },
      body: '',
    });
    expect(out.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/runs`, { headers: { cookie } })).status).toBe(401);

    const log = readFileSync(join(dir, 'steward.log'), 'utf8');
    expect(log).toContain('dashboard: console:ada signed in');
    expect(`${log}${printed}`).not.toContain(SECRET);
  });

  // An address of this machine other than loopback, where one exists (CI's machine has one).
  const outside = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && !a.internal && a.family === 'IPv4')?.address;
  const noOutside = outside ? undefined : 'this machine has no IPv4 address but loopback';
  itNeeding(noOutside, 'listens on loopback only, unless STEWARD_DASHBOARD_HOST says otherwise', async () => {
    const port = app?.dashboard?.port;
    expect((await fetch(`http://127.0.0.1:${port}/signin/x`)).status).toBeLessThan(500);
    await expect(fetch(`http://${outside}:${port}/signin/x`)).rejects.toThrow();
  });

  it('stops serving when the app closes', async () => {
    const port = app?.dashboard?.port;
    await app?.close();
    app = undefined;
    await expect(fetch(`http://127.0.0.1:${port}/runs`)).rejects.toThrow();
  });
});
