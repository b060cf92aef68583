/**
 * The planner: one model call with no tools, whose JSON answer must pass the plan schema and validation.
 * An invalid answer gets at most `maxRepairs` further calls, each told exactly what was wrong; an answer too large
 * to be a plan gets none, since a model that wrote one will write the next just as long.
 */
import { compactPlanJsonSchema } from '../plan/compact-schema.ts';
import { compactElementWidth, deriveSummary, expandCompactElement } from '../plan/compact-plan.ts';
import type { Step } from '../plan/plan-schema.ts';
import { toCompactPlan } from '../plan/to-compact-plan.ts';
import { BAD_JSON, createPlanStream } from '../plan/plan-stream.ts';
import { resolveStepTool, stepWithoutOptionalNulls } from '../plan/forgiving-answer.ts';
import {
  checkAnswer,
  checkPlanJson,
  MAX_PLAN_CHARS,
  plannerSystemPrompt,
  plannerUserPrompt,
  type PlanRequest,
} from '../plan/planner-prompt.ts';
import { DEFAULT_PLANNER_TOOLS, selectTools } from '../plan/tool-selection.ts';
import type { ValidatedPlan } from '../plan/validate-plan.ts';
import { BUILTIN_SERVER, STEP_OUTPUT_TOOL } from '../run/earlier-turns.ts';
import { READ_RESOURCE_TOOL, renderResources } from '../run/resource-tool.ts';
import { DELEGATE_TOOL, renderAssistants } from '../assistant/delegate-tool.ts';
import { StewardError } from '../errors.ts';
import type {
  LlmClient,
  LlmMessage,
  LlmRequest,
  LlmResponse,
  ToolRunner,
  RunRecords,
  TokenSettlement,
} from '../ports.ts';
import type { Result } from '../result.ts';
import type { Assistant, AssistantStore } from '../assistant/assistants.ts';
import { grantChain, narrowTools, type GrantDeps, type GrantedRun } from './assistant-grants.ts';
import type { Actor, Json, ToolInfo } from '../types.ts';
import type { LlmForRun, Log } from './deps.ts';

/**
 * Steps of the first answer handed on while it streams, so some may start before the plan is whole
 * (`early-run.ts`).
 */
export interface PlanStreaming {
  /** A step of the first answer is complete in the stream (expanded to a full step; one that cannot be is dropped). */
  onStep(step: Step): void;
  /**
   * The first answer was refused: the steps that had started by then (none: the streaming ends here). A repair must
   * keep each of them exactly as it started.
   */
  refused(): Step[];
}

/**
 * Asks the planner for a plan and validates it, repairing at most `maxRepairs` times. With `streaming`, the first
 * answer is streamed and its steps handed on as they arrive; it is then checked as the stream read it.
 */
export async function writePlan(
  llm: LlmClient,
  input: PlanRequest,
  options: {
    maxRepairs: number;
    onResponse?: (r: LlmResponse) => Promise<void>;
    signal?: AbortSignal;
    streaming?: PlanStreaming;
  },
): Promise<Result<ValidatedPlan>> {
  const messages: LlmMessage[] = [{ role: 'user', content: plannerUserPrompt(input) }];
  const schema = { name: 'steward_plan', schema: compactPlanJsonSchema() };
  // The same text on every call, repairs included, so the provider's prompt cache serves them.
  const system = plannerSystemPrompt(input.offered ?? input.tools, input.assistant);
  let lastError = '';
  let started: Step[] = [];
  for (let call = 1; call <= options.maxRepairs + 1; call++) {
    const request: LlmRequest = { role: 'planner', system, messages, jsonSchema: schema, signal: options.signal };
    // Only the first answer streams: a repair reuses step ids, and nothing may start from a second answer.
    const streamed = call === 1 && options.streaming ? streamSteps(request, options.streaming, input.tools) : undefined;
    const response = await llm.complete(request);
    await options.onResponse?.(response);
    const oversized = sizeRefusal(response);
    const checked: Result<ValidatedPlan> = oversized
      ? { ok: false, error: oversized }
      : streamed
        ? streamed.check(response.text)
        : checkAnswer(response.text, input.tools);
    if (checked.ok || oversized) return checked;
    // Steps that started early hold their ids: the repair is told to keep them as they are, and the early-start gate
    // stops the run if it does not (`early-start.ts`, `changedSince`).
    if (streamed) started = options.streaming?.refused() ?? [];
    lastError = checked.error;
    messages.push({ role: 'assistant', content: response.text.slice(0, 20_000) });
    messages.push({ role: 'user', content: repairPrompt(checked.error, started) });
  }
  return { ok: false, error: lastError };
}

/** What a repair call is told: what was wrong, and the steps that already started, which it must keep as they are. */
export function repairPrompt(error: string, started: readonly Step[]): string {
  const kept =
    started.length === 0
      ? ''
      : `\nThese steps already started while you wrote the plan. Keep each one exactly as it is (same id, tool, ` +
        `arguments and dependencies); change only the rest:\n` +
        JSON.stringify(compactSteps(started));
  return `That plan was rejected:\n${error}${kept}\nReply with the corrected plan as JSON only.`;
}

/** Steps as the planner writes them, each with its id. */
function compactSteps(steps: readonly Step[]): Json {
  const plan = { summary: deriveSummary([...steps]), rationale: '', needsTools: true, answer: null, risks: [] };
  const compact = toCompactPlan({ ...plan, steps: [...steps] }, { explicitIds: true });
  return typeof compact === 'object' && compact !== null && 'steps' in compact ? (compact['steps'] ?? []) : [];
}

/**
 * Reads a request's answer as it streams, handing each complete step on (read as the whole answer will be: a null for
 * a key that may be left out is that key left out, a tool named without its server resolved as `checkPlanJson`
 * resolves it); `check` judges the answer as it read it.
 */
function streamSteps(request: LlmRequest, streaming: PlanStreaming, tools: PlanRequest['tools']) {
  const stream = createPlanStream();
  let streamed = false;
  // Where the next element's steps sit in the expanded plan: a fan-out ("each") stands for several.
  let position = 0;
  request.onText = (delta) => {
    streamed = true;
    const read = stream.push(delta);
    if (!read.ok) return;
    for (const s of read.value) {
      const steps = expandCompactElement(stepWithoutOptionalNulls(s.value), position, s.index);
      position += compactElementWidth(s.value);
      if (steps.ok) for (const step of steps.value) streaming.onStep(resolveStepTool(step, tools));
    }
  };
  return {
    check(text: string): Result<ValidatedPlan> {
      // A client that cannot stream answers all at once: its answer is read as it always was.
      if (!streamed) return checkAnswer(text, tools);
      const whole = stream.end();
      if (whole.ok) return checkPlanJson(whole.value, tools);
      // The stream reads from the first `{`: one in the prose before the JSON stops it, where reading the whole text
      // finds the JSON after it. A step that started from what the stream read must still be in that plan as it
      // started, or the early-start gate stops the run (`changedSince`).
      if (whole.error !== BAD_JSON) return whole;
      const read = checkAnswer(text, tools);
      return read.ok ? read : whole;
    },
  };
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

/**
 * A plan, or why there is none. `callFailed` marks a model call that failed (the model unreachable, timed out, the key
 * refused, rate limited, a budget spent): then `error` says so, and no answer was judged, so "not a valid plan" would
 * be untrue.
 */
export type PlanOutcome = Result<ValidatedPlan> | { ok: false; error: string; callFailed: true };

/** Asks for a plan; a failed call (a budget spent, the model unreachable) comes back as the error. */
async function planOrError(
  llm: LlmClient,
  input: PlanRequest,
  options: { maxRepairs: number; signal?: AbortSignal; streaming?: PlanStreaming },
): Promise<PlanOutcome> {
  try {
    return await writePlan(llm, input, options);
  } catch (err) {
    return { ok: false, error: callFailure(err), callFailed: true };
  }
}

/** A failed model call as a clause for a sentence: "the model failed: could not reach …", or a budget spent. */
export function callFailure(err: unknown): string {
  if (!(err instanceof StewardError))
    return `the model call failed: ${err instanceof Error ? err.message : String(err)}`;
  // Lower-cased to sit inside a sentence, unless it starts with an acronym.
  const said = err.message.replace(/\.$/, '').replace(/^[A-Z](?![A-Z])/, (c) => c.toLowerCase());
  if (err.code === 'llm_failed') return `the model failed: ${said}`;
  return said;
}

/** Writes a plan (or an amended one) for a run, on that run's token budget; `signal` abandons the planner call. */
export type PlanWriter = (
  run: { id: string; requester: Actor; assistant?: string | null; parentRunId?: string },
  request: string,
  amend?: PlanRequest['amend'],
  signal?: AbortSignal,
  streaming?: PlanStreaming,
  /** How each planner call's settlement is stored (see `meteredLlm`); by default by a statement of its own. */
  settle?: (s: TokenSettlement) => Promise<void>,
) => Promise<PlanOutcome>;

/**
 * A plan writer over the tools connected at the time of each call. The planner is shown at most `plannerTools` of
 * them, those that matter for the request (`selectTools`); its plan is checked against all of them.
 */
/** Where plans may delegate: the Assistants there are now (read for each first plan), and where to log a failure. */
export interface PlanDelegation {
  delegates?: () => Promise<readonly Pick<Assistant, 'name' | 'purpose'>[]>;
  log?: Log;
  /** Where a delegated run's parents are read: its plan is bound by every Assistant up its chain (`grantChain`). */
  store?: Pick<RunRecords, 'getRun'>;
  /** Where an approver's Widen grants on a parent's card is read: the chain stops there. */
  widened?: GrantDeps['delegations'];
}

export function createPlanWriter(
  tools: ToolRunner,
  llmFor: LlmForRun,
  maxRepairs: number,
  plannerTools = DEFAULT_PLANNER_TOOLS,
  earlierTurns?: (runId: string) => Promise<string | undefined>,
  assistants?: AssistantStore,
  delegation: PlanDelegation = {},
): PlanWriter {
  /** The Assistants a plan of `run` may hand work to (never the run's own Assistant), as a block for the prompt. */
  const delegatesFor = async (run: { id: string; assistant?: string | null }) => {
    if (!delegation.delegates) return undefined;
    try {
      const there = await delegation.delegates();
      return renderAssistants(there.filter((a) => a.name !== run.assistant));
    } catch (err) {
      delegation.log?.('warn', `run ${run.id}: planned without delegation: ${(err as Error).message}`);
      return undefined;
    }
  };
  return async (run, request, amend, signal, streaming, settle) => {
    const llm = llmFor(run, settle ? { settle } : undefined);
    // A first plan sees the conversation's earlier turns (words and replies only); an amendment has its own context.
    const earlier = amend ? undefined : await earlierTurns?.(run.id);
    const delegates = await delegatesFor(run);
    const context = { request, amend, earlier, delegates };
    if (run.assistant)
      return planForAssistant(
        { tools, assistants, store: delegation.store, delegations: delegation.widened },
        { ...run, assistant: run.assistant },
        llm,
        context,
        {
          maxRepairs,
          signal,
          streaming,
          plannerTools,
        },
      );
    const all = tools.listTools();
    const offered = [
      ...selectTools(
        all.filter((t) => !isBuiltin(t.name)),
        { request, amend },
        plannerTools,
      ),
    ];
    // Only Steward's own runs read resources: an Assistant's grants name tools, and a resource belongs to no tool.
    const resources = tools.readResource ? renderResources(tools.listResources?.() ?? []) : undefined;
    offered.push(...builtinOffer(all, { ...context, resources }));
    const input = { request, tools: all, offered, amend, earlier: joinContext(earlier, delegates, resources) };
    return planOrError(llm, input, { maxRepairs, signal, streaming });
  };
}

/** Whether a tool is Steward's own (`steward.*`): offered by the context, never by the request's words. */
const isBuiltin = (name: string) => name.startsWith(`${BUILTIN_SERVER}.`);

/**
 * Steward's own tools a plan is offered, of those it may use (`usable`): the reader of earlier outputs when there is
 * an earlier turn, the delegate tool when there are Assistants to delegate to, the resource reader when some server
 * offers resources.
 */
function builtinOffer(
  usable: readonly ToolInfo[],
  context: { earlier?: string; delegates?: string; resources?: string },
): ToolInfo[] {
  return usable.filter(
    (t) =>
      (t.name === STEP_OUTPUT_TOOL && context.earlier !== undefined) ||
      (t.name === DELEGATE_TOOL && context.delegates !== undefined) ||
      (t.name === READ_RESOURCE_TOOL && context.resources !== undefined),
  );
}

/** The blocks a first plan gets before the request, or undefined when there are none. */
function joinContext(...blocks: (string | undefined)[]): string | undefined {
  const there = blocks.filter((b): b is string => b !== undefined);
  return there.length === 0 ? undefined : there.join('\n\n');
}

/**
 * A plan for an Assistant's run: the planner is shown only the tools the Assistant is granted (selected as usual),
 * with its instructions, and the plan is checked against the tools as the Assistant sees them, so a step naming a
 * tool it is not granted is refused, naming the tool and the Assistant.
 */
async function planForAssistant(
  deps: GrantDeps,
  run: GrantedRun & { assistant: string },
  llm: LlmClient,
  { request, amend, earlier, delegates }: Pick<PlanRequest, 'request' | 'amend' | 'earlier'> & { delegates?: string },
  options: { maxRepairs: number; signal?: AbortSignal; streaming?: PlanStreaming; plannerTools: number },
): Promise<PlanOutcome> {
  const name = run.assistant;
  const assistant = (await deps.assistants?.getAssistant(name)) ?? null;
  if (!assistant) return { ok: false, error: `the Assistant "${name}" no longer exists` };
  // Its own grants, and those of every Assistant that delegated to it: delegation narrows, never widens.
  const all = await narrowTools(deps, deps.tools.listTools(), await grantChain(deps, run));
  const usable = all.filter((t) => t.policy.allowed);
  const offered = [
    ...selectTools(
      usable.filter((t) => !isBuiltin(t.name)),
      { request, amend },
      options.plannerTools,
    ),
  ];
  // Steward's own tools only where granted: an Assistant delegates only with a grant for steward.delegate.
  const own = builtinOffer(usable, { earlier, delegates });
  offered.push(...own);
  const told = own.some((t) => t.name === DELEGATE_TOOL) ? delegates : undefined;
  const { purpose, instructions } = assistant;
  const input = {
    request,
    tools: all,
    offered,
    amend,
    earlier: joinContext(earlier, told),
    assistant: { name, purpose, instructions },
  };
  return planOrError(llm, input, options);
}
