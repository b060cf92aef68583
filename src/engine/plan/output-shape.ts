/**
 * A tool's `outputSchema` as a short type the planner reads (pure): `{temperature: number, tags?: [string]}`. The
 * planner needs the paths it may reference and their types, not the schema's prose, so descriptions and constraints
 * are left out; plan validation still checks each reference against the whole schema (`output-paths.ts`).
 */

type Schema = Record<string, unknown>;

/** The most characters of one tool's shape: past it, the rest is cut with a mark. */
export const SHAPE_BUDGET = 600;
// Nesting deeper than this is shown as `…`: a planner rarely references that far, and validation still knows.
const MAX_DEPTH = 6;

/** The shape of `schema`, cut to `SHAPE_BUDGET` characters. */
export function outputShape(schema: Schema): string {
  const text = shapeOf(schema, schema, 0);
  return text.length > SHAPE_BUDGET ? `${text.slice(0, SHAPE_BUDGET)}…` : text;
}

function shapeOf(root: Schema, value: unknown, depth: number): string {
  if (value === true || value === undefined) return 'any';
  if (!isSchema(value)) return 'never';
  if (depth > MAX_DEPTH) return '…';
  const s = typeof value.$ref === 'string' ? (resolvePointer(root, value.$ref) ?? {}) : value;
  const next = (v: unknown) => shapeOf(root, v, depth + 1);
  const choices = [s.anyOf, s.oneOf].find(Array.isArray) as unknown[] | undefined;
  if (choices) return [...new Set(choices.map(next))].join(' | ');
  if (Array.isArray(s.allOf)) return s.allOf.map(next).join(' & ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((e) => JSON.stringify(e)).join('|');
  const types = typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? s.type : [];
  const object = types.includes('object') || isSchema(s.properties);
  const array = types.includes('array') || s.items !== undefined;
  const parts = types.filter((t): t is string => typeof t === 'string' && t !== 'object' && t !== 'array');
  if (object) parts.unshift(objectShape(s, next));
  if (array) parts.unshift(s.items === undefined ? '[any]' : `[${next(s.items)}]`);
  return parts.length > 0 ? parts.join(' | ') : 'any';
}

function objectShape(s: Schema, next: (v: unknown) => string): string {
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  const fields = isSchema(s.properties)
    ? Object.entries(s.properties).map(([k, v]) => `${key(k)}${required.has(k) ? '' : '?'}: ${next(v)}`)
    : [];
  if (isSchema(s.additionalProperties)) fields.push(`[key]: ${next(s.additionalProperties)}`);
  return fields.length > 0 ? `{${fields.join(', ')}}` : 'object';
}

function key(k: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : JSON.stringify(k);
}

function resolvePointer(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isSchema(cur) || !Object.prototype.hasOwnProperty.call(cur, k)) return undefined;
    cur = cur[k];
  }
  return isSchema(cur) ? cur : undefined;
}

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
