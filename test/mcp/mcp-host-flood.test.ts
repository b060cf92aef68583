/**
 * Issue 11, item 1: one oversized output must not take its server away. The flood fixture answers with 20 MB of
 * text; over stdio the SDK's own read buffer gives up at 10 MB and closes the connection, over HTTP the SDK reads
 * any body whole. The host refuses the answer with its size and hash, and the server's next call still works: the
 * fixture logs every call it really received, so the tests count them and see one process throughout.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import {
  httpServerConfig,
  mcpConfig,
  serverConfig,
  startHttpServer,
  type HttpTestServer,
} from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';

const FLOOD = join(import.meta.dirname, '../fixtures/flood-server.mjs');
const TWENTY_MB = 20 * 1024 * 1024;
const options = (timeoutMs = 30_000) => ({ signal: new AbortController().signal, timeoutMs });

let dir: string;
let callsLog: string;
let logs: string[];
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'steward-flood-'));
  callsLog = join(dir, 'calls.log');
  logs = [];
});

afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
  await rm(dir, { recursive: true, force: true });
});

/** The calls the fixture really received, in order. */
async function received(): Promise<{ pid: number; name: string }[]> {
  const text = await readFile(callsLog, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { pid: number; name: string });
}

async function connect(config: Parameters<typeof McpHost.connect>[0]) {
  const { host, failures } = await McpHost.connect(config, {
    logger: (level, message) => logs.push(`${level}: ${message}`),
    reconnect: { initialDelayMs: 50, maxDelayMs: 400 },
  });
  cleanups.push(() => host.close());
  expect(failures).toEqual([]);
  return host;
}

const stdioFlood = (env: Record<string, string> = {}) =>
  serverConfig('flood', { command: process.execPath, args: [FLOOD], env: { CALLS_LOG: callsLog, ...env } });

async function httpFlood(env: Record<string, string> = {}): Promise<HttpTestServer> {
  const server = await startHttpServer([FLOOD], { env: { CALLS_LOG: callsLog, ...env } });
  cleanups.push(() => server.close());
  return server;
}

/** What every transport must show: a refused 20 MB answer with size and hash, then a working next call. */
async function floodThenEcho(host: McpHost): Promise<void> {
  const flooded = await host.callTool('flood.flood', { bytes: TWENTY_MB }, options());
  expect(flooded).toMatchObject({ ok: false, error: { code: 'tool_error', retryable: false } });
  const message = flooded.ok ? '' : flooded.error.message;
  const [, bytes] = /output too large: (\d+) bytes \(limit 8388608\), sha256 [0-9a-f]{64}/.exec(message) ?? [];
  expect(message).toMatch(/^flood\.flood answered with an output too large: /);
  // The text and the JSON-RPC envelope around it.
  expect(Number(bytes)).toBeGreaterThan(TWENTY_MB);
  expect(Number(bytes)).toBeLessThan(TWENTY_MB + 200);

  const echoed = await host.callTool('flood.echo', { text: 'still here' }, options());
  expect(echoed).toEqual({ ok: true, value: { content: [{ type: 'text', text: 'still here' }] } });
  expect(host.serverStatus()).toEqual([{ name: 'flood', up: true }]);
  const calls = await received();
  expect(calls.map((c) => c.name)).toEqual(['flood', 'echo']);
  expect(new Set(calls.map((c) => c.pid)).size, 'one server process served both calls').toBe(1);
  expect(logs.filter((l) => /stopped|back with/.test(l))).toEqual([]);
  expect(
    logs.some((l) => /^warn: MCP server "flood" sent a message refused for its size: output too large/.test(l)),
  ).toBe(true);
}

describe('an oversized tool output keeps its server', () => {
  it('over stdio: a 20 MB answer is refused with its size and hash, and the same child answers the next call', async () => {
    const host = await connect(mcpConfig(stdioFlood()));
    const pid = host.serverPid('flood');
    await floodThenEcho(host);
    expect(host.serverPid('flood')).toBe(pid);
  });

  it('over Streamable HTTP with SSE answers: the same', async () => {
    const server = await httpFlood();
    await floodThenEcho(await connect(mcpConfig(httpServerConfig(server.url, { name: 'flood' }))));
  });

  it('over Streamable HTTP with plain JSON answers: the same', async () => {
    const server = await httpFlood({ JSON_RESPONSE: '1' });
    await floodThenEcho(await connect(mcpConfig(httpServerConfig(server.url, { name: 'flood' }))));
  });

  it('an output between the output bound and the message bound is still cut to its leading text, as before', async () => {
    const host = await connect(mcpConfig(stdioFlood()));
    const outcome = await host.callTool('flood.flood', { bytes: 3_000_000 }, options());
    expect(outcome).toMatchObject({ ok: true, value: { truncated: { bytes: expect.any(Number) as number } } });
    const text = outcome.ok ? JSON.stringify(outcome.value.content) : '';
    expect(text).toMatch(/^\[\{"type":"text","text":"xxxx/);
    expect(text).toMatch(/\[output cut: \d+ bytes in all, sha256 [0-9a-f]{64}; the rest was not kept\]/);
  });
});

describe('a server that dies in the middle of a call', () => {
  it('over stdio: the call is interrupted (it may have acted), not sent again, and the server comes back', async () => {
    const dieOnce = join(dir, 'die-once');
    await writeFile(dieOnce, '');
    const host = await connect(mcpConfig(stdioFlood({ DIE_ONCE: dieOnce })));
    const outcome = await host.callTool('flood.send', { to: 'ada@example.com' }, options());
    expect(outcome).toEqual({
      ok: false,
      error: {
        code: 'interrupted',
        retryable: true,
        message: expect.stringMatching(
          /^MCP server "flood" went away while flood\.send was running \(its process exited.*\); the tool may have acted already\.$/,
        ) as string,
      },
    });
    expect((await received()).map((c) => c.name)).toEqual(['send']);
    await waitUntil('the server to come back', () => host.serverStatus()[0]?.up, { details: () => logs.join('\n') });
    expect(await host.callTool('flood.send', { to: 'ada@example.com' }, options())).toMatchObject({ ok: true });
    expect((await received()).map((c) => c.name)).toEqual(['send', 'send']);
  });

  it('over Streamable HTTP: the same', async () => {
    const dieOnce = join(dir, 'die-once');
    await writeFile(dieOnce, '');
    const server = await httpFlood({ DIE_ONCE: dieOnce });
    const host = await connect(mcpConfig(httpServerConfig(server.url, { name: 'flood' })));
    const outcome = await host.callTool('flood.send', { to: 'ada@example.com' }, options());
    expect(outcome).toMatchObject({
      ok: false,
      error: { code: 'interrupted', message: expect.stringMatching(/may have acted already\.$/) as string },
    });
    expect((await received()).map((c) => c.name)).toEqual(['send']);
  });
});
