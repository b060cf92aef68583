/**
 * The engine's layering rules, as a checker the boundary test runs over src/engine (and over hostile samples, so
 * the checker itself is tested). Layers, lowest first:
 * - contract: the files at the top of src/engine (types, ports, channel, messages, errors, result, text);
 * - plan: pure rules about plans;  run: the pure dispatcher and run rules;  workflow: pure rules of recurring
 *   workflows (fires, parameters, commands);  assistant: Assistants and delegation (terms, ports, grant rules, brakes,
 *   the delegate step, command words);  flows: the async flows and the driver.
 */
import { dirname, join, normalize } from 'node:path';

/** One engine file, by its path relative to src/engine. */
export interface EngineFile {
  path: string;
  text: string;
}

const LAYERS = ['contract', 'plan', 'run', 'workflow', 'assistant', 'flows'] as const;
type Layer = (typeof LAYERS)[number];
const ALLOWED_PACKAGES = new Set(['zod', 'ajv', 'ajv-formats']);
const PURE: readonly Layer[] = ['contract', 'plan', 'run', 'workflow', 'assistant'];
const IMPURE_PATTERNS: [RegExp, string][] = [
  [/\b(setTimeout|setInterval|setImmediate|queueMicrotask)\s*\(/, 'starts a timer'],
  [/\bDate\.now\s*\(|\bnew Date\s*\(|\bperformance\.now\s*\(/, 'reads the clock'],
  [/\bMath\.random\s*\(|\bcrypto\./, 'draws random numbers'],
  [/\bprocess\./, 'reads the process'],
  [/\basync\s|\bawait\s/, 'is async (pure files do no I/O)'],
];

function layerOf(path: string): Layer {
  const top = path.split('/')[0];
  return top === 'plan' || top === 'run' || top === 'workflow' || top === 'assistant' || top === 'flows'
    ? top
    : 'contract';
}

interface Import {
  spec: string;
  typeOnly: boolean;
}

function importsOf(text: string): Import[] {
  const out: Import[] = [];
  const re =
    /^\s*(import|export)\s+(type\s+)?[^'";]*?from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]/gm;
  for (const m of text.matchAll(re)) {
    const spec = m[3] ?? m[4] ?? m[5];
    if (spec) out.push({ spec, typeOnly: m[2] !== undefined });
  }
  return out;
}

/** Every rule the engine breaks, one sentence each; empty when it keeps them all. */
export function checkEngine(files: readonly EngineFile[]): string[] {
  const problems: string[] = [];
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const layer = layerOf(file.path);
    const edges: string[] = [];
    for (const imp of importsOf(file.text)) {
      if (!imp.spec.startsWith('.')) {
        if (!ALLOWED_PACKAGES.has(imp.spec)) problems.push(`${file.path}: imports the outside module ${imp.spec}`);
        continue;
      }
      const target = normalize(join(dirname(file.path), imp.spec));
      if (target.startsWith('..')) {
        problems.push(`${file.path}: imports ${imp.spec}, outside src/engine`);
        continue;
      }
      edges.push(target);
      const to = layerOf(target);
      // The contract may name plan types (a stored run holds a plan); nothing else may look up.
      const typeFromPlan = layer === 'contract' && to === 'plan' && imp.typeOnly;
      if (LAYERS.indexOf(to) > LAYERS.indexOf(layer) && !typeFromPlan) {
        problems.push(`${file.path}: imports upward, from the ${layer} layer into ${to} (${imp.spec})`);
      }
    }
    graph.set(file.path, edges);
    if (PURE.includes(layer)) {
      const code = file.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      for (const [re, what] of IMPURE_PATTERNS) if (re.test(code)) problems.push(`${file.path}: ${what}`);
    }
  }
  return [...problems, ...cycles(graph)];
}

function cycles(graph: ReadonlyMap<string, string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const walk = (node: string, path: string[]): void => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'open') {
      found.push(`import cycle: ${[...path.slice(path.indexOf(node)), node].join(' → ')}`);
      return;
    }
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) if (graph.has(next)) walk(next, [...path, node]);
    state.set(node, 'done');
  };
  for (const node of graph.keys()) walk(node, []);
  return found;
}
