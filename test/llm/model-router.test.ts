import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StewardError } from '../../src/engine/errors.ts';
import type { LlmClient, LlmRequest, ModelRole } from '../../src/engine/ports.ts';
import { createLlmClient, parseModelSpec, RoutedLlmClient, type LlmSettings } from '../../src/llm/model-router.ts';
import { byRole, roleMarker, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';

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

function request(role: ModelRole): LlmRequest {
  return { role, system: `${roleMarker(role)}\nDo your part.`, messages: [{ role: 'user', content: 'hi' }] };
}

function settings(models: Partial<LlmSettings['models']>, providers: Partial<LlmSettings> = {}): LlmSettings {
  return {
    openai: { apiKey: 'sk-openai', baseURL: fake.baseURL, maxRetries: 0 },
    anthropic: { apiKey: 'sk-anthropic', baseURL: fake.anthropicBaseURL, maxRetries: 0 },
    ...providers,
    models: { planner: 'p', classifier: 'c', synthesizer: 's', llm_step: 'l', ...models },
  };
}

function configError(fn: () => unknown): StewardError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StewardError);
    expect((err as StewardError).code).toBe('config');
    return err as StewardError;
  }
  throw new Error('expected a config error');
}

describe('createLlmClient', () => {
  it('routes each role to its configured provider and model', async () => {
    fake.setScript(byRole({ planner: 'plan', classifier: 'class', synthesizer: 'synth', llm_step: 'step' }));
    const llm = createLlmClient(
      settings({
        planner: 'anthropic:claude-planner',
        classifier: 'openai:gpt-classifier',
        synthesizer: 'gpt-synth',
        llm_step: 'openai:llama3.1:8b',
      }),
    );

    const answers = [];
    for (const role of ['planner', 'classifier', 'synthesizer', 'llm_step'] as const) {
      answers.push((await llm.complete(request(role))).text);
    }

    expect(answers).toEqual(['plan', 'class', 'synth', 'step']);
    expect(fake.requests.map((r) => [r.role, r.api, r.model])).toEqual([
      ['planner', 'anthropic', 'claude-planner'],
      ['classifier', 'openai', 'gpt-classifier'],
      ['synthesizer', 'openai', 'gpt-synth'],
      // Only openai:/anthropic: are prefixes; the rest of an Ollama name keeps its colon.
      ['llm_step', 'openai', 'llama3.1:8b'],
    ]);
    expect(fake.requests.every((r) => !r.toolsSent)).toBe(true);
    expect(fake.failures).toEqual([]);
  });

  it("streams through the role's model when the request asks for its text as it comes", async () => {
    fake.setScript(() => ({ text: 'streamed report', chunks: ['streamed ', 'report'] }));
    const llm = createLlmClient(settings({ synthesizer: 'anthropic:claude-synth', planner: 'openai:gpt-plan' }));
    const pieces: string[] = [];
    for (const role of ['synthesizer', 'planner'] as const) {
      expect((await llm.complete({ ...request(role), onText: (d) => pieces.push(d) })).text).toBe('streamed report');
    }
    expect(pieces).toEqual(['streamed ', 'report', 'streamed ', 'report']);
    expect(fake.requests.map((r) => [r.api, r.body['stream']])).toEqual([
      ['anthropic', true],
      ['openai', true],
    ]);
  });

  it('sends bare model names to Anthropic when OpenAI is not configured', async () => {
    fake.setScript(() => 'ok');
    const llm = createLlmClient(settings({ planner: 'claude-bare' }, { openai: undefined }));
    await llm.complete(request('planner'));
    expect(fake.requests[0]).toMatchObject({ api: 'anthropic', model: 'claude-bare' });
  });

  it('refuses a spec naming a provider whose key is not set, naming the variables', () => {
    const err = configError(() =>
      createLlmClient(settings({ planner: 'anthropic:claude-x' }, { anthropic: undefined })),
    );
    expect(err.message).toBe(
      'STEWARD_MODEL_PLANNER names anthropic ("anthropic:claude-x"), but ANTHROPIC_API_KEY is not set: set it in .env, or name a model of a provider that is set up.',
    );

    const err2 = configError(() => createLlmClient(settings({ llm_step: 'openai:gpt-x' }, { openai: undefined })));
    expect(err2.message).toMatch(
      /^STEWARD_MODEL_LLM_STEP names openai \("openai:gpt-x"\), but OPENAI_API_KEY is not set: /,
    );
  });

  it('refuses a bare model when no provider is configured, and an empty spec', () => {
    const none = { openai: false, anthropic: false };
    expect(configError(() => parseModelSpec('classifier', 'gpt-x', none)).message).toBe(
      'STEWARD_MODEL_CLASSIFIER names model gpt-x, but neither OPENAI_API_KEY nor ANTHROPIC_API_KEY is set: set one in .env.',
    );
    expect(
      configError(() => parseModelSpec('synthesizer', 'openai:', { openai: true, anthropic: false })).message,
    ).toContain('STEWARD_MODEL_SYNTHESIZER is empty');
  });
});

describe('RoutedLlmClient', () => {
  it('hands each request to the client for its role', async () => {
    const seen: string[] = [];
    const stub = (name: string): LlmClient => ({
      complete: async (r) => {
        seen.push(`${name}:${r.role}`);
        return { text: name, model: name, usage: { inputTokens: 0, outputTokens: 0 } };
      },
    });
    const routed = new RoutedLlmClient({
      planner: stub('a'),
      classifier: stub('b'),
      synthesizer: stub('c'),
      llm_step: stub('d'),
    });
    await routed.complete(request('synthesizer'));
    await routed.complete(request('planner'));
    expect(seen).toEqual(['c:synthesizer', 'a:planner']);
  });
});
