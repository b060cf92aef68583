/**
 * The JSON Schema of the compact plan (`compact-plan.ts`), given to providers that take one for structured output.
 * It guides the model; the engine still checks every answer itself. It cannot be a strict schema (OpenAI's
 * `strict: true`, Anthropic's native format): tool arguments are a free-form object whose shape depends on the tool.
 */
import { MAX_PLAN_STEPS } from './plan-schema.ts';

const ids = { type: 'array', items: { type: 'string' } };
const common = {
  id: { type: 'string' },
  after: ids,
  note: { type: 'string', maxLength: 500 },
  optional: { type: 'boolean' },
};

const fanOut = { type: 'array', minItems: 1, maxItems: MAX_PLAN_STEPS, items: { type: 'object' } };

function step(properties: Record<string, unknown>, kind: string): Record<string, unknown> {
  return { type: 'object', properties: { ...properties, ...common }, required: [kind], additionalProperties: false };
}

// Steps first: models write properties in the schema's order, and the steps are what can start early.
const schema: Record<string, unknown> = {
  type: 'object',
  properties: {
    steps: {
      type: 'array',
      maxItems: MAX_PLAN_STEPS,
      items: {
        anyOf: [
          // "each" (a fan-out: one call per arguments object) goes instead of "args", and without an "id".
          step({ tool: { type: 'string' }, args: { type: 'object' }, each: fanOut }, 'tool'),
          step({ llm: { type: ['string', 'object'] } }, 'llm'),
          step({ if: { type: 'string' }, then: ids, else: ids }, 'if'),
        ],
      },
    },
    summary: { type: 'string', maxLength: 1000 },
    risks: { type: 'array', items: { type: 'string', maxLength: 500 } },
    why: { type: 'string', maxLength: 4000 },
    answer: { type: 'string' },
  },
  additionalProperties: false,
};

/** JSON Schema of the compact plan (one shared object: treat it as read-only). */
export function compactPlanJsonSchema(): Record<string, unknown> {
  return schema;
}
