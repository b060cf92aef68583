import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StewardError } from '../../src/engine/errors.ts';
import type { LlmRequest, ModelRole } from '../../src/engine/ports.ts';
import { parseModelCatalog } from '../../src/llm/model-catalog.ts';
import { createLlmClient, type LlmSettings } from '../../src/llm/model-router.ts';
import { roleMarker, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm(() => 'answer');
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

const catalog = parseModelCatalog(
  JSON.stringify({
    models: {
      fast: { spec: 'openai:gpt-fast', callsTools: true },
      deep: { spec: 'anthropic:claude-deep', reasons: true },
      'same-as-planner': { spec: 'openai:gpt-plan' },
    },
    roles: { classifier: 'fast' },
  }),
  'models.json',
  ['planner', 'classifier', 'synthesizer', 'llm_step'],
);

function settings(over: Partial<LlmSettings> = {}): LlmSettings {
  return {
    openai: { apiKey: 'sk-openai', baseURL: fake.baseURL, maxRetries: 0 },
    anthropic: { apiKey: 'sk-anthropic', baseURL: fake.anthropicBaseURL, maxRetries: 0 },
    models: { planner: 'openai:gpt-plan', classifier: 'fast', synthesizer: 'openai:gpt-synth', llm_step: 'deep' },
    catalog,
    ...over,
  };
}

function request(role: ModelRole, model?: string): LlmRequest {
  return {
    role,
    system: `${roleMarker(role)}\nDo your part.`,
    messages: [{ role: 'user', content: 'hi' }],
    ...(model !== undefined && { model }),
  };
}

describe('a request naming a catalog model', () => {
  it('reaches that model through its own provider, and its answer carries the catalog name', async () => {
    const llm = createLlmClient(settings());
    const deep = await llm.complete(request('planner', 'deep'));
    const fast = await llm.complete(request('synthesizer', 'fast'));
    expect(fake.requests.map((r) => [r.role, r.api, r.model])).toEqual([
      ['planner', 'anthropic', 'claude-deep'],
      ['synthesizer', 'openai', 'gpt-fast'],
    ]);
    expect([deep.modelName, deep.model, fast.modelName, fast.model]).toEqual([
      'deep',
      'claude-deep',
      'fast',
      'gpt-fast',
    ]);
    expect(fake.failures).toEqual([]);
  });

  it("without a name goes to the role's model, named when it is a catalog model (by name or by the same spec)", async () => {
    const llm = createLlmClient(settings());
    const answers = [];
    for (const role of ['planner', 'classifier', 'synthesizer', 'llm_step'] as const) {
      answers.push((await llm.complete(request(role))).modelName);
    }
    expect(fake.requests.map((r) => [r.role, r.api, r.model])).toEqual([
      ['planner', 'openai', 'gpt-plan'],
      ['classifier', 'openai', 'gpt-fast'],
      ['synthesizer', 'openai', 'gpt-synth'],
      ['llm_step', 'anthropic', 'claude-deep'],
    ]);
    expect(answers).toEqual(['same-as-planner', 'fast', undefined, 'deep']);
  });

  it('is refused with a clear sentence when the catalog has no such model, and nothing is sent', async () => {
    const llm = createLlmClient(settings());
    const err = await llm.complete(request('planner', 'huge')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StewardError);
    expect((err as StewardError).code).toBe('config');
    expect((err as Error).message).toBe(
      'No model named "huge" in the model catalog (it has fast, deep, same-as-planner).',
    );
    const none = createLlmClient(
      settings({ catalog: undefined, models: { ...settings().models, classifier: 'x', llm_step: 'y' } }),
    );
    await expect(none.complete(request('planner', 'fast'))).rejects.toThrow(
      'No model named "fast": there is no model catalog (models.json).',
    );
    expect(fake.requests).toEqual([]);
  });

  it("is refused when the model's provider has no key, naming the model and the variable", async () => {
    const llm = createLlmClient(settings({ anthropic: undefined, models: { ...settings().models, llm_step: 'fast' } }));
    await expect(llm.complete(request('planner', 'deep'))).rejects.toThrow(
      /^Model "deep" of models\.json names anthropic \("anthropic:[^"]+"\), but ANTHROPIC_API_KEY is not set: set it in \.env/,
    );
    expect(fake.requests).toEqual([]);
  });
});
