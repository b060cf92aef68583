/**
 * What the planner is told and how its answer is read (pure): the prompts, and the check that turns an answer
 * into a validated plan or a precise complaint to send back for repair.
 */
import type { Result } from '../result.ts';
import type { Json, ToolInfo } from '../types.ts';
import { jsonTextDepth, MAX_PLAN_DEPTH, TOO_DEEP } from './json-depth.ts';
import { planSchema, type Plan } from './plan-schema.ts';
import { renderToolCatalog } from './tool-catalog.ts';
import { validatePlan, type ValidatedPlan } from './validate-plan.ts';

/** What the planner is asked to do: a new request, or a change to an existing plan. */
export interface PlanRequest {
  request: string;
  tools: readonly ToolInfo[];
  /** The tools shown to the planner (a selection of `tools`, see tool-selection.ts); all of `tools` when absent. */
  offered?: readonly ToolInfo[];
  /** For an amendment: the plan being changed and the person's words; `progress` when the plan is already running. */
  amend?: { plan: Plan; text: string; progress?: { started: string[]; results: string[] } };
}

const NOT_JSON = 'the answer is not a JSON object';
/** A plan (and the run it drives) has a bounded size; the schema also caps it at 100 steps. */
export const MAX_PLAN_CHARS = 200_000;

/** Parses and validates one planner answer. */
export function checkAnswer(text: string, tools: readonly ToolInfo[]): Result<ValidatedPlan> {
  if (text.length > MAX_PLAN_CHARS)
    return { ok: false, error: `the plan is longer than ${MAX_PLAN_CHARS} characters; write a smaller plan` };
  const json = parseAnswerJson(text);
  if (!json.ok) return json;
  const parsed = planSchema.safeParse(json.value);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    return { ok: false, error: issues.join('\n') };
  }
  if (!parsed.data.needsTools)
    return { ok: true, value: { plan: { ...parsed.data, steps: [] }, layers: [], stepRisk: {}, risk: 'low' } };
  const valid = validatePlan(parsed.data, tools);
  return valid.ok ? valid : { ok: false, error: valid.error.slice(0, 20).join('\n') };
}

/**
 * Pulls the JSON object out of an answer, tolerating code fences and chatter around it. Its depth is measured on
 * the text before anything parses it: the schema parser recurses, and a hostile answer must not exhaust the stack.
 */
export function parseAnswerJson(text: string): Result<Json> {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return { ok: false, error: NOT_JSON };
  const body = text.slice(start, end + 1);
  if (jsonTextDepth(body, MAX_PLAN_DEPTH) > MAX_PLAN_DEPTH) return { ok: false, error: TOO_DEEP };
  try {
    return { ok: true, value: JSON.parse(body) as Json };
  } catch {
    return { ok: false, error: NOT_JSON };
  }
}

/** The JSON object in an answer, or undefined when there is none (or it is nested too deeply to read safely). */
export function extractJson(text: string): Json | undefined {
  const json = parseAnswerJson(text);
  return json.ok ? json.value : undefined;
}

/** The planner's system prompt: how to write a plan, and the tools on offer. */
export function plannerSystemPrompt(tools: readonly ToolInfo[]): string {
  const catalog = renderToolCatalog(tools);
  return `[steward:planner]
You are the planner of Steward, a chat bot that runs multi-step work with tools. You cannot call tools.
You write a plan as JSON; code runs it exactly as written, so every argument must be final.

Answer with one JSON object: {"summary", "rationale", "needsTools", "answer", "risks", "steps"}.
- If the request needs no tools, set needsTools false, put the reply in "answer" and leave steps empty.
- Otherwise each step is {"id", "kind", "tool", "args", "dependsOn", "description", "optional"}:
  kind "tool" calls "tool" (a name from the list below, exactly as written) with "args" matching its input schema;
  kind "llm" has args {"prompt": ...} and returns text written by a model with no tools;
  kind "condition" has "expression", "ifTrue" and "ifFalse" (ids of steps that depend on it).
- To use an earlier step's output, write the whole argument value as {"$ref": "steps.<id>.output<path>"},
  e.g. {"$ref": "steps.s1.output.content[0].text"}; tool outputs are MCP results {content: [...], structuredContent}.
  llm steps output {"text"}. A referenced step must be listed in dependsOn (directly or through other steps).
- Conditions are "<operand> <op> <operand>" with op one of == != > >= < <= contains; operands are references,
  quoted strings, numbers, true, false or null.
- Steps with no dependency between them run in parallel. Mark a step optional if the work can go on without it.
- Objects and arrays may nest at most ${MAX_PLAN_DEPTH} levels deep, the plan object itself counting as level 1.

Tools:
${catalog || '(none are connected)'}`;
}

/** The planner's first user message: the request, or the plan to change and how. */
export function plannerUserPrompt(input: PlanRequest): string {
  if (!input.amend) return `Request:\n${input.request}`;
  const { plan, text, progress } = input.amend;
  const base = `Original request:\n${input.request}\n\nCurrent plan:\n${JSON.stringify(plan)}\n\nThe person asks for this change:\n${text}\n\n`;
  if (!progress) return `${base}Write the complete revised plan.`;
  return `${base}The plan is already running. These steps have started or finished and must stay exactly as they are (same id, kind, tool, args and dependsOn): ${progress.started.join(', ') || 'none'}.
Results so far:
${progress.results.join('\n')}

Write the complete revised plan: keep those steps unchanged and rewrite only the steps not yet run. To add work, add steps at the end.`;
}
