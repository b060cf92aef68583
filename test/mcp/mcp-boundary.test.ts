import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const e of entries) {
    if (e.isDirectory()) files.push(...(await sourceFiles(join(dir, e.name))));
    else if (e.name.endsWith('.ts')) files.push(join(dir, e.name));
  }
  return files;
}

describe('MCP boundary', () => {
  it('keeps the MCP SDK inside src/mcp', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(SRC)) {
      const path = relative(SRC, file);
      if (path.startsWith('mcp/')) continue;
      if ((await readFile(file, 'utf8')).includes('@modelcontextprotocol/')) offenders.push(path);
    }
    expect(offenders).toEqual([]);
  });

  it("exports no SDK type from the host's public modules", async () => {
    for (const name of ['mcp-host.ts', 'mcp-config.ts']) {
      const text = await readFile(join(SRC, 'mcp', name), 'utf8');
      expect(text, name).not.toMatch(/from '@modelcontextprotocol\//);
    }
  });
});
