import { afterEach, describe, expect, it } from 'vitest';
import { byRole, requestRole, startFakeLlm, tokens, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';

let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function post(
  path: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${fake?.anthropicBaseURL}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

const chat = (system: string, user = 'hello', extra: Record<string, unknown> = {}) => ({
  model: 'm',
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ],
  ...extra,
});

describe('fake LLM server', () => {
  it('reads the role marker from the first line of the system prompt', () => {
    expect(requestRole({ system: '[steward:planner]\nYou plan.' })).toBe('planner');
    expect(requestRole({ system: '  [steward:llm_step] go' })).toBe('llm_step');
    expect(requestRole({ system: 'You plan. [steward:planner]' })).toBeUndefined();
    expect(requestRole({ system: '[steward:boss]' })).toBeUndefined();
  });

  it('pops replies per role in order and fails loudly, without retries, when a role runs out', async () => {
    fake = await startFakeLlm(byRole({ planner: ['first', 'second'], classifier: 'always' }));

    const texts = [];
    for (const system of ['[steward:planner]', '[steward:classifier]', '[steward:planner]', '[steward:classifier]']) {
      const { json } = await post('/v1/chat/completions', chat(system));
      texts.push((json['choices'] as Array<{ message: { content: string } }>)[0]?.message.content);
    }
    expect(texts).toEqual(['first', 'always', 'second', 'always']);

    const exhausted = await post('/v1/chat/completions', chat('[steward:planner]'));
    expect(exhausted.status).toBe(500);
    expect(exhausted.headers.get('x-should-retry')).toBe('false');
    expect(JSON.stringify(exhausted.json)).toContain('no scripted reply left for role planner');

    const unmarked = await post('/v1/chat/completions', chat('no marker'));
    expect(unmarked.status).toBe(500);
    expect(fake.failures).toHaveLength(2);
    expect(fake.failures[1]).toContain('no [steward:<role>] marker');
  });

  it('counts usage from the whole request and the reply', async () => {
    fake = await startFakeLlm(() => 'twelve chars');
    const { json } = await post('/v1/chat/completions', chat('sys', 'a user message'));
    expect(json['usage']).toEqual({
      prompt_tokens: tokens('sys' + 'a user message'),
      completion_tokens: 3,
      total_tokens: tokens('sys' + 'a user message') + 3,
    });

    const anthropic = await post('/v1/messages', {
      model: 'claude',
      max_tokens: 10,
      system: [{ type: 'text', text: '[steward:synthesizer] Report.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'the results' }] }],
    });
    expect(anthropic.json['usage']).toMatchObject({
      input_tokens: tokens('the results' + '[steward:synthesizer] Report.'),
      output_tokens: 3,
    });
    expect(fake.requests[1]).toMatchObject({ api: 'anthropic', role: 'synthesizer', lastUserText: 'the results' });
  });

  it('records requests that send tools, so tests can assert none were', async () => {
    fake = await startFakeLlm(() => 'ok');
    await post('/v1/chat/completions', chat('s', 'u', { tools: [{ type: 'function', function: { name: 'x' } }] }));
    await post('/v1/chat/completions', chat('s', 'u', { tools: [] }));
    expect(fake.requests.map((r) => r.toolsSent)).toEqual([true, false]);
  });

  it('refuses unknown paths, and chunks that do not add up to the text, loudly', async () => {
    fake = await startFakeLlm(() => ({ text: 'ok', chunks: ['o', 'k!'] }));
    expect((await post('/v1/chat/completions', chat('s', 'u', { stream: true }))).status).toBe(500);
    expect((await post('/v1/embeddings', {})).status).toBe(500);
    expect(fake.failures).toEqual([expect.stringContaining('do not add up'), 'unexpected POST /v1/embeddings']);
  });

  it('answers a streaming request with server-sent events, and a plain one with the same JSON as before', async () => {
    fake = await startFakeLlm(() => ({ text: 'ok', chunks: ['o', 'k'] }));
    const streamed = await fetch(`${fake.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chat('s', 'u', { stream: true })),
    });
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    const events = (await streamed.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(fake.written.map((w) => w.text)).toEqual(['o', 'k']);
    const plain = await post('/v1/chat/completions', chat('s'));
    expect(plain.headers.get('content-type')).toBe('application/json');
    expect(plain.json['choices']).toEqual([
      { index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, finish_reason: 'stop', logprobs: null },
    ]);
  });

  it('closes promptly while a request is still hanging', async () => {
    fake = await startFakeLlm(() => ({ hang: true }));
    const pending = post('/v1/chat/completions', chat('s')).catch(() => 'cut');
    await waitUntil('the hanging request to be recorded', () => fake!.requests.length > 0);
    expect(fake.requests).toHaveLength(1);
    await fake.close();
    fake = undefined;
    expect(await pending).toBe('cut');
  });
});
