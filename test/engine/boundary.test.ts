import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The engine stays pure: it may use these libraries and its own modules, never a platform, database, LLM or MCP SDK.
const ALLOWED = new Set(['zod', 'ajv', 'ajv-formats']);

describe('engine boundary', () => {
  it('src/engine imports no platform, database, LLM, MCP or I/O module', () => {
    const dir = join(import.meta.dirname, '../../src/engine');
    const offenders: string[] = [];
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), 'utf8');
      for (const m of text.matchAll(
        /(?:^(?:import|export)[^'"]*?from\s*|^import\s*|\bimport\(\s*)['"]([^'"]+)['"]/gm,
      )) {
        const spec = m[1] as string;
        if (!spec.startsWith('./') && !ALLOWED.has(spec)) offenders.push(`${file}: ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
