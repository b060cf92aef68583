/**
 * Streamed answers of the fake model server, in the wire format each real SDK parses: OpenAI's Chat Completions
 * chunks (`data: {…}` lines ending with `data: [DONE]`, usage in a last chunk with no choices when
 * `stream_options.include_usage` asks for it) and Anthropic's Messages events (`event: <type>` + `data: {…}`:
 * message_start, content_block_start, ping, content_block_delta, content_block_stop, message_delta, message_stop).
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FakeApi } from './fake-llm-server.ts';

/** How a streamed answer is sent: its pieces, the pause before each piece after the first, and where it is cut. */
export interface StreamShape {
  chunks: string[];
  chunkDelayMs: number;
  /**
   * Stop after this many pieces: `drop` destroys the connection, `end` ends the body cleanly without the final
   * events, `error` sends the API's error event (then ends).
   */
  cut?: { after: number; how: 'drop' | 'end' | 'error' };
  /** Awaited before piece `i` is sent: a test holds the stream until a fact it waits on is true. */
  beforeChunk?: (i: number) => Promise<void>;
}

/** One piece of text written to a stream, with when (performance.now()) it was flushed. */
export interface WrittenChunk {
  request: number;
  chunk: number;
  text: string;
  at: number;
}

interface StreamTarget {
  api: FakeApi;
  index: number;
  model: string;
  includeUsage: boolean;
}

/** Writes a whole streamed answer (or a cut one) to `res`, logging each piece as it goes. */
/** Usage a stream reports at its end; `cached` and `cacheWrite` as in the fake's `FakeUsage`, reported as each API does. */
export interface StreamUsage {
  input: number;
  output: number;
  cached?: number;
  cacheWrite?: number;
}

export async function writeStream(
  res: ServerResponse,
  target: StreamTarget,
  shape: StreamShape,
  finish: { usage: StreamUsage | null; stopReason?: string },
  log: WrittenChunk[],
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const frame = target.api === 'openai' ? openAiFrames(target, finish) : anthropicFrames(target, finish);
  res.write(frame.start());
  for (const [i, text] of shape.chunks.entries()) {
    if (shape.cut && i >= shape.cut.after) return cutOff(res, shape.cut.how, frame.error());
    if (i > 0 && shape.chunkDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, shape.chunkDelayMs));
    await shape.beforeChunk?.(i);
    if (res.destroyed) return;
    res.write(frame.delta(text));
    log.push({ request: target.index, chunk: i, text, at: performance.now() });
  }
  if (shape.cut && shape.cut.after >= shape.chunks.length) return cutOff(res, shape.cut.how, frame.error());
  res.end(frame.end());
}

function cutOff(res: ServerResponse, how: 'drop' | 'end' | 'error', errorFrame: string): void {
  // Destroyed once what was written is on its way, so the client sees the pieces and then the connection drop.
  if (how === 'drop') res.write('', () => res.destroy());
  else if (how === 'end') res.end();
  else res.end(errorFrame);
}

interface Frames {
  start(): string;
  delta(text: string): string;
  end(): string;
  error(): string;
}

function openAiFrames(t: StreamTarget, finish: { usage: StreamUsage | null; stopReason?: string }): Frames {
  const base = { id: `chatcmpl-fake-${t.index}`, object: 'chat.completion.chunk', created: 0, model: t.model };
  const data = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;
  const choice = (delta: object, finishReason: string | null) => ({
    index: 0,
    delta,
    finish_reason: finishReason,
    logprobs: null,
  });
  return {
    start: () => data({ ...base, choices: [choice({ role: 'assistant', content: '', refusal: null }, null)] }),
    delta: (text) => data({ ...base, choices: [choice({ content: text }, null)] }),
    end: () => {
      let out = data({ ...base, choices: [choice({}, finish.stopReason ?? 'stop')] });
      const u = finish.usage;
      if (t.includeUsage && u) {
        const usage = {
          prompt_tokens: u.input,
          completion_tokens: u.output,
          total_tokens: u.input + u.output,
          ...(u.cached !== undefined && { prompt_tokens_details: { cached_tokens: u.cached, audio_tokens: 0 } }),
        };
        out += data({ ...base, choices: [], usage });
      }
      return `${out}data: [DONE]\n\n`;
    },
    error: () =>
      data({ error: { message: 'fake-llm: stream failed midway', type: 'server_error', param: null, code: null } }),
  };
}

function anthropicFrames(t: StreamTarget, finish: { usage: StreamUsage | null; stopReason?: string }): Frames {
  const event = (type: string, body: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
  const u = finish.usage;
  const startUsage = u && {
    input_tokens: u.input - (u.cached ?? 0) - (u.cacheWrite ?? 0),
    output_tokens: 1,
    cache_creation_input_tokens: u.cacheWrite ?? null,
    cache_read_input_tokens: u.cached ?? null,
  };
  const message = {
    id: `msg_fake_${t.index}`,
    type: 'message',
    role: 'assistant',
    model: t.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
  };
  return {
    start: () =>
      event('message_start', { message: { ...message, ...(startUsage && { usage: startUsage }) } }) +
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '', citations: null } }) +
      event('ping', {}),
    delta: (text) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    end: () =>
      event('content_block_stop', { index: 0 }) +
      event('message_delta', {
        delta: { stop_reason: finish.stopReason ?? 'end_turn', stop_sequence: null },
        ...(u && { usage: { output_tokens: u.output } }),
      }) +
      event('message_stop', {}),
    error: () => event('error', { error: { type: 'overloaded_error', message: 'fake-llm: stream failed midway' } }),
  };
}
