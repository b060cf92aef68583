import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LONGEST_FIRST } from './sequencer.ts';

describe('the order npm test starts files in', () => {
  it('names only files that exist, each once, so a renamed file does not drop silently to the end of the run', () => {
    const root = join(import.meta.dirname, '..');
    expect(LONGEST_FIRST.filter((path) => !existsSync(join(root, path)))).toEqual([]);
    expect(new Set(LONGEST_FIRST).size).toBe(LONGEST_FIRST.length);
  });
});
