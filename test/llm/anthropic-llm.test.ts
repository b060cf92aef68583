import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/engine/ports.ts';
import { compactPlanJsonSchema } from '../../src/engine/plan/compact-schema.ts';
import { AnthropicLlmClient, type AnthropicLlmOptions } from '../../src/llm/anthropic-llm.ts';
import { startFakeLlm, tokens, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { stewardError } from '../helpers/steward-error.ts';

const CANARY_KEY = 'sk-ant-canary-123';
let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

function client(overrides: Partial<AnthropicLlmOptions> = {}): AnthropicLlmClient {
  return new AnthropicLlmClient({
    apiKey: CANARY_KEY,
    baseURL: fake.anthropicBaseURL,
    model: 'claude-test',
    maxRetries: 0,
    ...overrides,
  });
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    role: 'classifier',
    system: '[steward:classifier]\nClassify the reply.',
    messages: [{ role: 'user', content: 'yes, go ahead' }],
    ...overrides,
  };
}

describe('AnthropicLlmClient against the fake Messages API', () => {
  it('returns the text, sends system apart from the messages, max_tokens 4096 and no tools', async () => {
    fake.setScript(() => 'approve');
    const response = await client().complete(request());

    expect(response).toEqual({
      text: 'approve',
      model: 'claude-test',
      usage: { inputTokens: tokens('yes, go ahead' + '[steward:classifier]\nClassify the reply.'), outputTokens: 2 },
    });
    const sent = fake.requests[0];
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.system).toBe('[steward:classifier]\nClassify the reply.');
    expect(sent?.body['messages']).toEqual([{ role: 'user', content: 'yes, go ahead' }]);
    expect(sent?.body['max_tokens']).toBe(4096);
    expect(sent?.role).toBe('classifier');
    expect(sent?.toolsSent).toBe(false);
    expect(sent?.body).not.toHaveProperty('output_config');
    expect(fake.failures).toEqual([]);
  });

  it("sends a message's images as base64 image blocks, each after its label", async () => {
    fake.setScript(() => 'a logo');
    const images = [{ mimeType: 'image/png', data: 'iVBORw0KGgo=', label: 'Image 1, from step img: a.png' }];
    await client().complete(request({ role: 'synthesizer', messages: [{ role: 'user', content: 'Report', images }] }));
    expect(fake.requests[0]?.body['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Report' },
          { type: 'text', text: 'Image 1, from step img: a.png' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
    ]);
  });

  it('uses maxOutputTokens for max_tokens and maps input_tokens and output_tokens', async () => {
    fake.setScript(() => ({ text: 'ok', usage: { input: 10, output: 3 } }));
    const response = await client().complete(request({ maxOutputTokens: 77 }));
    expect(fake.requests[0]?.body['max_tokens']).toBe(77);
    expect(response.usage).toEqual({ inputTokens: 10, outputTokens: 3 });
  });

  it('marks the system prompt for the prompt cache, and the messages after it not', async () => {
    fake.setScript(() => 'ok');
    await client().complete(request({ messages: [{ role: 'user', content: 'Request:\nlist the files' }] }));
    const sent = fake.requests[0];
    expect(sent?.body['system']).toEqual([
      { type: 'text', text: '[steward:classifier]\nClassify the reply.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(sent?.body['messages']).toEqual([{ role: 'user', content: 'Request:\nlist the files' }]);
  });

  it('counts prompt tokens read from the cache and written to it as input, and says how many were read', async () => {
    // Anthropic's input_tokens leaves both out: here 100 sent = 10 uncached + 60 read + 30 written.
    fake.setScript(() => ({ text: 'ok', usage: { input: 100, output: 3, cached: 60, cacheWrite: 30 } }));
    const response = await client().complete(request());
    expect(response.usage).toEqual({ inputTokens: 100, outputTokens: 3, cachedInputTokens: 60 });
  });

  it("marks an answer cut at max_tokens (or at the context window's end) as truncated, and a finished one not", async () => {
    for (const stopReason of ['max_tokens', 'model_context_window_exceeded']) {
      fake.setScript(() => ({ text: '{"summary": "a plan that goes on', stopReason }));
      expect((await client().complete(request({ maxOutputTokens: 8 }))).truncated).toBe(true);
    }
    fake.setScript(() => 'done');
    expect((await client().complete(request())).truncated).toBeUndefined();
  });

  it('asks for a closed schema natively through output_config.format', async () => {
    const schema = {
      type: 'object',
      properties: { action: { type: 'string', enum: ['approve', 'reject'] }, note: { type: 'string', maxLength: 200 } },
      required: ['action'],
      additionalProperties: false,
    };
    fake.setScript(() => '{"action":"approve"}');
    const response = await client().complete(request({ jsonSchema: { name: 'decision', schema } }));

    expect(response.text).toBe('{"action":"approve"}');
    const sent = fake.requests[0];
    expect(sent?.body['output_config']).toMatchObject({ format: { type: 'json_schema' } });
    expect(sent?.jsonSchema).toMatchObject({ properties: { action: { enum: ['approve', 'reject'] } } });
    // The SDK's transform moves constraints Anthropic does not enforce into the description.
    expect(JSON.stringify(sent?.jsonSchema)).not.toContain('"maxLength"');
    expect(sent?.system).toBe('[steward:classifier]\nClassify the reply.');
  });

  it('states the compact plan schema in the system prompt, since free-form args cannot be enforced natively', async () => {
    const schema = compactPlanJsonSchema();
    fake.setScript(() => '```json\n{"answer":"s"}\n```');
    const response = await client().complete(
      request({ role: 'planner', system: '[steward:planner]', jsonSchema: { name: 'plan', schema } }),
    );

    expect(response.text).toBe('{"answer":"s"}');
    const sent = fake.requests[0];
    expect(sent?.body).not.toHaveProperty('output_config');
    expect(sent?.role).toBe('planner');
    expect(sent?.system).toContain(JSON.stringify(schema));
  });

  it('turns a 401 into llm_failed that says the key was refused and never quotes the key', async () => {
    fake.setScript(() => ({
      status: 401,
      body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${CANARY_KEY}` } },
    }));
    const err = await stewardError(client().complete(request()));

    // SDK 1.14 sends the key as a bearer token.
    expect(fake.requests[0]?.headers['authorization']).toBe(`Bearer ${CANARY_KEY}`);
    expect(err.code).toBe('llm_failed');
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(
      `The Anthropic API at ${new URL(fake.anthropicBaseURL).host} refused the API key (HTTP 401).`,
    );
    expect(err.message).not.toContain(CANARY_KEY);
    expect(String((err.cause as Error).message)).not.toContain(CANARY_KEY);
  });

  it('is retried by the SDK after 529 overloaded, and fails retryable when retries run out', async () => {
    const overloaded = {
      status: 529,
      body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    };
    let calls = 0;
    fake.setScript(() => (++calls === 1 ? overloaded : 'fine'));
    expect((await client({ maxRetries: 1 }).complete(request())).text).toBe('fine');
    expect(fake.requests).toHaveLength(2);

    fake.setScript(() => overloaded);
    const err = await stewardError(client().complete(request()));
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('(HTTP 529): Overloaded');
  });

  it('reports a refusal as llm_failed, not retryable', async () => {
    fake.setScript(() => ({ text: '', stopReason: 'refusal' }));
    const err = await stewardError(client().complete(request()));
    expect(err.retryable).toBe(false);
    expect(err.message).toBe('Model claude-test declined to answer.');
  });

  it('treats an answer with no text as llm_failed', async () => {
    fake.setScript(() => ({ text: '', stopReason: 'max_tokens' }));
    const err = await stewardError(client().complete(request()));
    expect(err.message).toBe('Model claude-test returned an empty answer (stop reason: max_tokens).');
  });

  it('times out a server that never answers: llm_failed, retryable', async () => {
    fake.setScript(() => ({ hang: true }));
    const err = await stewardError(client({ timeoutMs: 200 }).complete(request()));
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('Model claude-test at');
    expect(err.message).toContain('did not answer within 0.2 s');
  });
});
