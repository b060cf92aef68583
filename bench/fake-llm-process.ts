/**
 * The bench's fake LLM, in its own process (`node --import tsx bench/fake-llm-process.ts`, with an IPC channel):
 * the test suite's OpenAI-compatible fake server, scripted per task and role by fake-model.ts (the LangGraph peer by
 * peer-model.ts, with native tool calls), answering after the latency model's delay. Usage is counted by this server
 * from the whole request (every message, re-sent history and earlier tool calls included, plus the response schema
 * and the tool definitions). Optionally refuses some requests once with 429 and Retry-After. With `promptCache` on,
 * simulates OpenAI's prompt cache (prompt-cache-model.ts): reports the tokens read from it as
 * `prompt_tokens_details.cached_tokens`, charges them no prefill in the latency model, and records beside them what
 * Anthropic's rule would have read from the same prompts.
 *
 * IPC in: `configure` (settings), `flush` (answered once every earlier record was sent), `close`.
 * IPC out: `ready` (base URL), `call` (one record per answered or refused request), `failure`, `flushed`.
 */
import { createHash } from 'node:crypto';
import { MAX_QUICK_CALLS } from '../src/engine/run/quick-loop.ts';
import {
  startFakeLlm,
  type FakeLlm,
  type FakeReply,
  type FakeToolCall,
  type RecordedRequest,
} from '../test/fakes/fake-llm-server.ts';
import { findTag, llmStepAnswer, planFor, reactTurn, roleOf, synthesize } from './fake-model.ts';
import type { FakeLlmConfig, FakeLlmMessage } from './fake-llm-handle.ts';
import { DEFAULT_LATENCY, latencyMs } from './latency-model.ts';
import { PromptCaches } from './prompt-cache-model.ts';
import { peerTurn, replyTokens, requestTokens, wireText, type WireMessage } from './peer-model.ts';
import { createFreshArgTasks, createTasks, type BenchTask } from './tasks.ts';

let config: FakeLlmConfig | undefined;
let tasks = new Map<string, BenchTask>();
const refused = new Set<string>();
/** The simulated prompt caches, while the section's configuration has them on; they live across flushes. */
let caches: PromptCaches | undefined;
/** Distinct requests of the current run in arrival order (a retry is the same request). */
const ordinals = new Map<string, number>();

function send(message: FakeLlmMessage): void {
  process.send?.(message);
}

function messagesOf(req: RecordedRequest): { role: string; content: string }[] {
  const list = Array.isArray(req.body['messages'])
    ? (req.body['messages'] as { role?: unknown; content?: unknown }[])
    : [];
  return list.map((m) => ({
    role: String(m.role),
    content: typeof m.content === 'string' ? m.content : wireText(m.content),
  }));
}

function answerText(
  req: RecordedRequest,
  messages: { role: string; content: string }[],
): { role: string; taskId: string | null; round: number | null; text: string; toolCalls?: FakeToolCall[] } {
  const role = roleOf(req.system);
  if (!role) throw new Error(`request #${req.index} has no role marker`);
  const tag = findTag(messages.map((m) => m.content));
  const task = tag ? tasks.get(tag.taskId) : undefined;
  const ids = { role, taskId: tag?.taskId ?? null, round: tag?.round ?? null };
  if (role === 'llm_step') return { ...ids, text: llmStepAnswer(req.lastUserText) };
  if (!task) throw new Error(`request #${req.index} (${role}) names no known task`);
  switch (role) {
    case 'planner':
      return { ...ids, text: planFor(task) };
    case 'synthesizer':
      return { ...ids, text: synthesize(task, req.lastUserText) };
    case 'react':
    case 'react-parallel':
      return {
        ...ids,
        text: reactTurn(
          task,
          messages.filter((m) => m.role !== 'system'),
          role === 'react-parallel',
        ),
      };
    case 'langgraph':
      return { ...ids, ...peerTurn(task, req.body['messages'] as WireMessage[]) };
    case 'butler':
      // As Steward's front desk instructions ask: a request with dependent steps, or more calls than one turn may
      // make, goes to the planner at once.
      if (hasDependentTools(task) || task.steps.filter((s) => s.kind === 'tool').length > MAX_QUICK_CALLS)
        return {
          ...ids,
          text: '',
          toolCalls: [{ id: 'call_plan', name: 'plan_request', args: { reason: 'dependent steps' } }],
        };
      // Else native tool calls as the peer's, reading each result inside Steward's data frame.
      return { ...ids, ...peerTurn(task, (req.body['messages'] as WireMessage[]).map(unframed)) };
    case 'classifier':
      return { ...ids, text: '{"intent":"unrelated"}' };
  }
}

/** Whether a tool step of the task needs another tool step's result (a chain, a diamond): work for a plan. */
function hasDependentTools(task: BenchTask): boolean {
  const tools = new Set(task.steps.filter((s) => s.kind === 'tool').map((s) => s.id));
  return task.steps.some((s) => s.kind === 'tool' && s.dependsOn.some((d) => tools.has(d)));
}

/** A tool message as Steward's quick-answer loop frames it, with the frame taken off (the output as the tool gave it). */
function unframed(m: WireMessage): WireMessage {
  if (m.role !== 'tool' || typeof m.content !== 'string') return m;
  const inside = /<tool_output>\n([\s\S]*)\n<\/tool_output>/.exec(m.content);
  return inside ? { ...m, content: inside[1] } : m;
}

function script(req: RecordedRequest): FakeReply {
  const c = config;
  if (!c) throw new Error('not configured');
  const messages = messagesOf(req);
  const schema = req.body['response_format'] ? JSON.stringify(req.body['response_format']) : '';
  const key = createHash('sha256')
    .update(JSON.stringify(req.body['messages'] ?? null))
    .update(schema)
    .digest('hex');
  const input = requestTokens(req.body);
  let a: ReturnType<typeof answerText>;
  try {
    a = answerText(req, messages);
  } catch (err) {
    send({ type: 'failure', message: (err as Error).message });
    throw err;
  }
  const output = replyTokens(a.text, a.toolCalls ?? []);
  const base = {
    type: 'call' as const,
    role: a.role,
    taskId: a.taskId,
    round: a.round,
    inputTokens: input,
    outputTokens: output,
  };
  // Deterministic: the 1st, (every+1)th, … distinct request of each run is refused once; its retry goes through.
  if (!ordinals.has(key)) ordinals.set(key, ordinals.size);
  const limit = c.rateLimit;
  if (limit && !refused.has(key) && (ordinals.get(key) ?? 0) % limit.every === 0) {
    refused.add(key);
    send({ ...base, latencyMs: 0, status: 429 });
    const after = limit.retryAfterMs;
    return {
      status: 429,
      headers: { 'retry-after-ms': String(after), 'retry-after': String(Math.ceil(after / 1000)) },
      body: {
        error: {
          message: 'Rate limit reached (fake)',
          type: 'rate_limit_error',
          param: null,
          code: 'rate_limit_exceeded',
        },
      },
    };
  }
  const model = { ...DEFAULT_LATENCY, ...c.latency, scale: c.scale, seed: c.seed };
  const reading = caches?.read(req.body, Date.now());
  const cached = reading?.cachedTokens ?? 0;
  // Assumption: a prefix read from the cache costs no prefill at all (its keys and values are loaded, not computed);
  // the fixed part of the time to first token and the decode stay as they were.
  const ms = latencyMs(model, input - cached, output, key);
  send({
    ...base,
    latencyMs: ms,
    status: 200,
    ...(reading && {
      cachedTokens: cached,
      anthropicCached: reading.anthropic,
      anthropicWritten: reading.anthropicWritten,
    }),
  });
  const usage = { input, output, ...(reading && { cached }) };
  const reply = { text: a.text, ...(a.toolCalls && { toolCalls: a.toolCalls }), usage };
  if (req.body['stream'] !== true || a.toolCalls || a.text.length === 0) return { ...reply, delayMs: ms };
  return { ...reply, ...paced(a.text, ms, (output * 1000 * model.scale) / model.outputTokensPerSec) };
}

/** Characters per streamed piece: about 8 tokens, as a served model's stream groups them closely enough. */
const PIECE_CHARS = 32;

/**
 * A streamed answer as a served model writes it: the first piece after the time to first token, the others spread
 * over the decode time, so the whole answer ends when an unstreamed one would arrive.
 */
function paced(
  text: string,
  totalMs: number,
  decodeMs: number,
): { delayMs: number; chunks: string[]; chunkDelayMs: number } {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += PIECE_CHARS) chunks.push(text.slice(i, i + PIECE_CHARS));
  const decode = Math.min(decodeMs, totalMs);
  const each = decode / chunks.length;
  return { delayMs: totalMs - decode + each, chunks, chunkDelayMs: each };
}

let fake: FakeLlm | undefined;

process.on('message', (raw: unknown) => {
  const m = raw as { type: string; id?: number; config?: FakeLlmConfig };
  void (async () => {
    if (m.type === 'configure' && m.config) {
      // Switching the cache on starts it empty; switching it off forgets it.
      if (m.config.promptCache !== true) caches = undefined;
      else if (config?.promptCache !== true || !caches) caches = new PromptCaches();
      config = m.config;
      const all = [...createTasks(m.config.scale, m.config.files), ...createFreshArgTasks(m.config.scale)];
      tasks = new Map(all.map((t) => [t.id, t]));
      refused.clear();
      fake ??= await startFakeLlm(script);
      send({ type: 'configured', id: m.id ?? 0, baseURL: fake.baseURL });
    } else if (m.type === 'flush') {
      // Flushes come between runs: each run meets the same refusals for the same requests.
      refused.clear();
      ordinals.clear();
      fake?.reset();
      send({ type: 'flushed', id: m.id ?? 0 });
    } else if (m.type === 'close') {
      await fake?.close();
      process.disconnect?.();
    }
  })().catch((err: unknown) => send({ type: 'failure', message: `fake LLM process: ${String(err)}` }));
});
// The parent going away (even by a crash) ends this process.
process.on('disconnect', () => process.exit(0));
