/**
 * The audit fixture shared over Streamable HTTP (`startSharedAuditServer`), as the scenario matrix's cells use it:
 * each AuditServer sees only its own hosts' calls, a session behaves as a stdio child of its own did (its own tools
 * and calls in flight; a cancellation logged, a session's end not), and a session must name an absolute log file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../../src/engine/types.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { startSharedAuditServer, type AuditServer } from '../e2e/harness.ts';
import { mcpConfig, sharedAuditUrl } from './mcp-servers.ts';
import { waitUntil } from './wait.ts';

const hosts: McpHost[] = [];
const audits: AuditServer[] = [];

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  for (const a of audits.splice(0)) a.remove();
});

async function audit(): Promise<AuditServer> {
  const started = await startSharedAuditServer();
  audits.push(started);
  return started;
}

async function connect(server: AuditServer): Promise<McpHost> {
  const { host, failures } = await McpHost.connect(mcpConfig(server.config()));
  expect(failures).toEqual([]);
  hosts.push(host);
  return host;
}

async function close(host: McpHost): Promise<void> {
  hosts.splice(hosts.indexOf(host), 1);
  await host.close();
}

const call = (host: McpHost, tool: string, args: Record<string, Json>, signal = new AbortController().signal) =>
  host.callTool(`audit.${tool}`, args, { signal, timeoutMs: 70_000 });
const seen = (a: AuditServer) => a.entries().map((e) => [e.type, e.name, e.args, e.inFlight]);

describe('the shared audit server', () => {
  it('logs each AuditServer’s calls to its own file, with its own calls in flight', async () => {
    const [a, b] = [await audit(), await audit()];
    const [ha, hb] = [await connect(a), await connect(b)];
    const slow = call(ha, 'sleep', { ms: 1000 });
    await waitUntil('the first sleep to arrive', () => a.entries().length === 1);
    await call(ha, 'sleep', { ms: 1 });
    await call(hb, 'note', { text: 'b' });
    await slow;
    expect(seen(a)).toEqual([
      ['call', 'sleep', { ms: 1000 }, 1],
      ['call', 'sleep', { ms: 1 }, 2],
    ]);
    expect(seen(b)).toEqual([['call', 'note', { text: 'b' }, 1]]);
  });

  it('logs a call the client stops as cancelled, and not one in flight when the host closes', async () => {
    const a = await audit();
    const host = await connect(a);
    const stop = new AbortController();
    const stopped = call(host, 'sleep', { ms: 60_000 }, stop.signal);
    await waitUntil('the sleep to arrive', () => a.entries().length === 1);
    stop.abort();
    await stopped;
    await waitUntil('the cancellation to arrive', () => a.entries().length === 2);
    void call(host, 'sleep', { ms: 60_001 });
    await waitUntil('the second sleep to arrive', () => a.entries().length === 3);
    // Closing ends the session (the client's DELETE), after which the server has logged all it will.
    await close(host);
    expect(seen(a)).toEqual([
      ['call', 'sleep', { ms: 60_000 }, 1],
      ['cancelled', 'sleep', undefined, undefined],
      ['call', 'sleep', { ms: 60_001 }, 1],
    ]);
  });

  it('gives each host a session of its own on the same log, with the tools as first defined', async () => {
    const a = await audit();
    const first = await connect(a);
    const original = first.listTools().find((t) => t.tool === 'sleep')?.description;
    await call(first, 'mutate', {});
    // A second process, or the same one after it closed its host, connects as a new child would have started.
    const second = await connect(a);
    expect(second.listTools().find((t) => t.tool === 'sleep')?.description).toBe(original);
    await close(first);
    const again = await connect(a);
    await call(again, 'note', { text: 'again' });
    expect(seen(a)).toEqual([
      ['call', 'mutate', {}, 1],
      ['call', 'note', { text: 'again' }, 1],
    ]);
  });

  it('refuses a session whose URL names no log file, or a relative one', async () => {
    const url = await sharedAuditUrl();
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    };
    const statuses = await Promise.all(
      [url, `${url}?log=audit.jsonl`].map(async (to) => {
        const res = await fetch(to, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify(initialize),
        });
        return [res.status, await res.text()];
      }),
    );
    expect(statuses.map(([status]) => status)).toEqual([400, 400]);
    expect(String(statuses[0]?.[1])).toContain('must name the log file');
  });
});
