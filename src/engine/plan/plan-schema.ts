/**
 * The plan the planner writes, as a zod schema. The planner is called with no tools: this JSON is all it can produce.
 *
 * References: any argument value may be `{"$ref": "steps.<id>.output<path>"}`, where `<path>` is a chain of
 * `.key`, `[index]` or `["key"]` (e.g. `steps.s1.output.content[0].text`). The whole value is replaced by what
 * the path points to in that step's output. The referenced step must be upstream (a transitive dependency).
 *
 * Depth: a plan nests at most `MAX_PLAN_DEPTH` levels (`json-depth.ts`). That is checked before this schema runs,
 * on the text or the value, because the schema recurses into argument values.
 */
import { z } from 'zod';
import type { Json } from '../types.ts';

const stepId = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,39}$/, 'step ids start with a letter and use letters, digits, _ or -');

const jsonValue: z.ZodType<Json> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);

const common = {
  id: stepId,
  dependsOn: z.array(stepId).default([]),
  description: z.string().max(500).default(''),
  optional: z.boolean().default(false),
};

/** An MCP tool call; `tool` is `<server>.<tool>`. */
const toolStep = z.object({
  ...common,
  kind: z.literal('tool'),
  tool: z.string().min(1),
  args: z.record(z.string(), jsonValue).default({}),
});

/** A text-in, text-out model call with no tools; the prompt may hold references. */
const llmStep = z.object({
  ...common,
  kind: z.literal('llm'),
  args: z.object({ prompt: jsonValue }),
});

/** Chooses which dependent steps run: `ifTrue` when the expression holds, `ifFalse` otherwise. */
const conditionStep = z.object({
  ...common,
  kind: z.literal('condition'),
  expression: z.string().min(1).max(2000),
  ifTrue: z.array(stepId).default([]),
  ifFalse: z.array(stepId).default([]),
});

/** One step of a plan. `kind` defaults to `tool`, since most steps are tool calls. */
export const stepSchema = z.preprocess(
  (v) => (v && typeof v === 'object' && !('kind' in v) ? { ...v, kind: 'tool' } : v),
  z.discriminatedUnion('kind', [toolStep, llmStep, conditionStep]),
);

/** The most steps a plan may have. */
export const MAX_PLAN_STEPS = 100;

/** A complete plan in its full form: what is stored, shown and validated (the planner may write it compact). */
export const planSchema = z.object({
  summary: z.string().min(1).max(1000),
  rationale: z.string().max(4000).default(''),
  needsTools: z.boolean(),
  /** When no tools are needed, the answer to give the user directly. */
  answer: z.string().nullable().default(null),
  risks: z.array(z.string().max(500)).default([]),
  steps: z.array(stepSchema).max(MAX_PLAN_STEPS).default([]),
});

export type Plan = z.infer<typeof planSchema>;
export type Step = Plan['steps'][number];
export type ToolStep = Extract<Step, { kind: 'tool' }>;
export type ConditionStep = Extract<Step, { kind: 'condition' }>;

/** The keys of a schema's object that may be left out (each has a default or is optional), read from the schema. */
function optionalKeys(schema: z.ZodObject): readonly string[] {
  return Object.entries(schema.shape)
    .filter(([, field]) => (field as z.ZodType).safeParse(undefined).success)
    .map(([key]) => key);
}

/**
 * The keys of the full plan, and of a full step of each kind, that may be left out. Read from the schemas, so a field
 * added with a default is one of them at once; the planner's answer reads a null there as the key left out
 * (`forgiving-answer.ts`).
 */
export const OPTIONAL_KEYS: Readonly<Record<'plan' | Step['kind'], readonly string[]>> = {
  plan: optionalKeys(planSchema),
  tool: optionalKeys(toolStep),
  llm: optionalKeys(llmStep),
  condition: optionalKeys(conditionStep),
};

let cachedJsonSchema: Record<string, unknown> | undefined;

/** JSON Schema of the plan, given to providers that support structured output (built once: it never changes). */
export function planJsonSchema(): Record<string, unknown> {
  cachedJsonSchema ??= z.toJSONSchema(planSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return cachedJsonSchema;
}
