import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');
const LLM_SDK = /^import[^'"]*['"](openai|@anthropic-ai\/[^'"]*)(\/[^'"]*)?['"]/gm;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('LLM SDK boundary', () => {
  it('only src/llm imports the OpenAI or Anthropic SDK', () => {
    const offenders = tsFiles(SRC)
      .filter((file) => !relative(SRC, file).startsWith('llm/'))
      .flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(LLM_SDK)].map((m) => `${relative(SRC, file)}: ${m[1]}`),
      );
    expect(offenders).toEqual([]);
  });
});
