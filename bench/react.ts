/**
 * ReAct baselines built from Steward's own layers: the same `LlmClient` (text completions, no tools sent) and the
 * same MCP host as a `ToolRunner`. Each turn the model answers with JSON: one tool call (`call`), several calls run
 * in parallel (`calls`, the parallel variant), or the final answer (`final`). Tool results go back into the history
 * as text (MCP text blocks joined), and the whole history is re-sent on every turn, as ReAct does.
 */
import { extractJson } from '../src/engine/plan/planner-prompt.ts';
import type { LlmClient, LlmMessage, ToolRunner } from '../src/engine/ports.ts';
import type { Json, ToolInfo, ToolOutput } from '../src/engine/types.ts';
import { REACT_MARKERS, resultBlock } from './fake-model.ts';

/** How a ReAct run ended. */
export interface ReactOutcome {
  answer: string | null;
  turns: number;
  toolCalls: number;
  /** Call ids (the fake model uses step ids) per turn, in order: the analytic limit of the parallel variant needs them. */
  callsPerTurn: string[][];
  error?: string;
}

interface Call {
  id: string;
  tool: string;
  args: Record<string, Json>;
}

const DESCRIPTION_BUDGET = 400;

/** Runs one request to its final answer (or `maxTurns`). */
export async function runReact(
  deps: { llm: LlmClient; tools: ToolRunner },
  request: string,
  options: { parallel: boolean; maxTurns: number; toolTimeoutMs: number },
): Promise<ReactOutcome> {
  const system = systemPrompt(deps.tools.listTools(), options.parallel);
  const messages: LlmMessage[] = [{ role: 'user', content: request }];
  const out: ReactOutcome = { answer: null, turns: 0, toolCalls: 0, callsPerTurn: [] };
  while (out.turns < options.maxTurns) {
    out.turns++;
    const response = await deps.llm.complete({ role: 'planner', system, messages });
    const move = readMove(response.text);
    if ('final' in move) return { ...out, answer: move.final };
    if ('error' in move) return { ...out, error: move.error };
    messages.push({ role: 'assistant', content: response.text });
    out.callsPerTurn.push(move.calls.map((c) => c.id));
    out.toolCalls += move.calls.length;
    const results = await Promise.all(move.calls.map((c) => callOne(deps.tools, c, options.toolTimeoutMs)));
    messages.push({ role: 'user', content: results.join('\n\n') });
  }
  return { ...out, error: `no final answer after ${options.maxTurns} turns` };
}

async function callOne(tools: ToolRunner, c: Call, timeoutMs: number): Promise<string> {
  // Each call its own signal (the SDK piles listeners on a shared one).
  const outcome = await tools.callTool(c.tool, c.args, { signal: new AbortController().signal, timeoutMs });
  const text = outcome.ok
    ? outcome.value.isError
      ? `Error: ${renderOutput(outcome.value)}`
      : renderOutput(outcome.value)
    : `Error: ${outcome.error.message}`;
  return resultBlock(c.id, c.tool, text);
}

/** MCP text blocks joined; JSON only when there is no text block. */
export function renderOutput(output: ToolOutput): string {
  const texts = output.content.flatMap((c) =>
    c && typeof c === 'object' && !Array.isArray(c) && typeof c['text'] === 'string' ? [c['text']] : [],
  );
  return texts.length > 0 ? texts.join('\n') : JSON.stringify(output.structuredContent ?? output.content);
}

function readMove(text: string): { final: string } | { calls: Call[] } | { error: string } {
  const json = extractJson(text);
  if (!json || typeof json !== 'object' || Array.isArray(json)) return { error: 'the model did not answer with JSON' };
  if (typeof json['final'] === 'string') return { final: json['final'] };
  const raw = Array.isArray(json['calls']) ? json['calls'] : json['call'] ? [json['call']] : [];
  const calls = raw.flatMap((c): Call[] => {
    if (!c || typeof c !== 'object' || Array.isArray(c) || typeof c['tool'] !== 'string') return [];
    const args = c['args'] && typeof c['args'] === 'object' && !Array.isArray(c['args']) ? c['args'] : {};
    return [{ id: typeof c['id'] === 'string' ? c['id'] : c['tool'], tool: c['tool'], args }];
  });
  return calls.length > 0 ? { calls } : { error: 'the model asked for no tool and gave no answer' };
}

function systemPrompt(tools: readonly ToolInfo[], parallel: boolean): string {
  // The same catalog format as Steward's planner prompt, so both sides pay for the same tool descriptions.
  const catalog = tools
    .filter((t) => t.policy.allowed)
    .map((t) => {
      const desc =
        t.description.length > DESCRIPTION_BUDGET ? `${t.description.slice(0, DESCRIPTION_BUDGET)}…` : t.description;
      return `- ${t.name}: ${desc}\n  input schema: ${JSON.stringify(t.inputSchema)}`;
    })
    .join('\n');
  const move = parallel
    ? '{"thought": "...", "calls": [{"id": "c1", "tool": "<name>", "args": {...}}, ...]} to call several tools at once (they run in parallel)'
    : '{"thought": "...", "call": {"id": "c1", "tool": "<name>", "args": {...}}} to call one tool';
  return `${parallel ? REACT_MARKERS.parallel : REACT_MARKERS.sequential}
You are an assistant that completes the person's request by calling tools, one turn at a time.
Each turn, answer with JSON only: either ${move}, or {"thought": "...", "final": "<answer for the person>"} when you are done.
Tool results come back in the next message, each between "Tool result [<id>] (<tool>):" and "[end of <id>]".

Tools:
${catalog || '(none)'}`;
}
