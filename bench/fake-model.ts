/**
 * What the fake LLM says, per task and role: the planner's plan, the report writer's answer from the step results
 * it was given, an llm step's extraction, and a ReAct model's next move from the history it was sent. The model is
 * an ideal one: it answers only from what is in the request, so a result Steward failed to pass on shows up as a
 * wrong answer.
 */
import { planSchema, type Plan } from '../src/engine/plan/plan-schema.ts';
import { extractJson } from '../src/engine/plan/planner-prompt.ts';
import { resolveRefs } from '../src/engine/plan/refs.ts';
import { toCompactPlan } from '../src/engine/plan/to-compact-plan.ts';
import type { Json } from '../src/engine/types.ts';
import type { BenchTask, TaskStep } from './tasks.ts';

/** Who is asking, from the first line of the system prompt. */
export type FakeRole =
  'planner' | 'synthesizer' | 'llm_step' | 'classifier' | 'butler' | 'react' | 'react-parallel' | 'langgraph';

/** The marker a ReAct loop puts first in its system prompt. */
export const REACT_MARKERS = { sequential: '[bench:react]', parallel: '[bench:react-parallel]' } as const;

/** The marker the LangGraph peer's agent puts first in its system prompt. */
export const PEER_MARKER = '[bench:langgraph]';

/** The tag the bench puts first in a request, naming the task and the round. */
export function taskTag(taskId: string, round: number): string {
  return `[bench task=${taskId} round=${round}]`;
}

/** Reads the role marker of a system prompt. */
export function roleOf(system: string): FakeRole | undefined {
  const first = system.trimStart();
  if (first.startsWith(PEER_MARKER)) return 'langgraph';
  if (first.startsWith(REACT_MARKERS.parallel)) return 'react-parallel';
  if (first.startsWith(REACT_MARKERS.sequential)) return 'react';
  const name = /^\[steward:([a-z_]+)\]/.exec(first)?.[1];
  return name === 'planner' ||
    name === 'synthesizer' ||
    name === 'llm_step' ||
    name === 'classifier' ||
    name === 'butler'
    ? name
    : undefined;
}

/** Finds the task tag in any of the texts. */
export function findTag(texts: readonly string[]): { taskId: string; round: number } | undefined {
  for (const t of texts) {
    const m = /\[bench task=([\w-]+) round=(\d+)\]/.exec(t);
    if (m) return { taskId: m[1] as string, round: Number(m[2]) };
  }
  return undefined;
}

/**
 * The plan a good planner writes for the task, in the compact form: steps first, default ids where nothing refers
 * to a step by another name, dependencies left to the references, no notes or rationale, the summary last.
 */
export function planFor(task: BenchTask): string {
  return JSON.stringify(toCompactPlan(taskPlan(task)));
}

/** The task's plan in the full form, as Steward stores it once the compact answer is expanded. */
export function taskPlan(task: BenchTask): Plan {
  const steps = task.steps.map((s) => ({
    id: s.id,
    dependsOn: s.dependsOn,
    ...(s.kind === 'tool'
      ? { kind: s.kind, tool: s.tool, args: s.args }
      : { kind: s.kind, args: { prompt: s.args['prompt'] ?? '' } }),
  }));
  return planSchema.parse({ summary: task.summary, needsTools: true, steps });
}

/** The report: the task's answer from the succeeded steps' result texts, as the report writer was given them. */
export function synthesize(task: BenchTask, userText: string): string {
  return task.answer(stepResultTexts(task.steps, userText));
}

/**
 * Reads Steward's "Step results" lines (`<id> (<target>, no description): STATUS — detail`, in plan order: the plan
 * has no notes) and returns the details of succeeded steps. Details may span lines, so each ends where the next
 * step's line begins.
 */
export function stepResultTexts(steps: readonly TaskStep[], userText: string): string[] {
  const heads = steps.map((s) => `${s.id} (${s.kind === 'tool' ? s.tool : 'llm'}, no description): `);
  const texts: string[] = [];
  let from = userText.indexOf('Step results:');
  for (let i = 0; i < steps.length; i++) {
    const at = userText.indexOf(heads[i] as string, from);
    if (at < 0) continue;
    const next = i + 1 < heads.length ? userText.indexOf(`\n${heads[i + 1]}`, at) : -1;
    const line = userText.slice(at + (heads[i] as string).length, next < 0 ? undefined : next);
    from = at + 1;
    if (line.startsWith('SUCCEEDED — ')) texts.push(line.slice('SUCCEEDED — '.length));
  }
  return texts;
}

/** An llm step: the bench's only llm steps ask for a file's checksum line. */
export function llmStepAnswer(prompt: string): string {
  const m = /checksum: ([0-9a-f]{12})/.exec(prompt);
  return m ? `checksum: ${m[1]}` : 'I found no checksum line.';
}

/** One tool call a model asks for: `id` is the plan step's id. */
export interface ModelCall {
  id: string;
  tool: string;
  args: Record<string, Json>;
}

/**
 * A tool-calling model's next move from what it has asked for and seen: every ready call (or the first, when it
 * calls one tool at a time) with references resolved from earlier results, or the final answer once every result is
 * in.
 */
export function nextMove(
  task: BenchTask,
  issued: ReadonlySet<string>,
  results: ReadonlyMap<string, string>,
  parallel: boolean,
): { final: string; stuck: boolean } | { calls: ModelCall[] } {
  const toolSteps = task.steps.filter((s) => s.kind === 'tool');
  if (toolSteps.every((s) => results.has(s.id)))
    return { final: task.answer(toolSteps.map((s) => results.get(s.id) as string)), stuck: false };
  const ready = toolSteps.filter((s) => !issued.has(s.id) && s.dependsOn.every((d) => results.has(d)));
  const outputs = new Map<string, Json>([...results].map(([id, text]) => [id, asOutput(text)]));
  const calls = (parallel ? ready : ready.slice(0, 1)).map((s): ModelCall => {
    const args = resolveRefs(s.args, outputs);
    // Resolving an object of arguments gives an object back.
    return { id: s.id, tool: s.tool, args: args.ok ? (args.value as Record<string, Json>) : s.args };
  });
  return calls.length > 0 ? { calls } : { final: 'I could not finish the task.', stuck: true };
}

/** A ReAct model's next turn, as the JSON text the hand-written loop reads. */
export function reactTurn(
  task: BenchTask,
  messages: readonly { role: string; content: string }[],
  parallel: boolean,
): string {
  const issued = new Set<string>();
  const results = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const id of callIds(m.content)) issued.add(id);
    if (m.role === 'user') for (const [id, text] of readResults(m.content)) results.set(id, text);
  }
  const move = nextMove(task, issued, results, parallel);
  if ('final' in move)
    return JSON.stringify({
      thought: move.stuck ? 'A result I need is missing.' : 'I have every result.',
      final: move.final,
    });
  if (!parallel)
    return JSON.stringify({
      thought: `Next: ${task.steps.find((s) => s.id === move.calls[0]?.id)?.description}.`,
      call: move.calls[0],
    });
  return JSON.stringify({ thought: `${move.calls.length} calls that need nothing else run now.`, calls: move.calls });
}

/** Renders one tool result for a ReAct history; `readResults` reads it back. */
export function resultBlock(id: string, tool: string, text: string): string {
  return `Tool result [${id}] (${tool}):\n${text}\n[end of ${id}]`;
}

function readResults(content: string): [string, string][] {
  return [...content.matchAll(/Tool result \[([\w-]+)\] \([^)]*\):\n([\s\S]*?)\n\[end of \1\]/g)].map((m) => [
    m[1] as string,
    m[2] as string,
  ]);
}

function callIds(content: string): string[] {
  const json = extractJson(content);
  if (!json || typeof json !== 'object' || Array.isArray(json)) return [];
  const calls = Array.isArray(json['calls']) ? json['calls'] : json['call'] ? [json['call']] : [];
  return calls.flatMap((c) =>
    c && typeof c === 'object' && !Array.isArray(c) && typeof c['id'] === 'string' ? [c['id']] : [],
  );
}

// A result as an MCP output again, so the plan's references (content[0].text, structuredContent.x) resolve.
function asOutput(text: string): Json {
  const content: Json[] = [{ type: 'text', text }];
  try {
    const parsed = JSON.parse(text) as Json;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { content, structuredContent: parsed };
  } catch {
    // Plain text: no structured content.
  }
  return { content };
}
