/**
 * A local fake of two model APIs for tests that drive the real SDKs over HTTP:
 * OpenAI Chat Completions (`POST /v1/chat/completions`) and Anthropic Messages (`POST /v1/messages`), and the model
 * list both SDKs read (`GET /v1/models`, which Steward asks for once at start).
 *
 * Every request is recorded (even those still hanging) and answered by a script. Steward's system prompts
 * start with a `[steward:<role>]` line, so `byRole` can script the planner, classifier, … independently.
 * Script mistakes (no reply left, a throwing script, an unknown path) answer HTTP 500 with `x-should-retry: false`,
 * so the SDK gives up at once, and are listed in `failures`. A request with `stream: true` gets its text reply as a
 * real stream (fake-llm-stream.ts): in `chunks`, `chunkDelayMs` apart, optionally `cut` midway.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text as readBody } from 'node:stream/consumers';
import type { ModelRole } from '../../src/engine/ports.ts';
import { writeStream, type StreamShape, type WrittenChunk } from './fake-llm-stream.ts';

export type { WrittenChunk } from './fake-llm-stream.ts';

/** Which API a request came in on. */
export type FakeApi = 'openai' | 'anthropic';

/** One request as the fake received it. */
export interface RecordedRequest {
  index: number;
  api: FakeApi;
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  model: string;
  /** System prompt text: OpenAI system/developer messages, or Anthropic's `system`. */
  system: string;
  /** Text of the last user message. */
  lastUserText: string;
  /** Whether the body carried a non-empty `tools` (Steward sends them only with the `butler` role). */
  toolsSent: boolean;
  /** The names of the tools offered, in order (OpenAI `tools[].function.name`, Anthropic `tools[].name`). */
  toolNames: string[];
  /** The schema asked for through `response_format` (OpenAI) or `output_config.format` (Anthropic). */
  jsonSchema: Record<string, unknown> | null;
  /** The role from the `[steward:<role>]` marker, if present. */
  role: ModelRole | undefined;
}

/** A native tool call in a reply: OpenAI `tool_calls` (arguments as a JSON string) or Anthropic `tool_use`. */
export interface FakeToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * Token usage a reply reports. `input` counts every prompt token; `cached` of them were read from the provider's
 * prompt cache and (Anthropic only) `cacheWrite` written to it. Each API reports them its own way: OpenAI's
 * `prompt_tokens` includes `prompt_tokens_details.cached_tokens`; Anthropic's `input_tokens` leaves out
 * `cache_read_input_tokens` and `cache_creation_input_tokens`.
 */
export interface FakeUsage {
  input: number;
  output: number;
  cached?: number;
  cacheWrite?: number;
}

/**
 * What the fake answers: text, optionally with native tool calls (delayed, with usage overridden or left out), an
 * HTTP error, or no answer at all (`hang`; with `afterHeaders` the status line is sent and the body never comes).
 * To a streaming request, text goes in `chunks` (joined, they must equal `text`; default one chunk), with
 * `chunkDelayMs` before each chunk after the first, `beforeChunk(i)` awaited before chunk i, and `cut` stops the
 * stream after that many chunks.
 */
export type FakeReply =
  | string
  | {
      text: string;
      toolCalls?: FakeToolCall[];
      delayMs?: number;
      usage?: false | FakeUsage;
      stopReason?: string;
      chunks?: string[];
      chunkDelayMs?: number;
      cut?: StreamShape['cut'];
      beforeChunk?: StreamShape['beforeChunk'];
    }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { hang: true; afterHeaders?: boolean };

/** Decides the reply to each request. */
export type FakeLlmScript = (req: RecordedRequest) => FakeReply | Promise<FakeReply>;

/** A running fake. */
export interface FakeLlm {
  /** For the OpenAI SDK: ends with `/v1`. */
  baseURL: string;
  /** For the Anthropic SDK, which adds `/v1` itself. */
  anthropicBaseURL: string;
  requests: RecordedRequest[];
  /** Script and protocol mistakes, one sentence each; a clean test ends with none. */
  failures: string[];
  /** Every piece of streamed text, as it was written to its connection. */
  written: WrittenChunk[];
  setScript(script: FakeLlmScript): void;
  /**
   * How `GET /v1/models` (Steward's check at start) is answered: by default an empty list (as a server with no model
   * loaded answers, so Steward checks no name against it); `{ ids }` lists those models.
   */
  setModelList(reply: ModelListReply): void;
  /** How many times the model list was asked for. */
  modelListRequests(): number;
  /** Forgets recorded requests and failures (between tests sharing one fake). */
  reset(): void;
  close(): Promise<void>;
}

const ROLES: readonly ModelRole[] = ['planner', 'classifier', 'synthesizer', 'llm_step', 'butler'];
const ROUTES: Record<string, FakeApi> = { '/v1/chat/completions': 'openai', '/v1/messages': 'anthropic' };

/** The first line Steward puts in a system prompt for a role. */
export function roleMarker(role: ModelRole): string {
  return `[steward:${role}]`;
}

/** The role named by the request's `[steward:<role>]` marker, or undefined. */
export function requestRole(req: Pick<RecordedRequest, 'system'>): ModelRole | undefined {
  const name = /^\s*\[steward:([a-z_]+)\]/.exec(req.system)?.[1];
  return ROLES.find((r) => r === name);
}

/** Replies for one role: a queue used in order, or one reply or script used for every request. */
export type RoleReplies = FakeReply | FakeReply[] | FakeLlmScript;

/** A script that answers by role; a role with nothing (left) to say fails loudly. */
export function byRole(replies: Partial<Record<ModelRole, RoleReplies>>): FakeLlmScript {
  const queues = new Map<ModelRole, FakeReply[]>();
  const used = new Map<ModelRole, number>();
  for (const role of ROLES) {
    const r = replies[role];
    if (Array.isArray(r)) queues.set(role, [...r]);
  }
  return (req) => {
    const role = req.role;
    if (!role) throw new Error(`request #${req.index} has no [steward:<role>] marker in its system prompt`);
    const given = replies[role];
    if (given === undefined) throw new Error(`no reply scripted for role ${role} (request #${req.index})`);
    if (typeof given === 'function') return given(req);
    const queue = queues.get(role);
    if (!queue) return given as FakeReply;
    const next = queue.shift();
    const count = (used.get(role) ?? 0) + 1;
    used.set(role, count);
    if (next === undefined) throw new Error(`no scripted reply left for role ${role} (request ${count} for it)`);
    return next;
  };
}

/** Starts a fake on 127.0.0.1 at a free port. Without a script every request fails loudly. */
export async function startFakeLlm(script?: FakeLlmScript): Promise<FakeLlm> {
  let current: FakeLlmScript =
    script ??
    (() => {
      throw new Error('no script set');
    });
  const requests: RecordedRequest[] = [];
  const failures: string[] = [];
  const written: WrittenChunk[] = [];
  const fail = (res: ServerResponse, api: FakeApi, message: string) => {
    failures.push(message);
    send(res, 500, errorBody(api, 500, `fake-llm: ${message}`), { 'x-should-retry': 'false' });
  };

  let modelList: ModelListReply = 'list';
  let modelListCount = 0;
  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => fail(res, 'openai', `handler crashed: ${String(err)}`));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const api = ROUTES[path];
    const raw = await readBody(req);
    if (req.method === 'GET' && path === '/v1/models') {
      modelListCount++;
      return answerModelList(res, modelList);
    }
    if (req.method !== 'POST' || !api) return fail(res, 'openai', `unexpected ${req.method} ${path}`);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return fail(res, api, `body of ${path} is not JSON`);
    }
    const recorded = record(requests.length, api, req, path, body);
    requests.push(recorded);
    let reply: FakeReply;
    try {
      reply = await current(recorded);
    } catch (err) {
      return fail(res, api, err instanceof Error ? err.message : String(err));
    }
    const r = typeof reply === 'string' ? { text: reply } : reply;
    if (body['stream'] === true && 'text' in r) {
      const chunks = r.chunks ?? [r.text];
      if (chunks.join('') !== r.text) return fail(res, api, `request #${recorded.index}: chunks do not add up to text`);
      const usage = r.usage === false ? null : (r.usage ?? { input: countInput(recorded), output: tokens(r.text) });
      const includeUsage = dig(body, ['stream_options', 'include_usage']) === true;
      const target = { api, index: recorded.index, model: recorded.model, includeUsage };
      if (r.delayMs) await new Promise((resolve) => setTimeout(resolve, r.delayMs));
      const shape = {
        chunks,
        chunkDelayMs: r.chunkDelayMs ?? 0,
        beforeChunk: r.beforeChunk,
        ...(r.cut && { cut: r.cut }),
      };
      return writeStream(res, target, shape, { usage, ...(r.stopReason && { stopReason: r.stopReason }) }, written);
    }
    await answer(res, recorded, reply);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    anthropicBaseURL: `http://127.0.0.1:${port}`,
    requests,
    failures,
    written,
    setScript: (next) => {
      current = next;
    },
    setModelList: (reply) => {
      modelList = reply;
    },
    modelListRequests: () => modelListCount,
    reset: () => {
      requests.length = 0;
      failures.length = 0;
      written.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging requests hold their sockets open; cut them so close() settles.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// One body that both SDKs read as a page of models (OpenAI's `data`; Anthropic's `data` with its paging fields).
/** How the fake answers `GET /v1/models`. */
type ModelListReply = 'list' | { ids: string[] } | { status: number } | { hang: true };

function answerModelList(res: ServerResponse, reply: ModelListReply): void {
  if (reply === 'list' || 'ids' in reply) {
    // Both SDKs read this shape: OpenAI's `data` of `{ id }`, Anthropic's page with `has_more` and its ids.
    const ids = reply === 'list' ? [] : reply.ids;
    const data = ids.map((id) => ({
      id,
      object: 'model',
      type: 'model',
      created: 0,
      owned_by: 'fake',
      display_name: id,
    }));
    return send(res, 200, {
      object: 'list',
      data,
      has_more: false,
      first_id: ids[0] ?? null,
      last_id: ids.at(-1) ?? null,
    });
  }
  if ('status' in reply)
    return send(res, reply.status, errorBody('openai', reply.status, `fake error ${reply.status}`));
}

async function answer(res: ServerResponse, req: RecordedRequest, reply: FakeReply): Promise<void> {
  const r = typeof reply === 'string' ? { text: reply } : reply;
  if ('hang' in r) {
    if (r.afterHeaders) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
    }
    return;
  }
  if ('status' in r) {
    return send(res, r.status, r.body ?? errorBody(req.api, r.status, `fake error ${r.status}`), r.headers);
  }
  if (r.delayMs) {
    await new Promise((resolve) => setTimeout(resolve, r.delayMs));
    if (res.destroyed) return;
  }
  const calls = r.toolCalls ?? [];
  const written = r.text + calls.map((c) => c.name + JSON.stringify(c.args)).join('');
  const usage = r.usage === false ? null : (r.usage ?? { input: countInput(req), output: tokens(written) });
  const toBody = req.api === 'openai' ? openAiBody : anthropicBody;
  send(res, 200, toBody(req, { text: r.text, calls, usage, stopReason: r.stopReason }));
}

type Usage = FakeUsage | null;
interface ReplyParts {
  text: string;
  calls: FakeToolCall[];
  usage: Usage;
  stopReason: string | undefined;
}

function openAiBody(req: RecordedRequest, { text, calls, usage, stopReason }: ReplyParts): unknown {
  const toolCalls = calls.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.args) },
  }));
  // As the API does: content is null when the model only calls tools.
  const message = calls.length
    ? { role: 'assistant', content: text || null, refusal: null, tool_calls: toolCalls }
    : { role: 'assistant', content: text, refusal: null };
  return {
    id: `chatcmpl-fake-${req.index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: req.model,
    choices: [
      { index: 0, message, finish_reason: stopReason ?? (calls.length ? 'tool_calls' : 'stop'), logprobs: null },
    ],
    ...(usage && {
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
        ...(usage.cached !== undefined && { prompt_tokens_details: { cached_tokens: usage.cached, audio_tokens: 0 } }),
      },
    }),
  };
}

function anthropicBody(req: RecordedRequest, { text, calls, usage, stopReason }: ReplyParts): unknown {
  const uses = calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args }));
  return {
    id: `msg_fake_${req.index}`,
    type: 'message',
    role: 'assistant',
    model: req.model,
    content: [...(text ? [{ type: 'text', text, citations: null }] : []), ...uses],
    stop_reason: stopReason ?? (calls.length ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    ...(usage && {
      usage: {
        input_tokens: usage.input - (usage.cached ?? 0) - (usage.cacheWrite ?? 0),
        output_tokens: usage.output,
        cache_creation_input_tokens: usage.cacheWrite ?? null,
        cache_read_input_tokens: usage.cached ?? null,
      },
    }),
  };
}

function errorBody(api: FakeApi, status: number, message: string): unknown {
  return api === 'openai'
    ? { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } }
    : { type: 'error', error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', message } };
}

function record(
  index: number,
  api: FakeApi,
  req: IncomingMessage,
  path: string,
  body: Record<string, unknown>,
): RecordedRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  const messages = Array.isArray(body['messages']) ? (body['messages'] as Array<Record<string, unknown>>) : [];
  const systemMessages = messages.filter((m) => m['role'] === 'system' || m['role'] === 'developer');
  const system =
    api === 'anthropic' ? textOf(body['system']) : systemMessages.map((m) => textOf(m['content'])).join('\n');
  const lastUser = messages.filter((m) => m['role'] === 'user').at(-1);
  const tools = body['tools'];
  const schemaPath =
    api === 'openai' ? ['response_format', 'json_schema', 'schema'] : ['output_config', 'format', 'schema'];
  const schema = dig(body, schemaPath);
  const recorded: RecordedRequest = {
    index,
    api,
    method: req.method ?? 'POST',
    path,
    headers,
    body,
    model: typeof body['model'] === 'string' ? body['model'] : '',
    system,
    lastUserText: lastUser ? textOf(lastUser['content']) : '',
    toolsSent: Array.isArray(tools) ? tools.length > 0 : tools !== undefined && tools !== null,
    toolNames: Array.isArray(tools) ? tools.map((t) => String(dig(t, ['function', 'name']) ?? dig(t, ['name']))) : [],
    jsonSchema: schema && typeof schema === 'object' ? (schema as Record<string, unknown>) : null,
    role: undefined,
  };
  recorded.role = requestRole(recorded);
  return recorded;
}

/** Token count as the fake reports it: a quarter of the characters, rounded up. */
export function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

// Tool definitions and earlier tool calls are input too, as the real APIs count them.
function countInput(req: RecordedRequest): number {
  const messages = Array.isArray(req.body['messages']) ? (req.body['messages'] as Array<Record<string, unknown>>) : [];
  const texts = messages.map((m) => textOf(m['content']) + (m['tool_calls'] ? JSON.stringify(m['tool_calls']) : ''));
  if (req.api === 'anthropic') texts.push(req.system);
  if (req.toolsSent) texts.push(JSON.stringify(req.body['tools']));
  return tokens(texts.join(''));
}

// Content is a string or a list of blocks/parts with `text`, in both APIs.
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const textOfPart = (part: unknown) =>
    part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string'
      ? (part as { text: string }).text
      : '';
  return content.map(textOfPart).join('');
}

function dig(value: unknown, keys: string[]): unknown {
  let v = value;
  for (const k of keys) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
