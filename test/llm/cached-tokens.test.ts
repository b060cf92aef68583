/**
 * Prompt caching end to end: the planner's prompt goes out through the real SDKs (marked for Anthropic's cache), the
 * fake reports part of it as read from the cache in each API's own words, and the count lands in `llm_usage` beside
 * the input tokens, which keep counting every token sent (so the budgets stay what they were).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { meteredLlm } from '../../src/engine/flows/metered-llm.ts';
import { plannerSystemPrompt, plannerUserPrompt } from '../../src/engine/plan/planner-prompt.ts';
import type { LlmClient } from '../../src/engine/ports.ts';
import { AnthropicLlmClient } from '../../src/llm/anthropic-llm.ts';
import { OpenAiLlmClient } from '../../src/llm/openai-llm.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTool } from '../engine/fixtures.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun } from '../store/builders.ts';

let fake: FakeLlm;
let database: TestDatabase;
let store: PgRunStore;

beforeAll(async () => {
  [fake, database] = await Promise.all([startFakeLlm(), createTestDatabase('postgres')]);
  store = new PgRunStore(database.db);
});
afterAll(async () => {
  await Promise.all([fake?.close(), database?.close()]);
});
beforeEach(() => fake.reset());

const clients: Record<'openai' | 'anthropic', () => LlmClient> = {
  openai: () => new OpenAiLlmClient({ apiKey: 'k', baseURL: fake.baseURL, model: 'gpt-test', maxRetries: 0 }),
  anthropic: () =>
    new AnthropicLlmClient({ apiKey: 'k', baseURL: fake.anthropicBaseURL, model: 'claude-test', maxRetries: 0 }),
};

describe.each(['openai', 'anthropic'] as const)('cached prompt tokens through the %s SDK', (api) => {
  it('are stored with the call, inside its input tokens, and summed in the run usage', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const llm = meteredLlm({ llm: clients[api](), store, clock: () => run.at }, run.id, run.requester);
    const tools = [createTool('fs.read', { description: 'Reads a file.' })];
    const system = plannerSystemPrompt(tools);
    // The first call writes the prompt to the cache (Anthropic reports that), the second reads it.
    fake.setScript((req) =>
      req.index === 0
        ? { text: '{}', usage: { input: 1500, output: 10, ...(api === 'anthropic' && { cacheWrite: 1400 }) } }
        : { text: '{}', usage: { input: 1500, output: 10, cached: 1400 } },
    );
    for (const request of ['list the files', 'read a.md']) {
      const messages = [{ role: 'user' as const, content: plannerUserPrompt({ request, tools }) }];
      await llm.complete({ role: 'planner', system, messages });
    }

    expect(fake.requests.map((r) => r.system)).toEqual([system, system]);
    if (api === 'anthropic') {
      expect(fake.requests[1]?.body['system']).toEqual([
        { type: 'text', text: system, cache_control: { type: 'ephemeral' } },
      ]);
    }
    const rows = await database.db
      .selectFrom('llm_usage')
      .select(['input_tokens', 'cached_input_tokens'])
      .where('run_id', '=', run.id)
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      { input_tokens: 1500, cached_input_tokens: 0 },
      { input_tokens: 1500, cached_input_tokens: 1400 },
    ]);
    expect(await store.llmUsageForRun(run.id)).toMatchObject({ inputTokens: 3000, cachedInputTokens: 1400 });
    expect(fake.failures).toEqual([]);
  });
});
