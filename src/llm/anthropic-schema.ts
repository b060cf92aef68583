/**
 * Decides whether Anthropic's native structured output (`output_config.format`) can carry a schema.
 * Anthropic enforces only closed objects (`additionalProperties: false`) and no recursion, so a schema with
 * free-form maps (the plan's tool `args`) or recursive `$ref`s (its JSON values) would be rejected, or worse,
 * rewritten into one that forces `{}`. Such schemas go into the system prompt instead.
 */
import { jsonSchemaOutputFormat } from '@anthropic-ai/sdk/helpers/json-schema';
import type { JSONOutputFormat } from '@anthropic-ai/sdk/resources/messages/messages';

const OPEN_KEYWORDS = ['$ref', 'patternProperties', 'propertyNames', 'dependentSchemas', 'prefixItems', 'not', 'if'];

/** The native output format for a schema Anthropic can enforce without changing its meaning, else null. */
export function toAnthropicOutputFormat(schema: Record<string, unknown>): JSONOutputFormat | null {
  if (schema['type'] !== 'object' || !isClosed(schema)) return null;
  try {
    // The SDK's transform moves constraints Anthropic does not enforce (maxLength, minimum, …) into descriptions.
    const format = jsonSchemaOutputFormat(schema as { type: 'object' });
    return { type: 'json_schema', schema: format.schema };
  } catch {
    return null;
  }
}

/** True when every object in the schema has a fixed set of properties and nothing refers back to itself. */
export function isClosed(node: unknown): boolean {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return false;
  const schema = node as Record<string, unknown>;
  if (OPEN_KEYWORDS.some((k) => k in schema)) return false;

  const types = Array.isArray(schema['type']) ? schema['type'] : [schema['type']];
  const properties = schema['properties'];
  if (types.includes('object') || properties !== undefined) {
    const extra = schema['additionalProperties'];
    if (extra !== undefined && extra !== false) return false;
    if (properties === undefined) return extra === false;
    if (typeof properties !== 'object' || properties === null) return false;
    if (!Object.values(properties).every(isClosed)) return false;
  }
  if (schema['items'] !== undefined && !isClosed(schema['items'])) return false;
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const variants = schema[key];
    if (variants !== undefined && !(Array.isArray(variants) && variants.every(isClosed))) return false;
  }
  // A schema with no type and no way to pick one accepts anything, which Anthropic cannot enforce.
  const constrained = ['type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf'].some((k) => k in schema);
  return constrained;
}
