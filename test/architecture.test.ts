import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const ENGINE = join(ROOT, 'src/engine');

function engineFiles(dir = ENGINE): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return engineFiles(path);
    return name.endsWith('.ts') ? [relative(ENGINE, path)] : [];
  });
}

/** File names in the first column of ARCHITECTURE.md's engine file table. */
function documentedFiles(): string[] {
  const doc = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const start = doc.indexOf('| File | Role |');
  const table = doc.slice(start, doc.indexOf('\n\n', start));
  return [...table.matchAll(/^\| `([^`]+\.ts)` \|/gm)].map((m) => m[1] as string);
}

describe('ARCHITECTURE.md', () => {
  it('lists every engine file in its file table, and no file that is gone', () => {
    expect(documentedFiles().sort()).toEqual(engineFiles().sort());
  });
});
