/**
 * Tools on the wire (quick answers): both SDKs, against the fake model server, send the offered tools in their API's
 * shape, read the model's calls back, and send an assistant turn's calls and their results in the next request as
 * that API wants them (Chat Completions: `tool_calls` and `tool` messages; Messages: `tool_use` and one user message
 * of `tool_result` blocks).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LlmClient, LlmRequest } from '../../src/engine/ports.ts';
import { AnthropicLlmClient } from '../../src/llm/anthropic-llm.ts';
import { OpenAiLlmClient } from '../../src/llm/openai-llm.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { stewardError } from '../helpers/steward-error.ts';

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

const clients: Record<'openai' | 'anthropic', () => LlmClient> = {
  openai: () => new OpenAiLlmClient({ apiKey: 'sk-x', baseURL: fake.baseURL, model: 'm', maxRetries: 0 }),
  anthropic: () =>
    new AnthropicLlmClient({ apiKey: 'sk-x', baseURL: fake.anthropicBaseURL, model: 'm', maxRetries: 0 }),
};

const lookupSpec = {
  name: 'audit__lookup',
  description: 'audit.lookup: looks a contact up',
  inputSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
};

const request = (messages: LlmRequest['messages']): LlmRequest => ({
  role: 'butler',
  system: '[steward:butler]\nAnswer.',
  messages,
  tools: [lookupSpec],
});

describe.each(['openai', 'anthropic'] as const)('tool calls over %s', (api) => {
  it('sends the tools, and reads the calls back with their arguments', async () => {
    fake.setScript(() => ({
      text: '',
      toolCalls: [
        { id: 'c1', name: 'audit__lookup', args: { answer: 'ada' } },
        { id: 'c2', name: 'plan_request', args: {} },
      ],
    }));
    const response = await clients[api]().complete(request([{ role: 'user', content: "Ada's number?" }]));

    expect(response.toolCalls).toEqual([
      { id: 'c1', name: 'audit__lookup', args: { answer: 'ada' } },
      { id: 'c2', name: 'plan_request', args: {} },
    ]);
    expect(response.text).toBe('');
    const sent = fake.requests[0]!;
    expect(sent.role).toBe('butler');
    expect(sent.toolNames).toEqual(['audit__lookup']);
    const tool = (sent.body['tools'] as Record<string, unknown>[])[0];
    expect(tool).toEqual(
      api === 'openai'
        ? {
            type: 'function',
            function: {
              name: 'audit__lookup',
              description: lookupSpec.description,
              parameters: lookupSpec.inputSchema,
            },
          }
        : { name: 'audit__lookup', description: lookupSpec.description, input_schema: lookupSpec.inputSchema },
    );
    expect(fake.failures).toEqual([]);
  });

  it("sends an earlier turn's calls and their results in the API's shape", async () => {
    fake.setScript(() => 'Ada: +44 1');
    const response = await clients[api]().complete(
      request([
        { role: 'user', content: "Ada's and Bob's numbers?" },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'c1', name: 'audit__lookup', args: { answer: 'ada' } },
            { id: 'c2', name: 'audit__lookup', args: { answer: 'bob' } },
          ],
        },
        { role: 'tool', toolCallId: 'c1', content: 'Ada: +44 1' },
        { role: 'tool', toolCallId: 'c2', content: 'Bob: +44 2' },
      ]),
    );

    expect(response.text).toBe('Ada: +44 1');
    expect(response.toolCalls).toBeUndefined();
    const messages = fake.requests[0]!.body['messages'] as unknown[];
    if (api === 'openai') {
      expect(messages.slice(1)).toEqual([
        { role: 'user', content: "Ada's and Bob's numbers?" },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'audit__lookup', arguments: '{"answer":"ada"}' } },
            { id: 'c2', type: 'function', function: { name: 'audit__lookup', arguments: '{"answer":"bob"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'Ada: +44 1' },
        { role: 'tool', tool_call_id: 'c2', content: 'Bob: +44 2' },
      ]);
    } else {
      expect(messages).toEqual([
        { role: 'user', content: "Ada's and Bob's numbers?" },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'c1', name: 'audit__lookup', input: { answer: 'ada' } },
            { type: 'tool_use', id: 'c2', name: 'audit__lookup', input: { answer: 'bob' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: 'Ada: +44 1' },
            { type: 'tool_result', tool_use_id: 'c2', content: 'Bob: +44 2' },
          ],
        },
      ]);
    }
    expect(fake.failures).toEqual([]);
  });

  it('an answer with neither text nor calls is still refused as empty', async () => {
    fake.setScript(() => '');
    const err = await stewardError(clients[api]().complete(request([{ role: 'user', content: 'hi' }])));
    expect(err.code).toBe('llm_failed');
  });
});
