/**
 * Tool listings before steps are shared (issue 15's bench: a thousand fires start their steps in the same second):
 * steps that start together wait for one listing, and none is judged by a listing asked for before its request.
 * Counted at a real MCP server that logs each tools/list it answers.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { auditStdioConfig, mcpConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';

let host: McpHost | undefined;
let dir: string | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('refreshing a server’s tool list before steps', () => {
  it('fifty steps starting together share a listing; a refresh asked after a change never gets the older listing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-lists-'));
    const file = join(dir, 'audit.jsonl');
    const env = { AUDIT_LOG: file, AUDIT_LOG_LISTS: '1', AUDIT_LIST_DELAY_MS: '150' };
    ({ host } = await McpHost.connect(mcpConfig(auditStdioConfig(file, { overrides: { env } }))));
    const lists = () =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"type":"list"')).length;
    const signal = new AbortController().signal;
    const refresh = () => host!.refreshTool('audit.sleep', { signal, timeoutMs: 5_000 });

    const before = lists();
    await Promise.all(Array.from({ length: 50 }, refresh));
    expect(lists() - before).toBeLessThanOrEqual(2);

    // A listing is asked for, then the server changes sleep's definition while that listing is still being answered.
    const asked = lists();
    const inFlight = refresh();
    await waitUntil('the listing to be asked for', () => lists() > asked);
    const mutated = await host.callTool('audit.mutate', {}, { signal, timeoutMs: 5_000 });
    expect(mutated.ok).toBe(true);
    await refresh();
    const sleep = host.listTools().find((t) => t.name === 'audit.sleep');
    expect(JSON.stringify(sleep?.definition)).toContain('<IMPORTANT>');
    await inFlight;
  });
});
