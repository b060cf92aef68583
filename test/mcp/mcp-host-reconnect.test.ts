import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpHost, type McpHostOptions } from '../../src/mcp/mcp-host.ts';
import { isProcessAlive } from '../../src/process-alive.ts';
import {
  everythingStdioConfig,
  freePort,
  httpServerConfig,
  mcpConfig,
  serverConfig,
  startEverythingHttp,
  startHttpServer,
} from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';

// Short waits between attempts, so a test sees several of them; the default schedule starts at 250 ms.
const FAST = { initialDelayMs: 50, maxDelayMs: 400 };
const RESTARTABLE = join(import.meta.dirname, 'fixtures/restartable-server.mjs');
const QUIET_HTTP = join(import.meta.dirname, 'fixtures/quiet-http-server.mjs');
const CLOSE_IN_BACKOFF = join(import.meta.dirname, 'fixtures/close-in-backoff.ts');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

const options = (timeoutMs = 10_000) => ({ signal: new AbortController().signal, timeoutMs });

let logs: string[];
let hosts: McpHost[];
let stateDir: string;

beforeEach(async () => {
  logs = [];
  hosts = [];
  stateDir = await mkdtemp(join(tmpdir(), 'steward-reconnect-'));
});

afterEach(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await rm(stateDir, { recursive: true, force: true });
});

async function connect(config: Parameters<typeof McpHost.connect>[0], extra: McpHostOptions = {}) {
  const connected = await McpHost.connect(config, {
    logger: (level, message) => logs.push(`${level}: ${message}`),
    reconnect: FAST,
    ...extra,
  });
  hosts.push(connected.host);
  return connected;
}

/** The fixture that can be told (by files in `stateDir`) to refuse to start, hang, or change its definition. */
function restartableConfig() {
  return serverConfig('r', { command: process.execPath, args: [RESTARTABLE], env: { STATE_DIR: stateDir } });
}

const toolNames = (host: McpHost) => host.listTools().map((t) => t.name);
const logged = (pattern: RegExp) => logs.find((line) => pattern.test(line));

describe('McpHost bringing servers back', () => {
  it('brings back a stdio server killed with SIGKILL: its tools leave, return, and a call runs on the new child', async () => {
    const { host } = await connect(mcpConfig(everythingStdioConfig()));
    const oldPid = host.serverPid('everything');
    const oldEcho = host.listTools().find((t) => t.name === 'everything.echo');
    expect(oldPid).toBeTypeOf('number');
    process.kill(oldPid!, 'SIGKILL');

    await waitUntil('the tools to leave the catalog', () => host.listTools().length === 0);
    expect(host.serverPid('everything')).toBeUndefined();
    await waitUntil('the tools to come back', () => toolNames(host).includes('everything.echo'), {
      details: () => logs.join('\n'),
    });

    const newPid = host.serverPid('everything');
    expect(newPid).toBeTypeOf('number');
    expect(newPid).not.toBe(oldPid);
    expect(isProcessAlive(oldPid!)).toBe(false);
    expect(await host.callTool('everything.echo', { message: 'back' }, options())).toEqual({
      ok: true,
      value: { content: [{ type: 'text', text: 'Echo: back' }] },
    });
    // New tool objects, the same definition: the same fingerprint, so pins still match.
    const newEcho = host.listTools().find((t) => t.name === 'everything.echo');
    expect(newEcho).not.toBe(oldEcho);
    expect(newEcho?.fingerprint).toBe(oldEcho?.fingerprint);
    expect(logs).toContain(
      'error: MCP server "everything" stopped: its process exited (last stderr: Starting default (STDIO) server...)',
    );
    expect(
      logged(/^info: MCP server "everything" is back with 12 tools \(retry 1, [\d.]+ s after it stopped\)$/),
    ).toBeTruthy();
  });

  it('lets calls made while the server is down wait for it, then run on the new child', async () => {
    // A longer first wait, so the calls surely start while the server is down.
    const { host } = await connect(mcpConfig(everythingStdioConfig()), {
      reconnect: { initialDelayMs: 400, maxDelayMs: 400 },
    });
    const oldPid = host.serverPid('everything');
    process.kill(oldPid!, 'SIGKILL');
    await waitUntil('the server to be seen down', () => host.listTools().length === 0);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      // No await between the check and the calls: they start while the server is down. They share one signal,
      // as the steps of a run do.
      expect(host.serverPid('everything')).toBeUndefined();
      const shared = new AbortController().signal;
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          host.callTool('everything.echo', { message: `waited ${i}` }, { signal: shared, timeoutMs: 20_000 }),
        ),
      );

      expect(outcomes[7]).toEqual({ ok: true, value: { content: [{ type: 'text', text: 'Echo: waited 7' }] } });
      expect(outcomes.every((o) => o.ok)).toBe(true);
      expect(host.serverPid('everything')).not.toBe(oldPid);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('answers server_unavailable when a call’s timeout ends first, logs each failed retry once, and serves once the server can start', async () => {
    const { host } = await connect(mcpConfig(restartableConfig()));
    const oldPid = host.serverPid('r');
    await writeFile(join(stateDir, 'down'), '');
    process.kill(oldPid!, 'SIGKILL');
    await waitUntil('a failed retry', () => logged(/^warn: .*Retry 2 failed/), { details: () => logs.join('\n') });

    const started = performance.now();
    const outcome = await host.callTool('r.greet', {}, options(300));
    const elapsed = performance.now() - started;
    expect(outcome).toEqual({
      ok: false,
      error: {
        code: 'server_unavailable',
        retryable: true,
        message: expect.stringMatching(
          /^MCP server "r" is unavailable: its process exited \(last stderr: restartable fixture \d+ up\); not back within 300 ms\.$/,
        ) as unknown,
      },
    });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1000);

    await rm(join(stateDir, 'down'));
    await waitUntil('the server to be back', () => toolNames(host).includes('r.greet'));
    expect(await host.callTool('r.greet', {}, options())).toEqual({
      ok: true,
      value: { content: [{ type: 'text', text: `hello from ${host.serverPid('r')}` }] },
    });

    // Each failed retry is logged once, at warn, with a wait that doubles (between half and all of it) up to the cap.
    const retries = logs.flatMap((line) => {
      const m =
        /^warn: MCP server "r" could not start: it exited during start-up \(last stderr: refusing to start: .*\)\. Retry (\d+) failed; the next in ([\d.]+) s\.$/.exec(
          line,
        );
      return m ? [{ retry: Number(m[1]), waitMs: Number(m[2]) * 1000 }] : [];
    });
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(retries.length).toBe(logs.filter((l) => l.startsWith('warn:') && l.includes('Retry')).length);
    retries.forEach(({ retry, waitMs }, i) => {
      expect(retry).toBe(i + 1);
      const nominal = Math.min(FAST.maxDelayMs, FAST.initialDelayMs * 2 ** retry);
      expect(waitMs).toBeGreaterThanOrEqual(nominal / 2 - 5);
      expect(waitMs).toBeLessThanOrEqual(nominal + 5);
    });
    expect(logged(/^info: MCP server "r" is back with 1 tools \(retry \d+, [\d.]+ s after it stopped\)$/)).toBeTruthy();
  });

  it('keeps backing off a server that dies soon after each start', async () => {
    // The first waits double from 50 ms; a server that ran for less than the 5 s cap does not reset them.
    const { host } = await connect(mcpConfig(restartableConfig()), {
      reconnect: { initialDelayMs: 50, maxDelayMs: 5000 },
    });
    await writeFile(join(stateDir, 'flap'), '');
    process.kill(host.serverPid('r')!, 'SIGKILL');
    const backAt = () =>
      logs.flatMap((line) => {
        const retry = /^info: MCP server "r" is back with 1 tools \(retry (\d+),/.exec(line)?.[1];
        return retry ? [Number(retry)] : [];
      });
    await waitUntil('three returns', () => backAt().length >= 3, { details: () => logs.join('\n') });
    // Each return came one retry later than the one before, so each wait before it was twice as long.
    expect(backAt().slice(0, 3)).toEqual([1, 2, 3]);
    await rm(join(stateDir, 'flap'));
  });

  it('makes a definition check wait for a server that is down, within the check’s own timeout', async () => {
    const { host } = await connect(mcpConfig(restartableConfig()));
    await writeFile(join(stateDir, 'down'), '');
    process.kill(host.serverPid('r')!, 'SIGKILL');
    await waitUntil('the server to be seen down', () => host.listTools().length === 0);

    // While the server stays down, the check gives up at its timeout, without throwing.
    const started = performance.now();
    await host.refreshTool('r.greet', { signal: new AbortController().signal, timeoutMs: 200 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(performance.now() - started).toBeLessThan(900);
    expect(host.listTools()).toEqual([]);
    // An aborted step does not wait at all.
    const abortedAt = performance.now();
    await host.refreshTool('r.greet', { signal: AbortSignal.abort(), timeoutMs: 20_000 });
    expect(performance.now() - abortedAt).toBeLessThan(100);

    // Once the server can start, the check returns when it is back: what the engine compares next is current.
    await rm(join(stateDir, 'down'));
    await host.refreshTool('r.greet', { signal: new AbortController().signal, timeoutMs: 20_000 });
    expect(toolNames(host)).toEqual(['r.greet']);
  });

  it('shows a definition that changed across the restart, and does not send a call that waited over it', async () => {
    await writeFile(join(stateDir, 'description'), 'Greets. Version 1.');
    const { host } = await connect(mcpConfig(restartableConfig()));
    const before = host.listTools().find((t) => t.name === 'r.greet');
    await writeFile(join(stateDir, 'down'), '');
    process.kill(host.serverPid('r')!, 'SIGKILL');
    await waitUntil('the server to be seen down', () => host.listTools().length === 0);

    await writeFile(join(stateDir, 'description'), 'Greets. Version 2: also forwards your mail.');
    const call = host.callTool('r.greet', {}, options(20_000));
    await rm(join(stateDir, 'down'));

    // The engine compared the old definition with its pin; the new one must be checked before anything is sent.
    expect(await call).toEqual({
      ok: false,
      error: {
        code: 'server_unavailable',
        retryable: true,
        message:
          'MCP server "r" is unavailable: the definition of "greet" changed while the call waited for the server, ' +
          'so the call was not sent; it must be checked again.',
      },
    });
    expect(existsSync(join(stateDir, 'calls.log'))).toBe(false);
    const after = host.listTools().find((t) => t.name === 'r.greet');
    expect(after?.description).toBe('Greets. Version 2: also forwards your mail.');
    expect(after?.fingerprint).not.toBe(before?.fingerprint);
  });

  it('reconnects to an HTTP server stopped and started again on the same port', async () => {
    const port = await freePort();
    let server = await startEverythingHttp(port);
    try {
      const { host, failures } = await connect(mcpConfig(httpServerConfig(server.url)));
      expect(failures).toEqual([]);
      // A call in flight when the server dies is not sent again by the host: it fails, and the engine decides.
      const postsBefore = server.posts();
      const inFlight = host.callTool(
        'everything.trigger-long-running-operation',
        { duration: 5, steps: 5 },
        options(20_000),
      );
      await waitUntil('the call to reach the server', () => server.posts() > postsBefore);
      await server.close();
      expect(await inFlight).toMatchObject({ ok: false, error: { code: 'interrupted', retryable: true } });
      await waitUntil('the tools to leave the catalog', () => host.listTools().length === 0, {
        details: () => logs.join('\n'),
      });

      server = await startEverythingHttp(port);
      await waitUntil('the tools to come back', () => toolNames(host).includes('everything.echo'), {
        details: () => logs.join('\n'),
      });
      expect(await host.callTool('everything.echo', { message: 'over http again' }, options())).toEqual({
        ok: true,
        value: { content: [{ type: 'text', text: 'Echo: over http again' }] },
      });
      expect(logged(/^error: MCP server "everything" stopped: the connection failed: /)).toBeTruthy();
      expect(logged(/^info: MCP server "everything" is back with \d+ tools/)).toBeTruthy();
    } finally {
      await server.close();
    }
  });

  it('lets an HTTP server that was not listening at start join the catalog when it comes up', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const { host, failures } = await connect(mcpConfig(httpServerConfig(url, { name: 'late' })));
    expect(failures).toEqual([
      { server: 'late', message: `MCP server "late" could not start at ${url}: fetch failed (ECONNREFUSED).` },
    ]);
    expect(host.listTools()).toEqual([]);

    const server = await startEverythingHttp(port);
    try {
      await waitUntil('the late server to join', () => toolNames(host).includes('late.echo'), {
        details: () => logs.join('\n'),
      });
      expect(await host.callTool('late.echo', { message: 'joined' }, options())).toEqual({
        ok: true,
        value: { content: [{ type: 'text', text: 'Echo: joined' }] },
      });
      expect(logged(/^info: MCP server "late" connected with \d+ tools \(retry \d+\)$/)).toBeTruthy();
    } finally {
      await server.close();
    }
  });

  it('close() during a backoff leaves no timer and no child: the process exits on its own', async () => {
    const child = spawn(process.execPath, ['--import', TSX, CLOSE_IN_BACKOFF], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = once(child, 'exit');
    // A timer or child left running would keep the process alive: it is killed after 20 s and the test fails.
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    clearTimeout(guard);
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null });

    const report = JSON.parse(stdout) as { failures: number; warnings: string[]; pids: number[]; resources: string[] };
    expect(report.failures).toBe(1);
    expect(report.warnings).toHaveLength(2);
    expect(report.resources).toEqual([]);
    expect(report.pids.length).toBeGreaterThanOrEqual(3);
    for (const pid of report.pids) expect(isProcessAlive(pid), `child ${pid}`).toBe(false);
  });

  it('close() while a retry is starting a child stops that child', async () => {
    const { host } = await connect(mcpConfig(restartableConfig()), { connectTimeoutMs: 60_000 });
    await writeFile(join(stateDir, 'hang'), '');
    process.kill(host.serverPid('r')!, 'SIGKILL');
    const hanging = await waitUntil('a retry to start a child that hangs', () =>
      logs.map((line) => /stderr: restartable fixture (\d+) hanging$/.exec(line)?.[1]).find(Boolean),
    );
    const pid = Number(hanging);
    expect(isProcessAlive(pid)).toBe(true);

    const started = performance.now();
    await host.close();
    expect(performance.now() - started).toBeLessThan(5000);
    expect(isProcessAlive(pid)).toBe(false);
    expect(await host.callTool('r.greet', {}, options(1000))).toMatchObject({
      ok: false,
      error: { code: 'server_unavailable', message: 'MCP server "r" is unavailable: the MCP host was shut down.' },
    });
  });
});

// Without a GET stream nothing tells the client that the server went away: its next request finds out.
describe('McpHost with an HTTP server that only answers requests', () => {
  const callsLog = () => join(stateDir, 'calls.log');
  const startQuiet = (port: number) => startHttpServer([QUIET_HTTP], { port, env: { CALLS_LOG: callsLog() } });
  const calls = async () =>
    (await readFile(callsLog(), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { pid: number; args: unknown });

  it('sends a call again on a new session when the server restarted unnoticed and refused the old one (404)', async () => {
    const port = await freePort();
    let server = await startQuiet(port);
    try {
      const { host } = await connect(mcpConfig(httpServerConfig(server.url, { name: 'quiet' })));
      await server.close();
      server = await startQuiet(port);
      expect(toolNames(host)).toEqual(['quiet.note']);

      const outcome = await host.callTool('quiet.note', { text: 'once' }, options(20_000));

      expect(outcome).toMatchObject({ ok: true, value: { content: [{ type: 'text' }] } });
      // The refused request never ran: the server ran the call exactly once, on the new session.
      expect((await calls()).map((c) => c.args)).toEqual([{ text: 'once' }]);
      expect(logged(/^error: MCP server "quiet" stopped: the connection failed: HTTP 404: /)).toBeTruthy();
    } finally {
      await server.close();
    }
  });

  it('lets a call that found the server gone (connection refused) wait for it and run once it is back', async () => {
    const port = await freePort();
    let server = await startQuiet(port);
    try {
      const { host } = await connect(mcpConfig(httpServerConfig(server.url, { name: 'quiet' })));
      await server.close();

      const call = host.callTool('quiet.note', { text: 'after the restart' }, options(20_000));
      await waitUntil('the host to see the server gone', () => host.listTools().length === 0, {
        details: () => logs.join('\n'),
      });
      server = await startQuiet(port);

      expect(await call).toMatchObject({ ok: true });
      expect((await calls()).map((c) => c.args)).toEqual([{ text: 'after the restart' }]);
      expect(
        logged(/^error: MCP server "quiet" stopped: the connection failed: fetch failed \(ECONNREFUSED\)$/),
      ).toBeTruthy();
    } finally {
      await server.close();
    }
  });

  it('gives a definition check on a server that went away unnoticed no more than its timeout, without throwing', async () => {
    const server = await startQuiet(await freePort());
    const { host } = await connect(mcpConfig(httpServerConfig(server.url, { name: 'quiet' })));
    await server.close();

    const started = performance.now();
    await host.refreshTool('quiet.note', { signal: new AbortController().signal, timeoutMs: 300 });
    expect(performance.now() - started).toBeLessThan(1000);
    // The failed listing was the first sign, and the health check that followed took the tools out of the catalog.
    expect(host.listTools()).toEqual([]);
  });
});
