/**
 * Stop reaches only what is still in flight (issue 29): a run lists its server's tools before each step with the
 * run's stop signal, then calls. A Stop mid-call used to send `notifications/cancelled` for the listing too, answered
 * seconds before, on both transports. Counted on the server's side of the wire (a tap on the stdio pipes, a tap in
 * front of the HTTP endpoint), against real server-everything; its long operation keeps reporting progress after the
 * cancel, which Steward drops without a log line and never hands to the caller.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ToolProgress } from '../../src/engine/ports.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { startHttpTap, type TappedMessage } from '../helpers/http-tap.ts';
import {
  EVERYTHING_SCRIPT,
  httpServerConfig,
  mcpConfig,
  serverConfig,
  startEverythingHttp,
} from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';

const TAP = join(import.meta.dirname, '../fixtures/stdio-tap.mjs');
const LONG = 'everything.trigger-long-running-operation';
const cleanups: (() => Promise<void> | void)[] = [];

afterAll(async () => {
  for (const clean of cleanups.reverse()) await clean();
});

interface Wire {
  host: McpHost;
  logs: string[];
  /** What the server received, in order. */
  received(): TappedMessage[];
  /** Progress notifications the server sent so far. */
  progressSent(): number;
}

async function connect(config: Parameters<typeof mcpConfig>[0]): Promise<{ host: McpHost; logs: string[] }> {
  const logs: string[] = [];
  const { host, failures } = await McpHost.connect(mcpConfig(config), {
    logger: (level, line) => logs.push(`${level} ${line}`),
  });
  expect(failures).toEqual([]);
  cleanups.push(() => host.close());
  return { host, logs };
}

async function stdioWire(): Promise<Wire> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-tap-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'wire.jsonl');
  const config = serverConfig('everything', {
    command: process.execPath,
    args: [TAP, file, EVERYTHING_SCRIPT, 'stdio'],
  });
  const { host, logs } = await connect(config);
  const lines = () =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { dir: 'in' | 'out'; message: TappedMessage });
  return {
    host,
    logs,
    received: () => lines().flatMap((l) => (l.dir === 'in' ? [l.message] : [])),
    progressSent: () => lines().filter((l) => l.dir === 'out' && l.message.method === 'notifications/progress').length,
  };
}

async function httpWire(): Promise<Wire> {
  const server = await startEverythingHttp();
  cleanups.push(() => server.close());
  const tap = await startHttpTap(server.url);
  cleanups.push(() => tap.close());
  const { host, logs } = await connect(httpServerConfig(tap.url));
  return {
    host,
    logs,
    received: () => tap.received(),
    progressSent: () => tap.sent().split('"method":"notifications/progress"').length - 1,
  };
}

describe.each([
  ['stdio', stdioWire],
  ['Streamable HTTP', httpWire],
])('Stop mid-call over %s', (_transport, open) => {
  it('the server receives exactly one notifications/cancelled, for the call, and late progress is dropped quietly', async () => {
    const wire = await open();
    const stop = new AbortController();
    // As the run driver does before a step: the listing under the run's stop signal, answered before the call.
    await wire.host.refreshTool(LONG, { signal: stop.signal, timeoutMs: 5000 });
    const listed = wire.received().filter((m) => m.method === 'tools/list');
    expect(listed.length).toBeGreaterThanOrEqual(2);
    const reports: ToolProgress[] = [];
    const call = wire.host.callTool(
      LONG,
      { duration: 30, steps: 30 },
      { signal: stop.signal, timeoutMs: 60_000, onProgress: (p) => reports.push(p) },
    );
    const sent = await waitUntil('the call to reach the server and its progress to reach the caller', () =>
      reports.length > 0 ? wire.received().find((m) => m.method === 'tools/call') : undefined,
    );
    // What the server reports reaches the caller as it said it (issue 29: progress moves the card).
    expect(reports[0]).toEqual({ progress: 1, total: 30 });
    stop.abort();
    const reportsAtStop = reports.length;
    expect(await call).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    const progressAtStop = wire.progressSent();
    // server-everything does not stop its loop when cancelled: wait for its next report, which nothing awaits now.
    await waitUntil('progress sent after the cancel', () => wire.progressSent() > progressAtStop, { timeoutMs: 5000 });
    expect(reports).toHaveLength(reportsAtStop);
    const cancelled = await waitUntil('the cancellation to arrive', () => {
      const found = wire.received().filter((m) => m.method === 'notifications/cancelled');
      return found.length > 0 && found;
    });
    expect(cancelled.map((m) => m.params?.requestId)).toEqual([sent.id]);
    // A late message still in the pipe would show here as a second one.
    await wire.host.callTool(
      'everything.echo',
      { message: 'after' },
      { signal: new AbortController().signal, timeoutMs: 5000 },
    );
    expect(wire.received().filter((m) => m.method === 'notifications/cancelled')).toHaveLength(1);
    expect(wire.logs.filter((l) => l.includes('unknown token'))).toEqual([]);
  });
});
