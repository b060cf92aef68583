/**
 * Resources and server logs at the host (issue 29), against a fixture for what server-everything does not do: a read
 * in flight is cancelled by its signal as a call is (the server gets `notifications/cancelled`), and a server that
 * ignores `logging/setLevel` still has its messages below the entry's level dropped, each one logged on one capped
 * line; and a resource server-everything adds mid-session is listed when it says its list changed.
 */
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
const LOG_LINE_CHARS = 500;
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { everythingStdioConfig, mcpConfig, serverConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures/resource-log-server.mjs');
let host: McpHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

async function connect(entry: Record<string, unknown> = {}): Promise<string[]> {
  const logs: string[] = [];
  const config = serverConfig('res', { command: process.execPath, args: [FIXTURE], ...entry });
  const started = await McpHost.connect(mcpConfig(config), { logger: (level, line) => logs.push(`${level} ${line}`) });
  expect(started.failures).toEqual([]);
  host = started.host;
  return logs;
}

describe('McpHost, resources and server logs (fixture over stdio)', () => {
  it('a resource read in flight is cancelled by its signal, and the server is told', async () => {
    const logs = await connect();
    expect(host!.listResources()).toEqual([
      {
        server: 'res',
        resources: [{ uri: 'slow://forever', name: 'A read that never ends' }],
        templates: [],
        more: false,
      },
    ]);
    const stop = new AbortController();
    const reading = host!.readResource('res', 'slow://forever', { signal: stop.signal, timeoutMs: 30_000 });
    stop.abort();
    const outcome = await reading;
    expect(outcome.ok ? 'ok' : outcome.error.code).toBe('cancelled');
    await waitUntil('the server logs the cancel', () =>
      logs.find((l) => /^error MCP server "res" logged error: cancelled request \d+$/.test(l)),
    );
  });

  it('drops messages below the level even when the server ignores setLevel, and logs each on one capped line', async () => {
    const logs = await connect();
    const line = await waitUntil('the warning', () => logs.find((l) => l.startsWith('warn MCP server "res" logged')));
    expect(line).not.toContain('\n');
    expect(line).toContain('line one 2026-01-01T00:00:00Z ERROR forged line two');
    expect(line.length).toBeLessThan(LOG_LINE_CHARS + 60);
    expect(logs.join('\n')).not.toContain('debug after setLevel');
  });

  it('passes the debug message on at "logLevel": "debug", and refuses a read on a server without resources', async () => {
    const logs = await connect({ logLevel: 'debug' });
    await waitUntil('the debug message', () => logs.find((l) => l.includes('debug after setLevel debug')));
    const outcome = await host!.readResource('nope', 'x://y', {
      signal: new AbortController().signal,
      timeoutMs: 1000,
    });
    expect(outcome.ok ? 'ok' : outcome.error.message).toBe('MCP server "nope" offers no resources Steward can read.');
  });

  it('lists a resource server-everything adds mid-session (resources/list_changed), and reads its blob', async () => {
    const { host: h, failures } = await McpHost.connect(mcpConfig(everythingStdioConfig()));
    expect(failures).toEqual([]);
    host = h;
    const uri = 'demo://resource/session/hello.txt.gz';
    const listed = () => h.listResources()[0]!.resources.map((r) => r.uri);
    expect(listed()).not.toContain(uri);
    const signal = new AbortController().signal;
    const args = { name: 'hello.txt.gz', data: `data:text/plain;base64,${Buffer.from('hello').toString('base64')}` };
    const made = await h.callTool('everything.gzip-file-as-resource', args, { signal, timeoutMs: 10_000 });
    expect(made.ok).toBe(true);
    await waitUntil('the new resource to be listed', () => listed().includes(uri));
    const read = await h.readResource('everything', uri, { signal, timeoutMs: 10_000 });
    const blob = read.ok ? (read.value.content[0] as { resource: { blob: string } }).resource.blob : '';
    expect(gunzipSync(Buffer.from(blob, 'base64')).toString('utf8')).toBe('hello');
  });
});
