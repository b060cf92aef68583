import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallOutcome } from '../../src/engine/ports.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { auditStdioConfig, mcpConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';

// Two copies of the audit fixture, each logging what it really received (and how many calls it had in flight as
// each one arrived): `wide` without a limit, `narrow` with maxConcurrency 2.
interface Received {
  type: string;
  args?: { ms?: number };
  inFlight?: number;
}

const dir = mkdtempSync(join(tmpdir(), 'steward-slots-'));
const logOf = (server: string) => join(dir, `${server}.jsonl`);
let host: McpHost;

function received(server: string): Received[] {
  const file = logOf(server);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Received);
}
const calls = (server: string) => received(server).filter((e) => e.type === 'call');
const maxInFlight = (server: string) => Math.max(0, ...calls(server).map((e) => e.inFlight ?? 0));
// Each test tells its calls apart by their `ms`, unique across the file (the log is kept for the whole file).
const sleep = (server: string, ms: number, signal = new AbortController().signal, timeoutMs = 10_000) =>
  host.callTool(`${server}.sleep`, { ms }, { signal, timeoutMs });
const text = (o: ToolCallOutcome) => (o.ok ? JSON.stringify(o.value.content) : o.error.code);

beforeAll(async () => {
  const connected = await McpHost.connect(
    mcpConfig(
      auditStdioConfig(logOf('wide'), { name: 'wide' }),
      auditStdioConfig(logOf('narrow'), { name: 'narrow', overrides: { maxConcurrency: 2 } }),
    ),
  );
  expect(connected.failures).toEqual([]);
  host = connected.host;
});

afterAll(async () => {
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('McpHost with maxConcurrency, as the server sees it', () => {
  it('sends all 8 calls of a fan-out at once to a server without a limit', async () => {
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => sleep('wide', 300 + i)));
    expect(outcomes.map(text)).toEqual(
      Array.from({ length: 8 }, (_, i) => `[{"type":"text","text":"slept ${300 + i}"}]`),
    );
    expect(maxInFlight('wide')).toBe(8);
  });

  it('never has more than 2 calls at the server from two callers at once; all succeed, sent in the order asked', async () => {
    const run = (first: number) => Promise.all([0, 1, 2, 3].map((i) => sleep('narrow', first + i)));
    const [a, b] = await Promise.all([run(100), run(110)]);
    expect([...a, ...b].every((o) => o.ok && !o.value.isError)).toBe(true);
    expect(calls('narrow').map((e) => e.args?.ms)).toEqual([100, 101, 102, 103, 110, 111, 112, 113]);
    expect(calls('narrow').map((e) => e.inFlight)).toContain(2);
    expect(maxInFlight('narrow')).toBe(2);
  });

  it('a call stopped while it waits for a slot ends at once as cancelled and never reaches the server', async () => {
    const holding = [sleep('narrow', 400), sleep('narrow', 401)];
    await waitUntil(
      'both slots to be taken at the server',
      () => calls('narrow').filter((e) => e.args!.ms! >= 400 && e.args!.ms! < 404).length === 2,
    );
    const stop = new AbortController();
    const stopped = sleep('narrow', 402, stop.signal);
    const behind = sleep('narrow', 403);
    stop.abort();
    expect(await stopped).toEqual({
      ok: false,
      error: { code: 'cancelled', message: 'narrow.sleep was cancelled.', retryable: false },
    });
    expect(text(await behind)).toContain('slept 403');
    await Promise.all(holding);
    expect(
      calls('narrow')
        .map((e) => e.args?.ms)
        .filter((ms) => ms! >= 400 && ms! < 404),
    ).toEqual([400, 401, 403]);
  });

  it('a call that waits its whole timeout for a slot fails as a retryable timeout, not sent, and says why', async () => {
    const holding = [sleep('narrow', 500), sleep('narrow', 501)];
    const late = await sleep('narrow', 502, undefined, 200);
    expect(late).toEqual({
      ok: false,
      error: {
        code: 'timeout',
        retryable: true,
        message:
          'narrow.sleep was not sent: MCP server "narrow" takes 2 calls at a time (maxConcurrency) and none came free ' +
          "within the call's 200 ms timeout.",
      },
    });
    await Promise.all(holding);
    expect(calls('narrow').some((e) => e.args?.ms === 502)).toBe(false);
  });

  it("counts the wait for a slot in the call's timeout: what is left after the wait is what the server gets", async () => {
    const holding = sleep('narrow', 700);
    const other = sleep('narrow', 701);
    // Queued ~700 ms behind the two, with 1000 ms in all: ~300 ms left for a 600 ms sleep, so it times out.
    const late = await sleep('narrow', 600, undefined, 1000);
    await Promise.all([holding, other]);
    expect(late.ok ? 'ok' : late.error.code).toBe('timeout');
    expect(calls('narrow').some((e) => e.args?.ms === 600)).toBe(true);
  });
});
