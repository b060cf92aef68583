/**
 * `LlmClient` over Anthropic's Messages API. Tools are sent only when the request offers some (the quick-answer loop:
 * `tools`, its calls back as `tool_use` blocks, their results as `tool_result` blocks). JSON answers use the native
 * `output_config.format` when the schema allows it (see anthropic-schema.ts), else an instruction in the system prompt.
 */
import Anthropic from '@anthropic-ai/sdk';
import type {
  MessageCreateParamsNonStreaming,
  MessageParam,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { readMessageStream, type MessageParts } from './anthropic-stream.ts';
import { cutDetail } from './stream-text.ts';
import type { LlmClient, LlmMessage, LlmRequest, LlmResponse, LlmToolCall } from '../engine/ports.ts';
import type { Json } from '../engine/types.ts';
import { systemBlocks } from './anthropic-cache.ts';
import { toAnthropicOutputFormat } from './anthropic-schema.ts';
import { startDeadline, type CallDeadline } from './call-deadline.ts';
import { unwrapJsonFence, withSchemaInstruction } from './json-output.ts';
import { findErrorCode, llmFailed, serverMessage, type LlmCallContext, type LlmFailure } from './llm-failure.ts';

/** How to reach one Claude model. */
export interface AnthropicLlmOptions {
  apiKey: string;
  /** Defaults to Anthropic itself (no `/v1`: the SDK adds it). Environment variables are not consulted. */
  baseURL?: string;
  model: string;
  /**
   * Per attempt, until the answer starts; the whole call, retries included, gets `(maxRetries + 1)` times this.
   * Default 120 s.
   */
  timeoutMs?: number;
  /** Retries the SDK makes after connection errors, timeouts, 408, 409, 429 and 5xx. Default 2. */
  maxRetries?: number;
  /** `max_tokens` when the request names none; the Messages API requires one. Default 4096. */
  maxTokens?: number;
}

const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** Calls one Claude model; failures become `StewardError('llm_failed')`. */
export class AnthropicLlmClient implements LlmClient {
  private readonly client: Anthropic;
  private readonly context: LlmCallContext;
  private readonly maxRetries: number;
  private readonly maxTokens: number;

  constructor(options: AnthropicLlmOptions) {
    const baseURL = options.baseURL ?? DEFAULT_BASE_URL;
    const timeoutMs = options.timeoutMs ?? 120_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.maxTokens = options.maxTokens ?? 4096;
    this.context = { provider: 'the Anthropic API', baseURL, model: options.model, apiKey: options.apiKey, timeoutMs };
    // Passing apiKey explicitly keeps the SDK off its credential chain (profiles, ANTHROPIC_AUTH_TOKEN).
    this.client = new Anthropic({ apiKey: options.apiKey, baseURL, timeout: timeoutMs, maxRetries: this.maxRetries });
  }

  /** Sends the system prompt and messages, and returns the answer's text with token usage. */
  async complete(request: LlmRequest): Promise<LlmResponse> {
    const deadline = startDeadline(this.context.timeoutMs * (this.maxRetries + 1), request.signal);
    let message: MessageParts;
    let midStream = false;
    try {
      // Tool calls are read from a whole answer: a request that offers tools is not streamed.
      if (request.onText && !request.tools?.length) {
        const events = await this.client.messages.create(
          { ...this.toParams(request), stream: true },
          { signal: deadline.signal },
        );
        midStream = true;
        message = await readMessageStream(events, request, deadline, this.context.timeoutMs);
      } else {
        message = await this.client.messages.create(this.toParams(request), { signal: deadline.signal });
      }
    } catch (err) {
      throw llmFailed(classify(err, deadline, midStream), this.context, err);
    } finally {
      deadline.dispose();
    }
    return this.fromMessage(message, request);
  }

  /**
   * A cheap call that spends no tokens (the model list), once and within `timeoutMs`: resolves when the API answers
   * with the key accepted, else throws the same `llm_failed` error a real call would.
   */
  async probe(timeoutMs: number): Promise<void> {
    const deadline = startDeadline(timeoutMs);
    try {
      await this.client.models.list({ limit: 1 }, { signal: deadline.signal, timeout: timeoutMs, maxRetries: 0 });
    } catch (err) {
      throw llmFailed(classify(err, deadline, false), { ...this.context, timeoutMs }, err);
    } finally {
      deadline.dispose();
    }
  }

  private toParams(request: LlmRequest): MessageCreateParamsNonStreaming {
    const format = request.jsonSchema ? toAnthropicOutputFormat(request.jsonSchema.schema) : null;
    const system =
      request.jsonSchema && !format ? withSchemaInstruction(request.system, request.jsonSchema) : request.system;
    const params: MessageCreateParamsNonStreaming = {
      model: this.context.model,
      max_tokens: request.maxOutputTokens ?? this.maxTokens,
      messages: toMessages(request.messages),
    };
    if (request.tools?.length) {
      params.tools = request.tools.map((t) => ({
        name: t.name,
        description: t.description,
        input_schema: { ...t.inputSchema, type: 'object' as const },
      }));
    }
    // The system prompt is the stable part of every request (the planner's instructions and tool catalog; the request
    // is in the messages), so it is marked for Anthropic's prompt cache: a repeat within minutes reads it at a tenth
    // of the price. Shorter than the model's minimum (1,024 tokens or more), it is simply not cached. A long one is
    // marked at line ends along the way too (anthropic-cache.ts), so a head shared with an earlier prompt is read
    // from the cache even when the catalogs differ further on.
    if (system)
      params.system = systemBlocks(system).map((b) => ({
        type: 'text' as const,
        text: b.text,
        ...(b.cache && { cache_control: { type: 'ephemeral' as const } }),
      }));
    if (format) params.output_config = { format };
    return params;
  }

  private fromMessage(message: MessageParts, request: LlmRequest): LlmResponse {
    if (typeof message !== 'object' || message === null || !Array.isArray(message.content)) {
      throw llmFailed({ kind: 'malformed' }, this.context);
    }
    if (message.stop_reason === 'refusal') throw llmFailed({ kind: 'refused' }, this.context);
    let text = '';
    const toolCalls: LlmToolCall[] = [];
    for (const block of message.content) {
      if (block.type === 'text') text += block.text;
      if (block.type === 'tool_use') toolCalls.push(fromToolUse(block, this.context));
    }
    if (!text.trim() && toolCalls.length === 0)
      throw llmFailed({ kind: 'empty', reason: message.stop_reason ?? undefined }, this.context);
    const usage = message.usage;
    const cached = usage?.cache_read_input_tokens ?? 0;
    return {
      text: request.jsonSchema ? unwrapJsonFence(text) : text,
      model: message.model || this.context.model,
      usage: {
        // input_tokens leaves out the prompt tokens written to the cache and those read from it; they were still
        // sent and read, and budgets count them all (cache writes are input too, billed a little higher).
        inputTokens: (usage?.input_tokens ?? 0) + (usage?.cache_creation_input_tokens ?? 0) + cached,
        outputTokens: usage?.output_tokens ?? 0,
        ...(cached > 0 && { cachedInputTokens: cached }),
      },
      // Both end the answer where it stood: at max_tokens, or at the end of the model's context window.
      ...((message.stop_reason === 'max_tokens' || message.stop_reason === 'model_context_window_exceeded') && {
        truncated: true,
      }),
      ...(toolCalls.length > 0 && { toolCalls }),
    };
  }
}

/**
 * Engine messages as the Messages API takes them: an assistant turn's calls as `tool_use` blocks, and the results
 * that follow it as `tool_result` blocks of one user message (the API wants them together, right after the calls).
 */
function toMessages(messages: readonly LlmMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  let results: ToolResultBlockParam[] | undefined;
  for (const m of messages) {
    if (m.role === 'tool') {
      const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: m.toolCallId, content: m.content };
      if (results) results.push(block);
      else {
        results = [block];
        out.push({ role: 'user', content: results });
      }
      continue;
    }
    results = undefined;
    if ('toolCalls' in m) {
      const uses = m.toolCalls.map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: c.args }));
      out.push({
        role: 'assistant',
        content: [...(m.content ? [{ type: 'text' as const, text: m.content }] : []), ...uses],
      });
    } else if (m.role === 'user' && m.images?.length) {
      // Each image follows its label, as a base64 image block (the Messages API reads PNG, JPEG, GIF and WebP).
      const images = m.images.flatMap((i) => [
        { type: 'text' as const, text: i.label },
        {
          type: 'image' as const,
          source: { type: 'base64' as const, media_type: imageType(i.mimeType), data: i.data },
        },
      ]);
      out.push({ role: 'user', content: [{ type: 'text', text: m.content }, ...images] });
    } else out.push({ role: m.role, content: m.content });
  }
  return out;
}

type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
// The engine sends only these types (report-images.ts); anything else would be refused by the API.
function imageType(mimeType: string): ImageType {
  return (['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const).find((t) => t === mimeType) ?? 'image/png';
}

/** A `tool_use` block as a call; input that is not an object makes the answer malformed. */
function fromToolUse(block: { id: string; name: string; input: unknown }, context: LlmCallContext): LlmToolCall {
  const input = block.input;
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw llmFailed({ kind: 'malformed' }, context);
  return { id: block.id, name: block.name, args: input as Record<string, Json> };
}

function classify(err: unknown, deadline: CallDeadline, midStream: boolean): LlmFailure {
  if (deadline.timedOut()) return { kind: 'timeout' };
  if (err instanceof Anthropic.APIUserAbortError || deadline.signal.aborted) return { kind: 'cancelled' };
  // After the headers: a dropped connection, an `error` event (e.g. overloaded), or an end without a stop reason.
  if (midStream) return streamFailure(err);
  if (err instanceof Anthropic.APIConnectionTimeoutError) return { kind: 'timeout' };
  if (err instanceof Anthropic.APIConnectionError) return { kind: 'connection', code: findErrorCode(err.cause) };
  if (err instanceof Anthropic.APIError && typeof err.status === 'number') {
    return { kind: 'status', status: err.status, detail: serverMessage(err.error) };
  }
  return { kind: 'unknown', detail: err instanceof Error ? err.message : String(err) };
}

function streamFailure(err: unknown): LlmFailure {
  if (err instanceof Anthropic.APIError) return { kind: 'cut', detail: serverMessage(err.error) ?? err.message };
  return { kind: 'cut', detail: cutDetail(err) };
}
