import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/engine/ports.ts';
import { OpenAiLlmClient, type OpenAiLlmOptions } from '../../src/llm/openai-llm.ts';
import { startFakeLlm, tokens, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { freePort } from '../helpers/mcp-servers.ts';
import { stewardError } from '../helpers/steward-error.ts';

const CANARY_KEY = 'sk-canary-123';
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

function client(overrides: Partial<OpenAiLlmOptions> = {}): OpenAiLlmClient {
  return new OpenAiLlmClient({
    apiKey: CANARY_KEY,
    baseURL: fake.baseURL,
    model: 'gpt-test',
    maxRetries: 0,
    ...overrides,
  });
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    role: 'planner',
    system: '[steward:planner]\nYou plan.',
    messages: [{ role: 'user', content: 'List the files.' }],
    ...overrides,
  };
}

describe('OpenAiLlmClient against the fake Chat Completions server', () => {
  it('returns the reply text and sends the system prompt as a system message, without tools', async () => {
    fake.setScript(() => 'Here is the plan.');
    const response = await client().complete(request());

    expect(response.text).toBe('Here is the plan.');
    expect(response.model).toBe('gpt-test');
    const [sent] = fake.requests;
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.body['messages']).toEqual([
      { role: 'system', content: '[steward:planner]\nYou plan.' },
      { role: 'user', content: 'List the files.' },
    ]);
    expect(sent?.role).toBe('planner');
    expect(sent?.toolsSent).toBe(false);
    expect(sent?.body).not.toHaveProperty('tools');
    expect(sent?.body).not.toHaveProperty('response_format');
    expect(fake.failures).toEqual([]);
  });

  it('maps prompt_tokens and completion_tokens to usage', async () => {
    fake.setScript(() => 'four');
    const response = await client().complete(request());
    const expectedInput = tokens('[steward:planner]\nYou plan.' + 'List the files.');
    expect(response.usage).toEqual({ inputTokens: expectedInput, outputTokens: 1 });

    fake.setScript(() => ({ text: 'x', usage: { input: 1234, output: 56 } }));
    expect((await client().complete(request())).usage).toEqual({ inputTokens: 1234, outputTokens: 56 });
  });

  it('says how many prompt tokens the server read from its cache (part of prompt_tokens)', async () => {
    fake.setScript(() => ({ text: 'x', usage: { input: 1234, output: 56, cached: 1024 } }));
    expect((await client().complete(request())).usage).toEqual({
      inputTokens: 1234,
      outputTokens: 56,
      cachedInputTokens: 1024,
    });
  });

  it('reports zero usage when the server sends none (some local servers do not)', async () => {
    fake.setScript(() => ({ text: 'hello', usage: false }));
    expect((await client().complete(request())).usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('sends response_format json_schema (strict: false) when a schema is requested, and unwraps a fenced answer', async () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    fake.setScript(() => '```json\n{"ok": true}\n```');
    const response = await client().complete(request({ jsonSchema: { name: 'plan check', schema } }));

    expect(response.text).toBe('{"ok": true}');
    expect(fake.requests[0]?.body['response_format']).toEqual({
      type: 'json_schema',
      json_schema: { name: 'plan_check', schema, strict: false },
    });
    expect(fake.requests[0]?.jsonSchema).toEqual(schema);
  });

  it('in prompt mode states the schema in the system prompt and sends no response_format', async () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } } };
    fake.setScript(() => '{"ok":true}');
    await client({ structuredOutput: 'prompt' }).complete(request({ jsonSchema: { name: 'check', schema } }));

    const sent = fake.requests[0];
    expect(sent?.body).not.toHaveProperty('response_format');
    expect(sent?.system.startsWith('[steward:planner]')).toBe(true);
    expect(sent?.system).toContain(JSON.stringify(schema));
  });

  it('sends maxOutputTokens as max_completion_tokens', async () => {
    fake.setScript(() => 'ok');
    await client().complete(request({ maxOutputTokens: 321 }));
    expect(fake.requests[0]?.body['max_completion_tokens']).toBe(321);
    expect(fake.requests[0]?.body).not.toHaveProperty('max_tokens');
  });

  it('sends the cap as max_tokens instead for servers that read only that field, never both', async () => {
    fake.setScript(() => 'ok');
    await client({ maxTokensField: 'max_tokens' }).complete(request({ maxOutputTokens: 321 }));
    expect(fake.requests[0]?.body['max_tokens']).toBe(321);
    expect(fake.requests[0]?.body).not.toHaveProperty('max_completion_tokens');
  });

  it("marks an answer cut at its cap (finish_reason 'length') as truncated, and a finished one not", async () => {
    fake.setScript(() => ({ text: '{"summary": "a plan that goes on', stopReason: 'length' }));
    expect((await client().complete(request({ maxOutputTokens: 8 }))).truncated).toBe(true);
    fake.setScript(() => 'done');
    expect((await client().complete(request())).truncated).toBeUndefined();
  });

  it('turns a 401 into llm_failed that says the key was refused and never quotes the key', async () => {
    // Real providers echo (part of) the refused key in the error body; the fake echoes all of it.
    fake.setScript(() => ({ status: 401, body: { error: { message: `Incorrect API key provided: ${CANARY_KEY}` } } }));
    const err = await stewardError(client({ maxRetries: 2 }).complete(request()));

    expect(fake.requests[0]?.headers['authorization']).toBe(`Bearer ${CANARY_KEY}`);
    expect(err.code).toBe('llm_failed');
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(
      `The OpenAI-compatible server at ${new URL(fake.baseURL).host} refused the API key (HTTP 401).`,
    );
    expect(err.message).not.toContain(CANARY_KEY);
    expect(String((err.cause as Error).message)).not.toContain(CANARY_KEY);
    expect(fake.requests).toHaveLength(1);
  });

  it('is retried by the SDK after a 500 when maxRetries allows it', async () => {
    let calls = 0;
    fake.setScript(() => (++calls === 1 ? { status: 500 } : 'recovered'));
    const response = await client({ maxRetries: 1 }).complete(request());
    expect(response.text).toBe('recovered');
    expect(fake.requests).toHaveLength(2);
  });

  it('fails retryable after a 500 when retries are off, quoting the server and never the key', async () => {
    fake.setScript(() => ({ status: 503, body: { error: { message: `overloaded for ${CANARY_KEY}` } } }));
    const err = await stewardError(client({ maxRetries: 0 }).complete(request()));
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('(HTTP 503): overloaded for [redacted]');
    expect(err.message).not.toContain(CANARY_KEY);
    expect(String((err.cause as Error).message)).not.toContain(CANARY_KEY);
  });

  it('names the model when the server does not know it (404), not retryable', async () => {
    fake.setScript(() => ({
      status: 404,
      body: { error: { message: "model 'gpt-test' not found, try pulling it first" } },
    }));
    const err = await stewardError(client().complete(request()));
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('has no model gpt-test or no such endpoint (HTTP 404)');
    expect(err.message).toContain('try pulling it first');
  });

  it('times out a server that never answers: llm_failed, retryable', async () => {
    fake.setScript(() => ({ hang: true }));
    const started = Date.now();
    const err = await stewardError(client({ timeoutMs: 200 }).complete(request()));
    expect(err.code).toBe('llm_failed');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/did not answer within 0\.2 s/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('times out a server that sends headers and then stalls (the SDK timeout alone would wait forever)', async () => {
    fake.setScript(() => ({ hang: true, afterHeaders: true }));
    const err = await stewardError(client({ timeoutMs: 300 }).complete(request()));
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('did not answer within');
  });

  it('stops when the caller aborts, as a cancellation that is not retryable', async () => {
    fake.setScript(() => ({ hang: true }));
    const controller = new AbortController();
    const pending = client({ timeoutMs: 10_000 }).complete(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const err = await stewardError(pending);
    expect(err.retryable).toBe(false);
    expect(err.message).toBe('The call to model gpt-test was cancelled.');
  });

  it('says which host could not be reached when the connection is refused', async () => {
    const port = await freePort();
    const err = await stewardError(client({ baseURL: `http://127.0.0.1:${port}/v1` }).complete(request()));
    expect(err.retryable).toBe(true);
    expect(err.message).toBe(`Could not reach the OpenAI-compatible server at 127.0.0.1:${port} (connection refused).`);
  });

  it('treats empty content as llm_failed, giving the finish reason', async () => {
    fake.setScript(() => ({ text: '', stopReason: 'length' }));
    const err = await stewardError(client().complete(request()));
    expect(err.code).toBe('llm_failed');
    expect(err.message).toBe('Model gpt-test returned an empty answer (stop reason: length).');
  });

  it('explains a 200 that is not a chat completion (a base URL pointing at a web page)', async () => {
    fake.setScript(() => ({ status: 200, body: '<html>hello</html>' }));
    const err = await stewardError(client().complete(request()));
    expect(err.message).toContain('check that the base URL is the API');
  });
});
