/**
 * Safe concurrency by default (issue 29), against real server-memory, which rewrites its whole file on each write
 * without a lock: twenty rounds of two independent writes sent together kept 2 of 20 relations when Steward sent them
 * at once, each call answering success. Without `maxConcurrency`, calls that may write now go one at a time per
 * server, and read-only calls stay parallel (seen on a tap on the server's pipes: both reads arrive before either
 * answer, each write only after the one before it was answered).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../src/engine/types.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { MEMORY_SCRIPT, mcpConfig, serverConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';

const TAP = join(import.meta.dirname, '../fixtures/stdio-tap.mjs');
const dir = mkdtempSync(join(tmpdir(), 'steward-memory-'));
const wire = join(dir, 'wire.jsonl');
const pidFile = join(dir, 'server.pid');
let host: McpHost;
const call = (tool: string, args: Record<string, Json>) =>
  host.callTool(`memory.${tool}`, args, { signal: new AbortController().signal, timeoutMs: 10_000 });

interface Line {
  dir: 'in' | 'out';
  message: { id?: number; method?: string; params?: { name?: string } };
}
const lines = () =>
  readFileSync(wire, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

beforeAll(async () => {
  const config = serverConfig('memory', {
    command: process.execPath,
    args: [TAP, wire, MEMORY_SCRIPT],
    env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl'), STDIO_TAP_PID_FILE: pidFile },
  });
  const connected = await McpHost.connect(mcpConfig(config));
  expect(connected.failures).toEqual([]);
  host = connected.host;
});

afterAll(async () => {
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Tool calls by name, each with where its request and its answer sit in the wire's order. */
function callsOnWire(tool: string): { sentAt: number; answeredAt: number }[] {
  const all = lines();
  return all.flatMap((line, at) => {
    if (line.dir !== 'in' || line.message.method !== 'tools/call' || line.message.params?.name !== tool) return [];
    const answeredAt = all.findIndex((l) => l.dir === 'out' && l.message.id === line.message.id);
    return [{ sentAt: at, answeredAt }];
  });
}

describe('server-memory with the default mcp.json entry (no maxConcurrency)', () => {
  it('keeps every relation of twenty rounds of two writes sent together, and sends each write after the last one answered', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `n${i}`);
    expect(
      await call('create_entities', {
        entities: names.map((name) => ({ name, entityType: 'node', observations: [] })),
      }),
    ).toMatchObject({ ok: true });
    for (let round = 0; round < 20; round++) {
      const relation = (k: number) => ({
        from: `n${2 * round + k}`,
        to: `n${(2 * round + k + 1) % 40}`,
        relationType: 'links',
      });
      const both = await Promise.all([0, 1].map((k) => call('create_relations', { relations: [relation(k)] })));
      expect(both.map((o) => o.ok)).toEqual([true, true]);
    }
    const graph = await call('read_graph', {});
    expect(graph.ok && (graph.value.structuredContent as { relations: unknown[] }).relations).toHaveLength(40);
    const writes = callsOnWire('create_relations');
    expect(writes).toHaveLength(40);
    for (let i = 1; i < writes.length; i++) expect(writes[i]!.sentAt).toBeGreaterThan(writes[i - 1]!.answeredAt);
  });

  it('sends read-only calls together: both reads reach the server before either is answered', async () => {
    const before = callsOnWire('search_nodes').length;
    // The server is stopped, so it cannot answer either read: both reach its pipe only if neither waits for the other.
    const server = Number(readFileSync(pidFile, 'utf8'));
    process.kill(server, 'SIGSTOP');
    let both: Promise<Awaited<ReturnType<typeof call>>[]>;
    try {
      both = Promise.all(['n1', 'n2'].map((query) => call('search_nodes', { query })));
      await waitUntil('both reads to reach the server', () => callsOnWire('search_nodes').length - before === 2, {
        timeoutMs: 5000,
      });
    } finally {
      process.kill(server, 'SIGCONT');
    }
    expect((await both).map((o) => o.ok)).toEqual([true, true]);
    const [first, second] = callsOnWire('search_nodes').slice(before);
    expect(second!.sentAt).toBeLessThan(first!.answeredAt);
  });
});
