/**
 * Checks a step's arguments against its tool's MCP `inputSchema`.
 * Locations holding a `$ref` are not checked: their value is only known at run time.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { collectRefs } from './refs.ts';

// ajv-formats ships CommonJS; under nodenext its default export sits one level down.
type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  (addFormatsModule as unknown as FormatsPlugin);

const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false });
addFormats(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

/** Returns readable problems with `args`, or an empty list when they satisfy the schema. */
export function checkToolArgs(schema: Record<string, unknown>, args: Record<string, unknown>): string[] {
  let validate = compiled.get(schema);
  if (!validate) {
    // Servers declare various drafts; the keywords tools use are the same across them.
    const { $schema: _ignored, ...rest } = schema;
    try {
      validate = ajv.compile(rest);
    } catch (err) {
      return [`the tool's input schema cannot be read (${(err as Error).message})`];
    }
    compiled.set(schema, validate);
  }
  if (validate(args)) return [];
  const refPaths = collectRefs(args).map((r) => r.at);
  const underRef = (path: string) => refPaths.some((p) => path === p || path.startsWith(`${p}/`));
  return (validate.errors ?? [])
    .filter((e) => !underRef(e.instancePath))
    .map(
      (e) =>
        `${e.instancePath === '' ? 'arguments' : `argument ${e.instancePath.slice(1).replace(/\//g, '.')}`} ${e.message ?? 'is invalid'}${allowed(e.params)}`,
    );
}

/** The values an `enum` allows, named (a few), so a planner can pick one. */
function allowed(params: Record<string, unknown>): string {
  const values = params.allowedValues;
  if (!Array.isArray(values) || values.length === 0 || values.length > 20) return '';
  return ` (${values.map((v) => JSON.stringify(v)).join(', ')})`;
}
