import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { filesystemStdioConfig, mcpConfig } from '../helpers/mcp-servers.ts';

let dir: string;
let host: McpHost;
const options = () => ({ signal: new AbortController().signal, timeoutMs: 10_000 });

beforeAll(async () => {
  // realpath: the server compares resolved paths, and the temp dir may sit behind a symlink.
  dir = await realpath(await mkdtemp(join(tmpdir(), 'steward-mcp-fs-')));
  const connected = await McpHost.connect(mcpConfig(filesystemStdioConfig(dir)));
  expect(connected.failures).toEqual([]);
  host = connected.host;
});

afterAll(async () => {
  await host?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('McpHost with server-filesystem on a temp dir', () => {
  it('offers file tools with their annotations', () => {
    const write = host.listTools().find((t) => t.name === 'fs.write_file');
    expect(write?.annotations).toMatchObject({ readOnlyHint: false });
    expect(host.listTools().map((t) => t.name)).toContain('fs.read_text_file');
  });

  it('writes a file, then reads it back', async () => {
    const path = join(dir, 'note.txt');
    const written = await host.callTool('fs.write_file', { path, content: 'first line\nsecond line' }, options());
    expect(written).toMatchObject({ ok: true });
    expect(written.ok && written.value.isError).toBeFalsy();
    expect(await readFile(path, 'utf8')).toBe('first line\nsecond line');
    const read = await host.callTool('fs.read_text_file', { path }, options());
    expect(read).toMatchObject({ ok: true, value: { content: [{ type: 'text', text: 'first line\nsecond line' }] } });
  });

  it("returns the server's refusal outside its root as an isError output", async () => {
    const outcome = await host.callTool('fs.read_text_file', { path: '/etc/hostname' }, options());
    expect(outcome).toMatchObject({ ok: true, value: { isError: true } });
  });
});
