/**
 * The documentation holds together (issue 33): the README stays short enough to read, and every relative link in the
 * Markdown (README, docs/, bench/README.md, SECURITY.md, ARCHITECTURE.md) reaches a file that exists and, with a
 * `#fragment`, a heading or `<a id>` in it (anchors as GitHub makes them from headings).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const PAGES = [
  'README.md',
  'SECURITY.md',
  'ARCHITECTURE.md',
  'bench/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

function anchorsIn(page: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of readFileSync(join(ROOT, page), 'utf8').split('\n')) {
    if (line.trimStart().startsWith('```')) fence = !fence;
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading?.[1] !== undefined && !fence) {
      const a = anchorOf(heading[1]);
      const n = seen.get(a) ?? 0;
      out.add(n === 0 ? a : `${a}-${n}`);
      seen.set(a, n + 1);
    }
    for (const m of line.matchAll(/<a id="([^"]+)"/g)) if (m[1]) out.add(m[1]);
  }
  return out;
}

describe('the documentation', () => {
  it('keeps the README under 15 KB', () => {
    expect(readFileSync(join(ROOT, 'README.md')).length).toBeLessThan(15_000);
  });

  it('has no relative link to a file or heading that is not there', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const [, , target = ''] of text.matchAll(/\[([^\]]*)\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', fragment] = target.split('#');
        const file = path === '' ? page : normalize(join(dirname(page), path));
        if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${target} (no file ${file})`);
        else if (fragment && file.endsWith('.md') && !anchorsIn(file).has(fragment))
          broken.push(`${page}: ${target} (no heading #${fragment} in ${file})`);
      }
    }
    expect(PAGES.length).toBeGreaterThan(12);
    expect(broken).toEqual([]);
  });
});
