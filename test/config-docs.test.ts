/**
 * docs/configuration.md's settings table against the configuration schema (src/config-schema.ts), both ways: every
 * variable Steward reads has a row, every row names a variable Steward reads, and a row's default is the schema's.
 * The same for .env.example, which people copy. So a setting cannot be added, renamed or removed without its
 * documentation.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, configDefaults } from '../src/config.ts';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** The rows of the table under "## Settings": variable name and its Default cell. */
function documentedRows(): Map<string, string> {
  const doc = read('docs/configuration.md');
  const section = doc.split(/^## Settings$/m)[1]?.split(/^## /m)[0] ?? '';
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const m = /^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) rows.set(m[1], m[2].trim());
  }
  return rows;
}

describe('docs/configuration.md', () => {
  const rows = documentedRows();

  it('has a row for every variable Steward reads', () => {
    expect(rows.size).toBeGreaterThan(40);
    expect(CONFIG_VARIABLES.filter((v) => !rows.has(v))).toEqual([]);
  });

  it('documents no variable Steward does not read', () => {
    expect([...rows.keys()].filter((v) => !CONFIG_VARIABLES.includes(v))).toEqual([]);
  });

  it("gives each variable that has a default the schema's default", () => {
    const wrong = Object.entries(configDefaults())
      .map(([name, value]) => ({ name, documented: rows.get(name), actual: `\`${String(value)}\`` }))
      .filter((r) => r.documented !== r.actual);
    expect(wrong).toEqual([]);
  });
});

describe('.env.example', () => {
  it('names only variables Steward reads', () => {
    const named = [...read('.env.example').matchAll(/^(?:# )?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1] ?? '');
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((v) => !CONFIG_VARIABLES.includes(v))).toEqual([]);
  });

  it("shows a default (a commented-out `# NAME=value`) only as the schema's", () => {
    const defaults = configDefaults();
    const shown = [...read('.env.example').matchAll(/^# ([A-Z][A-Z0-9_]*)=(\S+)$/gm)].map((m) => ({
      name: m[1] ?? '',
      shown: m[2],
    }));
    const wrong = shown
      .filter((d) => d.name in defaults)
      .map((d) => ({ ...d, actual: String(defaults[d.name]) }))
      .filter((d) => d.shown !== d.actual);
    expect(shown.length).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });
});
