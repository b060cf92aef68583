import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const ENGINE = join(ROOT, 'src/engine');
const TEST = join(ROOT, 'test');

/** The .ts files under `root`, relative to it. */
function tsFiles(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((name) => {
    // A package folder's own installs (bench/peer-langgraph's, once the bench ran) are not this project's code.
    if (name === 'node_modules') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(root, path);
    return name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

const engineFiles = () => tsFiles(ENGINE);

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

const SRC = join(ROOT, 'src');
const sourceFiles = () => tsFiles(SRC);

/** The modules a file imports (static imports and re-exports), as written. */
function importsOf(text: string): string[] {
  return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/gms)].map((m) => m[1] as string);
}

/** Problems: a chat platform's files importing another platform's (shared wording lives in src/bot). */
function platformImports(files: Array<{ path: string; text: string }>): string[] {
  const platforms = ['slack', 'discord'];
  return files.flatMap(({ path, text }) => {
    const own = platforms.find((p) => path.startsWith(`bot/${p}/`));
    if (!own) return [];
    return importsOf(text)
      .filter((m) => platforms.some((p) => p !== own && new RegExp(`(^|/)${p}/`).test(m)))
      .map((m) => `${path} imports ${m}`);
  });
}

const RUN_STATUS = /'(planning|awaiting_review|running|paused|stopping|completed|failed|cancelled|stopped)'/g;

/** Problems: a list of three or more run statuses written out anywhere but src/engine/types.ts. */
function statusSets(files: Array<{ path: string; text: string }>): string[] {
  return files.flatMap(({ path, text }) => {
    if (path === 'engine/types.ts') return [];
    return [...text.matchAll(/\[([^[\]]*)\]/g)]
      .filter((m) => {
        const items = (m[1] as string)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        return items.length >= 3 && items.every((s) => new RegExp(`^${RUN_STATUS.source}$`).test(s));
      })
      .map((m) => `${path}: ${m[0].replace(/\s+/g, ' ')}`);
  });
}

const read = (path: string) => ({ path, text: readFileSync(join(SRC, path), 'utf8') });

describe('one rule once', () => {
  it('no chat platform imports another', () => {
    expect(platformImports(sourceFiles().map(read))).toEqual([]);
    // The check itself sees such an import.
    const discord = { path: 'bot/discord/x.ts', text: "import { formatDuration } from '../slack/slack-text.ts';" };
    expect(platformImports([discord])).toEqual(['bot/discord/x.ts imports ../slack/slack-text.ts']);
  });

  it('run status sets are declared in src/engine/types.ts only', () => {
    expect(statusSets(sourceFiles().map(read))).toEqual([]);
    const steering = {
      path: 'bot/x.ts',
      text: "const EDITABLE = new Set([\n  'awaiting_review',\n  'running',\n  'paused',\n]);",
    };
    expect(statusSets([steering])).toEqual(["bot/x.ts: [ 'awaiting_review', 'running', 'paused', ]"]);
  });

  it('prom-client is imported by src/metrics.ts only: the adapters report through callbacks the root wires', () => {
    expect(promClientImports(sourceFiles().map(read))).toEqual([]);
    const slack = { path: 'bot/slack/x.ts', text: "import { Counter } from 'prom-client';" };
    expect(promClientImports([slack])).toEqual(['bot/slack/x.ts']);
  });

  it('@opentelemetry is imported by src/tracing.ts only, and that file only on demand: off, none of it loads', () => {
    expect(otelImports(sourceFiles().map(read))).toEqual([]);
    const engine = { path: 'engine/x.ts', text: "import { trace } from '@opentelemetry/api';" };
    const lazy = { path: 'app.ts', text: "const m = await import('@opentelemetry/sdk-trace-node');" };
    const eager = { path: 'app.ts', text: "import { OtelTracing } from './tracing.ts';" };
    const typeOnly = { path: 'app.ts', text: "import type { OtelTracing } from './tracing.ts';" };
    expect(otelImports([engine, lazy, eager, typeOnly])).toEqual(['engine/x.ts', 'app.ts', 'app.ts']);
  });
});

/** Problems: a file other than tracing.ts importing OpenTelemetry (even lazily), or a file loading tracing.ts eagerly. */
function otelImports(files: Array<{ path: string; text: string }>): string[] {
  const lazy = (text: string) => [...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => m[1] as string);
  const eager = (text: string) =>
    [...text.matchAll(/^import\s+(?!type\b)[^;]*?\bfrom\s+'([^']+)'/gms)].map((m) => m[1] as string);
  return files.flatMap(({ path, text }) => [
    ...(path !== 'tracing.ts' && [...importsOf(text), ...lazy(text)].some((m) => m.startsWith('@opentelemetry/'))
      ? [path]
      : []),
    ...(eager(text).some((m) => /(^|\/)tracing\.ts$/.test(m)) ? [path] : []),
  ]);
}

/** Problems: a source file other than metrics.ts importing prom-client. */
function promClientImports(files: Array<{ path: string; text: string }>): string[] {
  return files
    .filter(({ path, text }) => path !== 'metrics.ts' && importsOf(text).some((m) => /^prom-client(\/|$)/.test(m)))
    .map(({ path }) => path);
}

// A skip, a todo or an `only` (which skips the rest of its file) written into a test: `describe.skip`,
// `it.skipIf(...)`, `test.concurrent.runIf(...)`, `describe.only`... Only test/helpers/needs.ts may decide to skip,
// so that .ci/run's STEWARD_REQUIRE_ALL turns every such skip into a failure.
const OWN_SKIP = /\b(?:describe|suite|it|test|bench)(?:\.\w+)*\.(?:skip|skipIf|runIf|todo|only)\b/g;
// A test's context skipping at run time: `({ skip }) => ...`, `ctx.skip()`, `context.skip()`.
const CONTEXT_SKIP = /\(\s*\{[^}]*\bskip\b[^}]*\}\s*\)\s*=>|\b(?:ctx|context)\.skip\s*\(/g;

function ownSkips(text: string): string[] {
  return [...text.matchAll(OWN_SKIP), ...text.matchAll(CONTEXT_SKIP)].map((m) => m[0]);
}

describe('skipping a test', () => {
  it('is decided in test/helpers/needs.ts only, never by a test file on its own', () => {
    // This file names the forms it refuses, below.
    const allowed = new Set(['helpers/needs.ts', 'architecture.test.ts']);
    const found = tsFiles(TEST)
      .filter((path) => !allowed.has(path))
      .flatMap((path) => ownSkips(readFileSync(join(TEST, path), 'utf8')).map((skip) => `${path}: ${skip}`));
    expect(found).toEqual([]);
  });

  it.each([
    ["describe.skipIf(privatePostgresMissing !== undefined)('x', () => {});", 'describe.skipIf'],
    ["it.skip('x', async () => {});", 'it.skip'],
    ["it.runIf(kind === 'postgres')('x', async () => {});", 'it.runIf'],
    ["test.todo('x');", 'test.todo'],
    ["describe.concurrent.skip('x', () => {});", 'describe.concurrent.skip'],
    ["describe.only('x', () => {});", 'describe.only'],
    ["it('x', ({ skip }) => skip());", '({ skip }) =>'],
    ["it('x', (ctx) => { ctx.skip(); });", 'ctx.skip('],
  ])('finds %s', (text, skip) => {
    expect(ownSkips(text)).toEqual([skip]);
  });

  it.each([
    "describeNeeding(privatePostgresMissing, 'x', () => {});",
    "itNeeding(noOutside, 'x', async () => {});",
    "describe.each(['postgres', 'pglite'])('x', () => {});",
    'calls.skip();',
    "it('skips a missed fire', () => expect(decide(at, { catchUp: 'skip' }).kind).toBe('skipped'));",
  ])('lets %s be', (text) => {
    expect(ownSkips(text)).toEqual([]);
  });
});

// An object literal spread into another (`...{ a, b },`): written only to keep Prettier from breaking a line, it
// hides the object's real shape from a reader and a duplicate key from the compiler.
const LITERAL_SPREAD = /\.\.\.\{ [^\n]*\}/g;

describe('code the formatter shapes', () => {
  it('spreads no object literal into another to dodge line breaks', () => {
    const found = [
      ...tsFiles(join(ROOT, 'src')).map((p) => join('src', p)),
      ...tsFiles(join(ROOT, 'bench')).map((p) => join('bench', p)),
      ...tsFiles(TEST).map((p) => join('test', p)),
    ]
      .filter((path) => path !== join('test', 'architecture.test.ts'))
      .flatMap((path) =>
        [...readFileSync(join(ROOT, path), 'utf8').matchAll(LITERAL_SPREAD)].map((m) => `${path}: ${m[0]}`),
      );
    expect(found).toEqual([]);
    expect('    ...{ runId: d.runId, at },'.match(LITERAL_SPREAD)).toHaveLength(1);
    expect('    ...(o.note && { note: o.note }),'.match(LITERAL_SPREAD)).toBeNull();
  });
});
