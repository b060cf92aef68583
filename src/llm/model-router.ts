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

/** Where model failures are written: the operator's log (never people). */
export type LlmLog = (level: 'info' | 'warn' | 'error', message: string) => void;

/** An `LlmClient` that hands each request to the client for its role, and logs every failed call with its reason. */
export class RoutedLlmClient implements LlmClient {
  constructor(
    private readonly clients: Readonly<Record<ModelRole, LlmClient>>,
    private readonly log: LlmLog = () => undefined,
    private readonly specs: Partial<Readonly<Record<ModelRole, string>>> = {},
  ) {}

  /** Completes the request with the model configured for `request.role`. */
  async complete(request: LlmRequest): Promise<LlmResponse> {
    try {
      return await this.clients[request.role].complete(request);
    } catch (err) {
      // The reason only: adapters' messages name the host, model and status and never the key; prompts stay out.
      const model = this.specs[request.role] ?? 'its model';
      const reason = err instanceof Error ? err.message : String(err);
      const level = request.signal?.aborted ? 'info' : 'warn';
      this.log(level, `model call failed (${request.role}, ${model}): ${reason}`);
      throw err;
    }
  }

  /**
   * Asks each configured model's server once (a model list: no tokens spent) within `timeoutMs`; resolves to one
   * warning per server that failed, saying why and which roles it serves. Never throws: a model that is down at start
   * may be up by the first request.
   */
  async probe(timeoutMs: number): Promise<string[]> {
    const roles = new Map<LlmClient, ModelRole[]>();
    for (const [role, client] of Object.entries(this.clients) as [ModelRole, LlmClient][]) {
      roles.set(client, [...(roles.get(client) ?? []), role]);
    }
    const checks = [...roles].map(async ([client, served]) => {
      if (!isProbeable(client)) return undefined;
      try {
        await client.probe(timeoutMs);
        return undefined;
      } catch (err) {
        const spec = this.specs[served[0] ?? 'planner'] ?? 'its model';
        const warning = `The model for ${served.join(', ')} (${spec}) did not answer a check at start: ${(err as Error).message}`;
        this.log('warn', warning);
        return warning;
      }
    });
    return (await Promise.all(checks)).filter((w) => w !== undefined);
  }
}

function isProbeable(client: LlmClient): client is LlmClient & { probe(timeoutMs: number): Promise<void> } {
  return typeof (client as { probe?: unknown }).probe === 'function';
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
export function createLlmClient(settings: LlmSettings, log?: LlmLog): RoutedLlmClient {
  const configured = { openai: settings.openai !== undefined, anthropic: settings.anthropic !== undefined };
  const shared = new Map<string, LlmClient>();
  const specs: Partial<Record<ModelRole, string>> = {};
  const clientFor = (role: ModelRole): LlmClient => {
    const { provider, model } = parseModelSpec(role, settings.models[role], configured);
    const key = `${provider}:${model}`;
    specs[role] = key;
    let client = shared.get(key);
    if (!client) {
      client = buildClient(provider, model, settings);
      shared.set(key, client);
    }
    return client;
  };
  const clients = {
    planner: clientFor('planner'),
    classifier: clientFor('classifier'),
    synthesizer: clientFor('synthesizer'),
    llm_step: clientFor('llm_step'),
  };
  return new RoutedLlmClient(clients, log, specs);
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
