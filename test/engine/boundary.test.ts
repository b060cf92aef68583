import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkEngine, type EngineFile } from './boundary-rules.ts';

const ENGINE = join(import.meta.dirname, '../../src/engine');

function readEngine(dir = ENGINE): EngineFile[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return readEngine(path);
    return name.endsWith('.ts') ? [{ path: relative(ENGINE, path), text: readFileSync(path, 'utf8') }] : [];
  });
}

describe('engine boundary', () => {
  it('src/engine keeps its layers: no outside modules, imports only downward, no cycles, pure files stay pure', () => {
    const files = readEngine();
    expect(files.some((f) => f.path.startsWith('plan/'))).toBe(true);
    expect(files.some((f) => f.path.startsWith('run/'))).toBe(true);
    expect(files.some((f) => f.path.startsWith('assistant/'))).toBe(true);
    expect(files.some((f) => f.path.startsWith('flows/'))).toBe(true);
    expect(checkEngine(files)).toEqual([]);
  });

  it.each([
    ['a pure file that imports a flow', 'run/x.ts', "import { Steward } from '../flows/steward.ts';", /imports upward/],
    [
      'plan logic that imports the run layer',
      'plan/x.ts',
      "import type { DispatchState } from '../run/dispatch-state.ts';",
      /imports upward/,
    ],
    ['a pure file that sets a timer', 'plan/x.ts', 'export const f = () => setTimeout(() => 0, 5);', /timer/],
    [
      'a delegation rule that imports a flow',
      'assistant/x.ts',
      "import type { DelegationFlow } from '../flows/delegation-flow.ts';",
      /imports upward/,
    ],
    ['an assistant rule that awaits', 'assistant/x.ts', 'export async function f() { await 1; }', /async/],
    ['a pure file that reads the clock', 'run/x.ts', 'export const now = () => Date.now();', /clock/],
    ['a pure file that makes a date', 'run/x.ts', 'export const now = () => new Date();', /clock/],
    ['a pure file that awaits', 'plan/x.ts', 'export async function f() { await 1; }', /async/],
    [
      'a contract file with a value import from a layer',
      'ports.ts',
      "import { planSchema } from './plan/plan-schema.ts';",
      /imports upward/,
    ],
    ['the engine importing a database driver', 'flows/x.ts', "import pg from 'pg';", /outside module/],
    ['the engine importing node built-ins', 'run/x.ts', "import { readFile } from 'node:fs';", /outside module/],
  ])('refuses %s', (_name, path, text, problem) => {
    const problems = checkEngine([{ path, text }]);
    expect(problems.join('\n')).toMatch(problem);
  });

  it('refuses an import cycle between flows', () => {
    const problems = checkEngine([
      { path: 'flows/a.ts', text: "import { b } from './b.ts';\nexport const a = 1;" },
      { path: 'flows/b.ts', text: "import { a } from './a.ts';\nexport const b = 2;" },
    ]);
    expect(problems.join('\n')).toMatch(/cycle: flows\/a\.ts → flows\/b\.ts → flows\/a\.ts/);
  });

  it('allows a flow to use every layer below it and the contract to name plan types', () => {
    const problems = checkEngine([
      {
        path: 'flows/f.ts',
        text: "import { x } from '../run/r.ts';\nimport { y } from '../plan/p.ts';\nsetTimeout(() => 0, 1);",
      },
      {
        path: 'run/r.ts',
        text: "import { y } from '../plan/p.ts';\nimport type { Json } from '../types.ts';\nexport const x = y;",
      },
      { path: 'plan/p.ts', text: "import { z } from 'zod';\nexport const y = z;" },
      { path: 'ports.ts', text: "import type { Plan } from './plan/p.ts';" },
      { path: 'types.ts', text: 'export type Json = null;' },
    ]);
    expect(problems).toEqual([]);
  });
});
