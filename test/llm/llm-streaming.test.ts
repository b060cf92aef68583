import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LlmClient, LlmRequest } from '../../src/engine/ports.ts';
import { AnthropicLlmClient } from '../../src/llm/anthropic-llm.ts';
import { OpenAiLlmClient } from '../../src/llm/openai-llm.ts';
import { startFakeLlm, tokens, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { stewardError } from '../helpers/steward-error.ts';
import { waitUntil } from '../helpers/wait.ts';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

const KEY = 'sk-stream-canary';
const clients: Record<'openai' | 'anthropic', (timeoutMs?: number) => LlmClient> = {
  openai: (timeoutMs) =>
    new OpenAiLlmClient({
      apiKey: KEY,
      baseURL: fake.baseURL,
      model: 'gpt-test',
      maxRetries: 0,
      ...(timeoutMs && { timeoutMs }),
    }),
  anthropic: (timeoutMs) =>
    new AnthropicLlmClient({
      apiKey: KEY,
      baseURL: fake.anthropicBaseURL,
      model: 'claude-test',
      maxRetries: 0,
      ...(timeoutMs && { timeoutMs }),
    }),
};

function request(pieces: string[], overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    role: 'synthesizer',
    system: '[steward:synthesizer]\nYou report.',
    messages: [{ role: 'user', content: 'How did it go?' }],
    onText: (delta) => pieces.push(delta),
    ...overrides,
  };
}

const CHUNKS = ['All ', 'three ', 'steps ', 'succeeded.'];
const TEXT = CHUNKS.join('');

describe.each(['openai', 'anthropic'] as const)('streaming through the real %s SDK and the fake', (api) => {
  it('hands on each piece in order and resolves to the same response as a plain call', async () => {
    fake.setScript(() => ({ text: TEXT, chunks: CHUNKS, usage: { input: 40, output: 7 } }));
    const pieces: string[] = [];
    const streamed = await clients[api]().complete(request(pieces));
    const plain = await clients[api]().complete(request([], { onText: undefined }));

    expect(pieces).toEqual(CHUNKS);
    expect(streamed).toEqual(plain);
    expect(streamed).toEqual({
      text: TEXT,
      model: fake.requests[0]?.model,
      usage: { inputTokens: 40, outputTokens: 7 },
    });
    expect(fake.requests[0]?.body['stream']).toBe(true);
    expect(fake.requests[1]?.body['stream']).toBeUndefined();
    if (api === 'openai') expect(fake.requests[0]?.body['stream_options']).toEqual({ include_usage: true });
    expect(fake.failures).toEqual([]);
  });

  it('shows the first words while the model is still writing', async () => {
    fake.setScript(() => ({ text: TEXT, chunks: CHUNKS, chunkDelayMs: 150 }));
    let firstAt = 0;
    const done = clients[api]().complete(request([], { onText: () => (firstAt ||= performance.now()) }));
    await waitUntil('the first piece to arrive', () => firstAt > 0);
    expect(fake.written.length).toBeLessThan(CHUNKS.length);
    await done;
    expect(firstAt).toBeLessThan(fake.written.at(-1)?.at ?? 0);
  });

  it('says the answer was cut at its output cap', async () => {
    const stop = api === 'openai' ? 'length' : 'max_tokens';
    fake.setScript(() => ({ text: 'All three', chunks: ['All ', 'three'], stopReason: stop }));
    const response = await clients[api]().complete(request([]));
    expect(response).toMatchObject({ text: 'All three', truncated: true });
  });

  it.each(['drop', 'end', 'error'] as const)('fails as llm_failed when the stream is cut midway (%s)', async (how) => {
    fake.setScript(() => ({ text: TEXT, chunks: CHUNKS, cut: { after: 2, how } }));
    const pieces: string[] = [];
    const err = await stewardError(clients[api]().complete(request(pieces)));
    expect(err.code).toBe('llm_failed');
    expect(err.message).toMatch(/stopped sending before its answer ended/);
    expect(err.retryable).toBe(true);
    expect(err.message).not.toContain(KEY);
    expect(pieces).toEqual(CHUNKS.slice(0, 2));
    const why = { drop: 'the connection was closed', end: 'without a', error: 'fake-llm: stream failed midway' }[how];
    expect(err.message).toContain(why);
  });

  it('gives up a stream that goes quiet, as timed out, long before the whole deadline', async () => {
    fake.setScript(() => ({ text: TEXT, chunks: CHUNKS, chunkDelayMs: 5_000 }));
    const started = performance.now();
    const err = await stewardError(clients[api](300).complete(request([])));
    expect(err.message).toMatch(/timed out/);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('stops at once when the caller aborts mid-stream', async () => {
    fake.setScript(() => ({ text: TEXT, chunks: CHUNKS, chunkDelayMs: 5_000 }));
    const controller = new AbortController();
    const pieces: string[] = [];
    const call = stewardError(clients[api]().complete(request(pieces, { signal: controller.signal })));
    await waitUntil('the first piece', () => pieces.length > 0);
    controller.abort();
    expect((await call).message).toMatch(/was cancelled/);
  });

  it('keeps the call alive when the display throws', async () => {
    fake.setScript(() => ({ text: TEXT, chunks: CHUNKS }));
    const response = await clients[api]().complete(
      request([], {
        onText: () => {
          throw new Error('display broke');
        },
      }),
    );
    expect(response.text).toBe(TEXT);
  });
});

describe('usage when the server leaves it out of the stream', () => {
  it('estimates about four characters a token rather than counting the call as free', async () => {
    fake.setScript(() => ({ text: TEXT, chunks: CHUNKS, usage: false }));
    const response = await clients.openai().complete(request([]));
    expect(response.usage.outputTokens).toBe(tokens(TEXT));
    expect(response.usage.inputTokens).toBeGreaterThan(0);
  });
});

// The fake's twin is the real API: the SDKs' own stream helpers (which check event order and build the final
// message themselves) must read the fake's streams as they would read the real ones.
describe("the SDKs' own stream helpers accept the fake's wire format", () => {
  it('OpenAI: chat.completions.stream builds the final completion with text, finish reason and usage', async () => {
    fake.setScript(() => ({ text: TEXT, chunks: CHUNKS, usage: { input: 11, output: 5 }, stopReason: 'length' }));
    const sdk = new OpenAI({ apiKey: KEY, baseURL: fake.baseURL, maxRetries: 0 });
    const stream = sdk.chat.completions.stream({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    stream.on('content', (delta) => deltas.push(delta));
    const final = await stream.finalChatCompletion();
    expect(deltas).toEqual(CHUNKS);
    expect(final.choices[0]?.message.content).toBe(TEXT);
    expect(final.choices[0]?.finish_reason).toBe('length');
    expect(final.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 5 });
  });

  it('Anthropic: messages.stream builds the final message with text, stop reason and usage', async () => {
    fake.setScript(() => ({ text: TEXT, chunks: CHUNKS, usage: { input: 11, output: 5 }, stopReason: 'max_tokens' }));
    const sdk = new Anthropic({ apiKey: KEY, baseURL: fake.anthropicBaseURL, maxRetries: 0 });
    const stream = sdk.messages.stream({
      model: 'claude-test',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const final = await stream.finalMessage();
    expect(deltas).toEqual(CHUNKS);
    expect(final.content).toEqual([{ type: 'text', text: TEXT, citations: null }]);
    expect(final.stop_reason).toBe('max_tokens');
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 5 });
  });
});
