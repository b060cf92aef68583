/**
 * `/healthz` and `/readyz` on STEWARD_HEALTH_PORT, as an orchestrator sees them: ready only while the database
 * answers and every MCP server is connected; a server that died, or a database that stopped, makes it not ready
 * (503, naming what is missing) until they are back.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { EVERYTHING_SCRIPT } from '../helpers/mcp-servers.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { privatePostgresMissing, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { stewardError } from '../helpers/steward-error.ts';
import { waitUntil } from '../helpers/wait.ts';

interface Readiness {
  ready: boolean;
  checks: { name: string; ok: boolean; detail?: string }[];
}

describeNeeding(privatePostgresMissing, 'health endpoints', () => {
  let server: PrivatePostgres;
  let llm: FakeLlm;
  let app: App;
  let dir: string;
  let base: string;

  beforeAll(async () => {
    server = await startPrivatePostgres();
    llm = await startFakeLlm();
    dir = mkdtempSync(join(tmpdir(), 'steward-health-'));
    const mcp = { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'] } } };
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify(mcp));
    const env = {
      DATABASE_URL: server.url,
      STEWARD_HEALTH_PORT: '0',
      OPENAI_BASE_URL: llm.baseURL,
      // Quick answers off: these scripts have no butler turn (test/e2e/quick-answers.test.ts turns them on).
      STEWARD_QUICK_ANSWERS: 'off',
      STEWARD_MODEL: 'm',
      DATA_DIR: dir,
      MCP_CONFIG: join(dir, 'mcp.json'),
    };
    app = await startApp({ env, input: new PassThrough(), output: new PassThrough() });
    base = `http://127.0.0.1:${app.health?.port ?? 0}`;
  });
  afterAll(async () => {
    await app?.close();
    await llm?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const readyz = async () => {
    const res = await fetch(`${base}/readyz`);
    return { status: res.status, body: (await res.json()) as Readiness };
  };
  const failing = (r: Readiness) => r.checks.filter((c) => !c.ok).map((c) => c.name);

  it('is alive, ready with the database and the MCP server up, and says where to look on other paths', async () => {
    const alive = await fetch(`${base}/healthz`);
    expect(alive.status).toBe(200);
    expect(await alive.json()).toEqual({ alive: true });
    expect(await readyz()).toEqual({
      status: 200,
      body: {
        ready: true,
        checks: [
          { name: 'database', ok: true },
          { name: 'mcp:everything', ok: true },
        ],
      },
    });
    const elsewhere = await fetch(`${base}/status`);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual({ error: 'not found; try /healthz, /readyz or /metrics' });
  });

  it('is not ready while an MCP server is down, and ready again once it is back', async () => {
    const pid = app.tools.serverPid('everything');
    expect(pid).toBeTypeOf('number');
    process.kill(pid as number, 'SIGKILL');
    const down = await waitUntil('readyz to report the server down', async () => {
      const r = await readyz();
      return r.status === 503 && r;
    });
    expect(failing(down.body)).toEqual(['mcp:everything']);
    await waitUntil('readyz to be ready again', async () => (await readyz()).status === 200);
    expect(app.tools.serverPid('everything')).not.toBe(pid);
  });

  it('is not ready while PostgreSQL is stopped (still alive), and ready again once it is back', async () => {
    await server.stop();
    try {
      const down = await readyz();
      expect(down.status).toBe(503);
      expect(failing(down.body)).toEqual(['database']);
      expect(down.body.checks[0]?.detail).toMatch(/PostgreSQL/);
      expect(JSON.stringify(down.body)).not.toContain('postgres://');
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      await server.start();
    }
    await waitUntil('readyz to be ready again', async () => (await readyz()).status === 200);
  });

  it('refuses a health port that is taken with a message naming the setting, and leaves nothing open', async () => {
    const taken = app.health?.port ?? 0;
    const env = {
      DATABASE_URL: server.url,
      STEWARD_HEALTH_PORT: String(taken),
      OPENAI_BASE_URL: llm.baseURL,
      // Quick answers off: these scripts have no butler turn (test/e2e/quick-answers.test.ts turns them on).
      STEWARD_QUICK_ANSWERS: 'off',
      STEWARD_MODEL: 'm',
      DATA_DIR: dir,
      MCP_CONFIG: join(dir, 'missing-mcp.json'),
    };
    const refusal = await stewardError(startApp({ env, input: new PassThrough(), output: new PassThrough() }));
    expect(refusal).toMatchObject({ code: 'config' });
    expect(refusal.message).toBe(`STEWARD_HEALTH_PORT ${taken} cannot be used (EADDRINUSE); choose a free port.`);
  });
});
