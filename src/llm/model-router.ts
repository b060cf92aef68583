/**
 * Sends each model role (planner, classifier, …) to the model configured for it, and builds those
 * clients from settings such as `STEWARD_MODEL_PLANNER=anthropic:claude-sonnet-4-5`.
 */
import { StewardError } from '../engine/errors.ts';
import type { LlmClient, LlmRequest, LlmResponse, ModelRole } from '../engine/ports.ts';
import { AnthropicLlmClient } from './anthropic-llm.ts';
import { OpenAiLlmClient } from './openai-llm.ts';

/** The environment variable that names each role's model, for error messages and the config loader. */
export const MODEL_ENV_VARS: Readonly<Record<ModelRole, string>> = {
  planner: 'STEWARD_MODEL_PLANNER',
  classifier: 'STEWARD_MODEL_CLASSIFIER',
  synthesizer: 'STEWARD_MODEL_SYNTHESIZER',
  llm_step: 'STEWARD_MODEL_LLM_STEP',
};

const KEY_ENV_VARS = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;

/** A provider Steward can talk to. */
export type LlmProvider = keyof typeof KEY_ENV_VARS;

/** Connection settings for one provider. */
export interface LlmProviderSettings {
  apiKey: string;
  baseURL?: string;
  timeoutMs?: number;
  maxRetries?: number;
}

/** Everything `createLlmClient` needs: configured providers and a model spec per role. */
export interface LlmSettings {
  /** `structuredOutput: 'prompt'` suits servers without `response_format: json_schema`. */
  /** `maxTokensField: 'max_tokens'` suits servers that ignore `max_completion_tokens`. */
  openai?: LlmProviderSettings & {
    structuredOutput?: 'native' | 'prompt';
    maxTokensField?: 'max_completion_tokens' | 'max_tokens';
  };
  anthropic?: LlmProviderSettings;
  /** `openai:<model>`, `anthropic:<model>`, or a bare `<model>` (OpenAI if configured, else Anthropic). */
  models: Record<ModelRole, string>;
}

/** An `LlmClient` that hands each request to the client for its role. */
export class RoutedLlmClient implements LlmClient {
  constructor(private readonly clients: Readonly<Record<ModelRole, LlmClient>>) {}

  /** Completes the request with the model configured for `request.role`. */
  complete(request: LlmRequest): Promise<LlmResponse> {
    return this.clients[request.role].complete(request);
  }
}

/** Splits a model spec into provider and model name; throws a `config` error naming the variable when it cannot. */
export function parseModelSpec(
  role: ModelRole,
  spec: string,
  configured: Readonly<Record<LlmProvider, boolean>>,
): { provider: LlmProvider; model: string } {
  const envVar = MODEL_ENV_VARS[role];
  const trimmed = spec.trim();
  // Only these two prefixes are providers: Ollama names such as `llama3.1:8b` carry colons of their own.
  const match = /^(openai|anthropic):(.*)$/.exec(trimmed);
  const named = match?.[1] as LlmProvider | undefined;
  const model = (match ? (match[2] ?? '') : trimmed).trim();
  if (!model) throw new StewardError('config', `${envVar} is empty; set it to a model such as openai:gpt-4.1-mini.`);
  if (named) {
    if (!configured[named]) {
      throw new StewardError('config', `${envVar} names ${named}, but ${KEY_ENV_VARS[named]} is not set.`);
    }
    return { provider: named, model };
  }
  if (configured.openai) return { provider: 'openai', model };
  if (configured.anthropic) return { provider: 'anthropic', model };
  throw new StewardError(
    'config',
    `${envVar} names model ${model}, but neither ${KEY_ENV_VARS.openai} nor ${KEY_ENV_VARS.anthropic} is set.`,
  );
}

/** Builds one routed client from settings; roles naming the same provider and model share a client. */
export function createLlmClient(settings: LlmSettings): RoutedLlmClient {
  const configured = { openai: settings.openai !== undefined, anthropic: settings.anthropic !== undefined };
  const shared = new Map<string, LlmClient>();
  const clientFor = (role: ModelRole): LlmClient => {
    const { provider, model } = parseModelSpec(role, settings.models[role], configured);
    const key = `${provider}:${model}`;
    let client = shared.get(key);
    if (!client) {
      client = buildClient(provider, model, settings);
      shared.set(key, client);
    }
    return client;
  };
  return new RoutedLlmClient({
    planner: clientFor('planner'),
    classifier: clientFor('classifier'),
    synthesizer: clientFor('synthesizer'),
    llm_step: clientFor('llm_step'),
  });
}

function buildClient(provider: LlmProvider, model: string, settings: LlmSettings): LlmClient {
  if (provider === 'openai' && settings.openai) {
    return new OpenAiLlmClient({ ...settings.openai, model });
  }
  if (provider === 'anthropic' && settings.anthropic) {
    return new AnthropicLlmClient({ ...settings.anthropic, model });
  }
  // parseModelSpec only returns configured providers.
  throw new StewardError('config', `${provider} is not configured.`);
}
