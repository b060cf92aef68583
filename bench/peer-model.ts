/**
 * What the fake model says to the LangGraph peer: native OpenAI tool calls, every ready independent call in one
 * assistant message as a current model does, then the final answer as content. The decision is `nextMove`'s, the
 * same as for the hand-written ReAct loop; only the wire format differs. Also how both sides' requests are counted.
 */
import type { FakeToolCall } from '../test/fakes/fake-llm-server.ts';
import { nextMove } from './fake-model.ts';
import { countTokens } from './latency-model.ts';
import type { BenchTask } from './tasks.ts';

/** A Chat Completions message as a request carries it. */
export interface WireMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
}

/** Tool call ids are the step id behind this prefix, so results map back to steps. */
const CALL_PREFIX = 'call_';

/** The step id behind a tool call id the fake made. */
export function stepOfCall(callId: string): string {
  return callId.startsWith(CALL_PREFIX) ? callId.slice(CALL_PREFIX.length) : callId;
}

/** `<server>.<tool>` as @langchain/mcp-adapters names it with the server prefix on (tool names allow no dots). */
export function peerToolName(tool: string): string {
  return tool.replace('.', '__');
}

/** Text of a message's content: a string, or text parts joined by lines (MCP text blocks arrive as parts). */
export function wireText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: unknown) =>
      p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
        ? (p as { text: string }).text
        : '',
    )
    .join('\n');
}

/**
 * A tool result's text as the model reads it. @langchain/mcp-adapters sends a text block that came with structured
 * content as that block in JSON (`{"type":"text","text":…,"structuredContent":…}`); the text inside is what a model
 * takes, and what Steward's steps and the ReAct loops see.
 */
function resultText(content: unknown): string {
  const text = wireText(content);
  try {
    const block = JSON.parse(text) as unknown;
    if (block && typeof block === 'object' && typeof (block as { text?: unknown }).text === 'string')
      return (block as { text: string }).text;
  } catch {
    // Plain text.
  }
  return text;
}

function callIdsOf(m: WireMessage): string[] {
  if (!Array.isArray(m.tool_calls)) return [];
  return m.tool_calls.flatMap((c: unknown) =>
    c && typeof c === 'object' && typeof (c as { id?: unknown }).id === 'string' ? [(c as { id: string }).id] : [],
  );
}

/** The peer's next turn: the ready calls as native tool calls, or the final answer as content. */
export function peerTurn(
  task: BenchTask,
  messages: readonly WireMessage[],
): { text: string; toolCalls: FakeToolCall[] } {
  const issued = new Set<string>();
  const results = new Map<string, string>();
  for (const m of messages) {
    for (const id of callIdsOf(m)) issued.add(stepOfCall(id));
    if (m.role === 'tool' && typeof m.tool_call_id === 'string')
      results.set(stepOfCall(m.tool_call_id), resultText(m.content));
  }
  const move = nextMove(task, issued, results, true);
  if ('final' in move) return { text: move.final, toolCalls: [] };
  return {
    text: '',
    toolCalls: move.calls.map((c) => ({ id: `${CALL_PREFIX}${c.id}`, name: peerToolName(c.tool), args: c.args })),
  };
}

/**
 * Input tokens of a request, the same rule for every caller: every message's text and earlier tool calls, the
 * response schema and the tool definitions, as the real API bills them (4 characters a token).
 */
export function requestTokens(body: Record<string, unknown>): number {
  const messages = Array.isArray(body['messages']) ? (body['messages'] as WireMessage[]) : [];
  const parts = messages.map((m) => wireText(m.content) + (m.tool_calls ? JSON.stringify(m.tool_calls) : ''));
  for (const key of ['response_format', 'tools']) if (body[key]) parts.push(JSON.stringify(body[key]));
  return countTokens(parts.join(''));
}

/** Output tokens of a reply: its text and each call's name and arguments. */
export function replyTokens(text: string, calls: readonly FakeToolCall[]): number {
  return countTokens(text + calls.map((c) => c.name + JSON.stringify(c.args)).join(''));
}
