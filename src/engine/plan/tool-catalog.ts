/**
 * The tool catalog as the planner reads it (pure): one entry per allowed tool, in the order given, with its risk,
 * its description (cut to a budget), its input schema without the keys that tell a planner nothing and, when it
 * declares one, the shape of its `structuredContent` (`output-shape.ts`). The text
 * depends only on the tools' definitions, so an unchanged catalog renders byte for byte the same (providers cache
 * identical prompt prefixes).
 */
import type { ToolInfo } from '../types.ts';
import { outputShape } from './output-shape.ts';
import { toolRisk } from './risk.ts';

/** The most characters of a tool's description the planner is shown. */
export const DESCRIPTION_BUDGET = 400;

/** The catalog's lines, or undefined when no tool is allowed. */
export function renderToolCatalog(tools: readonly ToolInfo[]): string | undefined {
  const entries = tools.filter((t) => t.policy.allowed).map(renderTool);
  return entries.length > 0 ? entries.join('\n') : undefined;
}

function renderTool(t: ToolInfo): string {
  const desc =
    t.description.length > DESCRIPTION_BUDGET ? `${t.description.slice(0, DESCRIPTION_BUDGET)}…` : t.description;
  const schema = compactSchema(t.inputSchema, true);
  const args = isEmptyObjectSchema(schema) ? 'no arguments' : `input schema: ${JSON.stringify(schema)}`;
  // Declared by the tool, and checked against the references a plan makes into it (validate-plan.ts).
  const output = t.outputSchema ? `\n  structuredContent: ${outputShape(t.outputSchema)}` : '';
  return `- ${t.name} (risk ${toolRisk(t)}): ${desc}\n  ${args}${output}`;
}

// Keys whose value maps names to schemas, and keys whose value is a schema or a list of schemas.
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_VALUES = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'anyOf',
  'oneOf',
  'allOf',
  'prefixItems',
]);

/**
 * A JSON Schema without what changes nothing for a planner: `$schema`, `$id`, `$comment`, `additionalProperties:
 * false` (the arguments it forbids are the ones not listed, and validation still holds the whole schema), a title
 * that repeats its property's name, and `type: "object"` at the top (tool inputs are always objects). Names inside
 * `properties` are kept whatever they are.
 */
export function compactSchema(schema: unknown, root = false, name?: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => compactSchema(s));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === '$schema' || key === '$id' || key === '$comment') continue;
    if (key === 'additionalProperties' && value === false) continue;
    if (root && key === 'type' && value === 'object') continue;
    if (key === 'title' && typeof value === 'string' && name !== undefined && sameWords(value, name)) continue;
    if (SCHEMA_MAPS.has(key) && value && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, compactSchema(v, false, k)]));
    } else {
      out[key] = SCHEMA_VALUES.has(key) ? compactSchema(value) : value;
    }
  }
  return out;
}

function sameWords(a: string, b: string): boolean {
  const words = (s: string) =>
    s
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .replace(/[\s_-]+/g, ' ')
      .trim();
  return words(a) === words(b);
}

function isEmptyObjectSchema(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return false;
  const { properties, required, ...rest } = schema as Record<string, unknown>;
  const empty = (v: unknown) => v === undefined || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);
  return empty(properties) && empty(required) && Object.keys(rest).length === 0;
}
