/**
 * What the planner is told and how its answer is read (pure): the prompts, and the check that turns an answer
 * into a validated plan or a precise complaint to send back for repair.
 */
import type { Result } from '../result.ts';
import type { Json, ToolInfo } from '../types.ts';
import { expandCompactPlan } from './compact-plan.ts';
import { readAnswerObject, resolveToolNames, withoutOptionalNulls } from './forgiving-answer.ts';
import { MAX_PLAN_DEPTH } from './json-depth.ts';
import type { Plan } from './plan-schema.ts';
import { renderToolCatalog } from './tool-catalog.ts';
import { toCompactPlan } from './to-compact-plan.ts';
import { validatePlan, type ValidatedPlan } from './validate-plan.ts';

/** What the planner is asked to do: a new request, or a change to an existing plan. */
export interface PlanRequest {
  request: string;
  tools: readonly ToolInfo[];
  /** The tools shown to the planner (a selection of `tools`, see tool-selection.ts); all of `tools` when absent. */
  offered?: readonly ToolInfo[];
  /** For an amendment: the plan being changed and the person's words; `progress` when the plan is already running. */
  amend?: { plan: Plan; text: string; progress?: { started: string[]; results: string[] } };
  /** The conversation's earlier turns (`renderEarlierTurns`), for a first plan. */
  earlier?: string;
  /** The Assistant the plan is for: its instructions go to the planner, and `tools` are marked by its grants. */
  assistant?: { name: string; purpose: string; instructions: string };
}

/** A plan (and the run it drives) has a bounded size; the schema also caps it at 100 steps. */
export const MAX_PLAN_CHARS = 200_000;

/** Parses and validates one planner answer, in the compact form or the full one (`compact-plan.ts`). */
export function checkAnswer(text: string, tools: readonly ToolInfo[]): Result<ValidatedPlan> {
  if (text.length > MAX_PLAN_CHARS)
    return { ok: false, error: `the plan is longer than ${MAX_PLAN_CHARS} characters; write a smaller plan` };
  const json = parseAnswerJson(text);
  return json.ok ? checkPlanJson(json.value, tools) : json;
}

/**
 * Expands and validates an answer's JSON object (read whole, or by `createPlanStream` as it streamed), forgiving the
 * slips whose meaning is certain (`forgiving-answer.ts`): a null for a key that may be left out, a tool named without
 * its server when only one server has it.
 */
export function checkPlanJson(json: Json, tools: readonly ToolInfo[]): Result<ValidatedPlan> {
  const plan = expandCompactPlan(withoutOptionalNulls(json));
  if (!plan.ok) return plan;
  if (!plan.value.needsTools)
    return { ok: true, value: { plan: { ...plan.value, steps: [] }, layers: [], stepRisk: {}, risk: 'low' } };
  const valid = validatePlan(resolveToolNames(plan.value, tools), tools);
  return valid.ok ? valid : { ok: false, error: valid.error.slice(0, 20).join('\n') };
}

/**
 * Pulls the JSON object out of an answer, tolerating code fences and chatter around it and a trailing comma in it
 * (`readAnswerObject`). Its depth is measured on the text before anything parses it.
 */
export function parseAnswerJson(text: string): Result<Json> {
  return readAnswerObject(text);
}

/** The JSON object in an answer, or undefined when there is none (or it is nested too deeply to read safely). */
export function extractJson(text: string): Json | undefined {
  const json = parseAnswerJson(text);
  return json.ok ? json.value : undefined;
}

/** The planner's system prompt: how to write a plan, and the tools on offer. */
export function plannerSystemPrompt(tools: readonly ToolInfo[], assistant?: PlanRequest['assistant']): string {
  const catalog = renderToolCatalog(tools);
  // After the catalog, so the text before it stays the same for every request (providers cache that prefix).
  const persona = assistant ? assistantSection(assistant) : '';
  return `[steward:planner]
You are the planner of Steward, a chat bot that runs multi-step work with tools. You cannot call tools.
You write a plan as JSON; code runs it exactly as written, so every argument must be final.

Answer with one JSON object, steps first and summary last: {"steps":[...],"summary":"a few words"}.
If the request needs no tools, answer {"answer":"<your reply>"} instead.
A step is one of:
  {"tool":"<a name from the list below, exactly as written>","args":{...matching its input schema}}
  {"tool":"<name>","each":[{...args},{...args}]} (the tool once per object, in parallel; the calls take the
  default ids of their places as if written one by one, so after a first step with 3 objects comes s4)
  {"llm":<prompt: a string, or JSON holding references>} (a model with no tools writes text from it)
  {"if":"<condition>","then":["<ids>"],"else":["<ids>"]} (of the steps that depend on it, decides which run)
Optional keys of any step: "id" (default s1, s2, ... by position; give short ids like "a" only when you need
names), "after":["<ids>"] (steps that must end first), "note" (a few words, only when tool and args do not say
it), "optional":true (the work can go on without it). Leave out what you do not need.
- To use an earlier step's output, write the whole argument value as {"$ref":"<id><path>"}, e.g.
  {"$ref":"s1.content[0].text"}; tool outputs are MCP results {content: [...], structuredContent}, llm steps
  output {"text"}. A reference makes its step wait for the step it reads: list in "after" only other steps.
- Conditions are "<operand> <op> <operand>" with op one of == != > >= < <= contains; operands are references
  (s1.structuredContent.count), quoted strings, numbers, true, false or null. A step named in "then" or "else"
  must list the condition in "after" (or read it).
- Steps with no dependency between them run in parallel.
- No rationale. Add "risks":["..."] only for real risks and "why":"..." only when the plan needs explaining.
- Objects and arrays may nest at most ${MAX_PLAN_DEPTH} levels deep, the plan object itself counting as level 1.

Tools:
${catalog || '(none are connected)'}${persona}`;
}

/** What the planner is told when it plans for an Assistant. */
function assistantSection(a: NonNullable<PlanRequest['assistant']>): string {
  const instructions = a.instructions.trim() ? `\nIts instructions:\n${a.instructions.trim()}` : '';
  return `

You plan as the Assistant "${a.name}": ${a.purpose}${instructions}
It may use only the tools listed above; a step naming any other tool is refused.`;
}

/** The planner's first user message: the request, or the plan to change (in the compact form) and how. */
export function plannerUserPrompt(input: PlanRequest): string {
  if (!input.amend) return `${input.earlier ? `${input.earlier}\n\n` : ''}Request:\n${input.request}`;
  const { plan, text, progress } = input.amend;
  // Every id written out: inserting a step would otherwise move the default ids of the steps after it.
  const current = JSON.stringify(toCompactPlan(plan, { explicitIds: true }));
  const base = `Original request:\n${input.request}\n\nCurrent plan:\n${current}\n\nThe person asks for this change:\n${text}\n\n`;
  if (!progress) return `${base}Write the complete revised plan.`;
  return `${base}The plan is already running. These steps have started or finished and must stay exactly as they are (copy each one unchanged: same id, tool, args, after and note): ${progress.started.join(', ') || 'none'}.
Results so far:
${progress.results.join('\n')}

Write the complete revised plan: keep those steps unchanged and rewrite only the steps not yet run. To add work, add steps at the end.`;
}
