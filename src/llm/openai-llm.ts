/**
 * `LlmClient` over the Chat Completions API, the one dialect that OpenAI and the compatible local servers
 * (Ollama, vLLM, LM Studio) all speak. Tools are sent only when the request offers some (the quick-answer loop, as
 * `tools` with its calls back as `tool_calls` and their results as `tool` messages); the planner writes JSON, code
 * runs it.
 */
import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import { readChatStream } from './openai-stream.ts';
import { cutDetail } from './stream-text.ts';
import type { LlmClient, LlmMessage, LlmRequest, LlmResponse, LlmToolCall } from '../engine/ports.ts';
import type { Json } from '../engine/types.ts';
import { startDeadline, type CallDeadline } from './call-deadline.ts';
import { toSchemaName, unwrapJsonFence, withSchemaInstruction } from './json-output.ts';
import {
  findErrorCode,
  hostOf,
  llmFailed,
  serverMessage,
  type LlmCallContext,
  type LlmFailure,
} from './llm-failure.ts';

/** How to reach one model on an OpenAI-compatible server. */
export interface OpenAiLlmOptions {
  apiKey: string;
  /** Defaults to OpenAI itself; Ollama is `http://localhost:11434/v1`. Environment variables are not consulted. */
  baseURL?: string;
  model: string;
  /**
   * Per attempt, until the answer starts; the whole call, retries included, gets `(maxRetries + 1)` times this.
   * Default 120 s.
   */
  timeoutMs?: number;
  /** Retries the SDK makes after connection errors, timeouts, 408, 409, 429 and 5xx. Default 2. */
  maxRetries?: number;
  /**
   * `native` sends `response_format: json_schema`; `prompt` states the schema in the system prompt instead,
   * for servers without it. Default `native`.
   */
  structuredOutput?: 'native' | 'prompt';
  /**
   * The field that carries the output cap. `max_completion_tokens` (default) is OpenAI's, and the only one its
   * reasoning models take; some compatible servers (Ollama's at the time of writing) read only `max_tokens` and
   * silently ignore the other, leaving the answer unbounded.
   */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
}

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** Calls one model through Chat Completions; failures become `StewardError('llm_failed')`. */
export class OpenAiLlmClient implements LlmClient {
  private readonly client: OpenAI;
  private readonly context: LlmCallContext;
  private readonly maxRetries: number;
  private readonly structuredOutput: 'native' | 'prompt';
  private readonly maxTokensField: 'max_completion_tokens' | 'max_tokens';

  constructor(options: OpenAiLlmOptions) {
    const baseURL = options.baseURL ?? DEFAULT_BASE_URL;
    const timeoutMs = options.timeoutMs ?? 120_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.structuredOutput = options.structuredOutput ?? 'native';
    this.maxTokensField = options.maxTokensField ?? 'max_completion_tokens';
    const { apiKey, model } = options;
    this.context = { provider: 'the OpenAI-compatible server', baseURL, model, apiKey, timeoutMs };
    // organization/project are pinned to null so stray OPENAI_* variables cannot add headers Steward never configured.
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL,
      organization: null,
      project: null,
      timeout: timeoutMs,
      maxRetries: this.maxRetries,
    });
  }

  /** Sends the system prompt and messages, and returns the answer's text with token usage. */
  async complete(request: LlmRequest): Promise<LlmResponse> {
    const deadline = startDeadline(this.context.timeoutMs * (this.maxRetries + 1), request.signal);
    let completion: ChatCompletion;
    let midStream = false;
    try {
      // Tool calls are read from a whole answer: a request that offers tools is not streamed.
      if (request.onText && !request.tools?.length) {
        const params = { ...this.toParams(request), stream: true as const, stream_options: { include_usage: true } };
        const chunks = await this.client.chat.completions.create(params, { signal: deadline.signal });
        midStream = true;
        completion = await readChatStream(chunks, request, deadline, this.context.timeoutMs);
      } else {
        completion = await this.client.chat.completions.create(this.toParams(request), { signal: deadline.signal });
      }
    } catch (err) {
      throw llmFailed(classify(err, deadline, midStream), this.context, err);
    } finally {
      deadline.dispose();
    }
    return this.fromCompletion(completion, request);
  }

  /**
   * A cheap call that spends no tokens (the model list), once and within `timeoutMs`: resolves when the server
   * answers with the key accepted, else throws the same `llm_failed` error a real call would. Resolves to a note when
   * the server lists models and this one is not among them (every request for it would fail).
   */
  async probe(timeoutMs: number): Promise<string | undefined> {
    const deadline = startDeadline(timeoutMs);
    try {
      const page = await this.client.models.list({ signal: deadline.signal, timeout: timeoutMs, maxRetries: 0 });
      return missingModelNote(
        this.context,
        page.data.map((m) => m.id),
      );
    } catch (err) {
      throw llmFailed(classify(err, deadline, false), { ...this.context, timeoutMs }, err);
    } finally {
      deadline.dispose();
    }
  }

  private toParams(request: LlmRequest): ChatCompletionCreateParamsNonStreaming {
    const native = this.structuredOutput === 'native';
    const system =
      request.jsonSchema && !native ? withSchemaInstruction(request.system, request.jsonSchema) : request.system;
    const messages: ChatCompletionMessageParam[] = system ? [{ role: 'system', content: system }] : [];
    for (const m of request.messages) messages.push(toChatMessage(m));
    const params: ChatCompletionCreateParamsNonStreaming = { model: this.context.model, messages };
    if (request.tools?.length) {
      params.tools = request.tools.map((t) => ({
        type: 'function' as const,
        function: { name: t.name, description: t.description, parameters: t.inputSchema },
      }));
    }
    // Never both: OpenAI refuses a request that sets max_tokens and max_completion_tokens together.
    if (request.maxOutputTokens !== undefined) params[this.maxTokensField] = request.maxOutputTokens;
    if (request.jsonSchema && native) {
      // strict: false because compatible servers differ in what strict schemas they take; the engine validates anyway.
      params.response_format = {
        type: 'json_schema',
        json_schema: { name: toSchemaName(request.jsonSchema.name), schema: request.jsonSchema.schema, strict: false },
      };
    }
    return params;
  }

  private fromCompletion(completion: ChatCompletion, request: LlmRequest): LlmResponse {
    // A wrong base URL can return a 200 with an HTML page, which the SDK hands back as a string.
    if (typeof completion !== 'object' || completion === null || !Array.isArray(completion.choices)) {
      throw llmFailed({ kind: 'malformed' }, this.context);
    }
    const choice = completion.choices[0];
    const refusal = choice?.message?.refusal;
    if (refusal) throw llmFailed({ kind: 'refused', detail: refusal }, this.context);
    const text = choice?.message?.content ?? '';
    const toolCalls = fromToolCalls(choice?.message?.tool_calls, this.context);
    if (!text.trim() && toolCalls.length === 0) {
      throw llmFailed({ kind: 'empty', reason: choice?.finish_reason ?? undefined }, this.context);
    }
    // OpenAI caches long identical prompt prefixes by itself; the tokens it read from the cache are part of
    // prompt_tokens already, and compatible servers that do not cache leave the details out.
    const cached = completion.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    return {
      text: request.jsonSchema ? unwrapJsonFence(text) : text,
      model: completion.model || this.context.model,
      usage: {
        inputTokens: completion.usage?.prompt_tokens ?? 0,
        outputTokens: completion.usage?.completion_tokens ?? 0,
        ...(cached > 0 && { cachedInputTokens: cached }),
      },
      ...(choice?.finish_reason === 'length' && { truncated: true }),
      ...(toolCalls.length > 0 && { toolCalls }),
    };
  }
}

/** One engine message as Chat Completions takes it: an assistant turn's calls as `tool_calls`, a result as `tool`. */
function toChatMessage(m: LlmMessage): ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  if ('toolCalls' in m) {
    const calls = m.toolCalls.map((c) => ({
      id: c.id,
      type: 'function' as const,
      function: { name: c.name, arguments: JSON.stringify(c.args) },
    }));
    return { role: 'assistant', content: m.content || null, tool_calls: calls };
  }
  if (m.role === 'user' && m.images?.length) {
    // Each image follows its label, as a data URL (Chat Completions' image_url part).
    const images = m.images.flatMap((i) => [
      { type: 'text' as const, text: i.label },
      { type: 'image_url' as const, image_url: { url: `data:${i.mimeType};base64,${i.data}` } },
    ]);
    return { role: 'user', content: [{ type: 'text', text: m.content }, ...images] };
  }
  return { role: m.role, content: m.content };
}

/** The answer's function calls; arguments that are not a JSON object make the answer malformed. */
function fromToolCalls(calls: ChatCompletionMessageToolCall[] | undefined, context: LlmCallContext): LlmToolCall[] {
  const out: LlmToolCall[] = [];
  for (const c of calls ?? []) {
    if (c.type !== 'function') continue;
    let args: unknown;
    try {
      args = c.function.arguments.trim() === '' ? {} : JSON.parse(c.function.arguments);
    } catch {
      throw llmFailed({ kind: 'malformed' }, context);
    }
    if (!args || typeof args !== 'object' || Array.isArray(args)) throw llmFailed({ kind: 'malformed' }, context);
    out.push({ id: c.id, name: c.function.name, args: args as Record<string, Json> });
  }
  return out;
}

function classify(err: unknown, deadline: CallDeadline, midStream: boolean): LlmFailure {
  if (deadline.timedOut()) return { kind: 'timeout' };
  if (err instanceof OpenAI.APIUserAbortError || deadline.signal.aborted) return { kind: 'cancelled' };
  // After the headers: a dropped connection, an error event, or an end without a finish reason.
  if (midStream) return streamFailure(err);
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { kind: 'timeout' };
  if (err instanceof OpenAI.APIConnectionError) return { kind: 'connection', code: findErrorCode(err.cause) };
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    return { kind: 'status', status: err.status, detail: serverMessage(err.error) };
  }
  return { kind: 'unknown', detail: err instanceof Error ? err.message : String(err) };
}

function streamFailure(err: unknown): LlmFailure {
  if (err instanceof OpenAI.APIError) return { kind: 'cut', detail: serverMessage(err.error) ?? err.message };
  return { kind: 'cut', detail: cutDetail(err) };
}

/**
 * A note when `ids` (a server's model list) lacks the model; none when it has it or lists nothing (a server with no
 * model loaded, or one that lists none). Ollama lists `llama3.1:latest` for what people name `llama3.1`.
 */
export function missingModelNote(context: LlmCallContext, ids: readonly string[]): string | undefined {
  const model = context.model;
  const bare = model.replace(/:latest$/, '');
  if (ids.length === 0 || ids.some((id) => id === model || id.replace(/:latest$/, '') === bare)) return undefined;
  const shown = ids.slice(0, 8).join(', ') + (ids.length > 8 ? `, and ${ids.length - 8} more` : '');
  return `is not among the models ${context.provider} at ${hostOf(context.baseURL)} lists (${shown}): requests for it will fail until the server has it, or another is named (STEWARD_MODEL, a STEWARD_MODEL_* variable or the model catalog).`;
}
