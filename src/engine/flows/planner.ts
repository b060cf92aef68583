/**
 * The planner: one model call with no tools, whose JSON answer must pass the plan schema and validation.
 * An invalid answer gets at most `maxRepairs` further calls, each told exactly what was wrong; an answer too large
 * to be a plan gets none, since a model that wrote one will write the next just as long.
 */
import { planJsonSchema } from '../plan/plan-schema.ts';
import {
  checkAnswer,
  MAX_PLAN_CHARS,
  plannerSystemPrompt,
  plannerUserPrompt,
  type PlanRequest,
} from '../plan/planner-prompt.ts';
import type { ValidatedPlan } from '../plan/validate-plan.ts';
import type { LlmClient, LlmMessage, LlmResponse, ToolRunner } from '../ports.ts';
import type { Result } from '../result.ts';
import type { Actor } from '../types.ts';
import type { LlmForRun } from './deps.ts';

/** Asks the planner for a plan and validates it, repairing at most `maxRepairs` times. */
export async function writePlan(
  llm: LlmClient,
  input: PlanRequest,
  options: { maxRepairs: number; onResponse?: (r: LlmResponse) => Promise<void>; signal?: AbortSignal },
): Promise<Result<ValidatedPlan>> {
  const messages: LlmMessage[] = [{ role: 'user', content: plannerUserPrompt(input) }];
  const schema = { name: 'steward_plan', schema: planJsonSchema() };
  let lastError = '';
  for (let call = 1; call <= options.maxRepairs + 1; call++) {
    const response = await llm.complete({
      role: 'planner',
      system: plannerSystemPrompt(input.tools),
      messages,
      jsonSchema: schema,
      signal: options.signal,
    });
    await options.onResponse?.(response);
    const oversized = sizeRefusal(response);
    if (oversized) return { ok: false, error: oversized };
    const checked = checkAnswer(response.text, input.tools);
    if (checked.ok) return checked;
    lastError = checked.error;
    messages.push({ role: 'assistant', content: response.text.slice(0, 20_000) });
    messages.push({
      role: 'user',
      content: `That plan was rejected:\n${checked.error}\nReply with the corrected plan as JSON only.`,
    });
  }
  return { ok: false, error: lastError };
}

/** Why an answer is too large to be a plan (cut off at its output cap, or over `MAX_PLAN_CHARS`), or undefined. */
export function sizeRefusal(response: Pick<LlmResponse, 'text' | 'truncated' | 'usage'>): string | undefined {
  const chars = response.text.length.toLocaleString('en-US');
  if (response.truncated) {
    const tokens = response.usage.outputTokens ? `${response.usage.outputTokens.toLocaleString('en-US')} tokens, ` : '';
    return `the plan is too large: the planner's answer reached the limit of one answer (${tokens}${chars} characters) and was cut off before it ended`;
  }
  if (response.text.length > MAX_PLAN_CHARS) {
    return `the plan is too large: the planner's answer is ${chars} characters, over the limit of ${MAX_PLAN_CHARS.toLocaleString('en-US')}`;
  }
  return undefined;
}

/** Asks for a plan; a failed call (a budget spent, the model unreachable) comes back as the error. */
async function planOrError(
  llm: LlmClient,
  input: PlanRequest,
  options: { maxRepairs: number },
): Promise<Result<ValidatedPlan>> {
  try {
    return await writePlan(llm, input, options);
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : 'the planner call failed' };
  }
}

/** Writes a plan (or an amended one) for a run, on that run's token budget. */
export type PlanWriter = (
  run: { id: string; requester: Actor },
  request: string,
  amend?: PlanRequest['amend'],
) => Promise<Result<ValidatedPlan>>;

/** A plan writer over the tools connected at the time of each call. */
export function createPlanWriter(tools: ToolRunner, llmFor: LlmForRun, maxRepairs: number): PlanWriter {
  return (run, request, amend) =>
    planOrError(llmFor(run), { request, tools: tools.listTools(), amend }, { maxRepairs });
}
