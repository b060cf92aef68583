/**
 * Sends each model role (planner, classifier, …) to the model configured for it, and builds those
 * clients from settings such as `STEWARD_MODEL_PLANNER=anthropic:claude-sonnet-4-5`.
 */
import { StewardError } from '../engine/errors.ts';
import type { LlmClient, LlmRequest, LlmResponse, ModelRole } from '../engine/ports.ts';
import { AnthropicLlmClient } from './anthropic-llm.ts';
import { missingCapabilities, type Capability } from './model-capabilities.ts';
import { resolveModel, type ModelCatalog } from './model-catalog.ts';
import { OpenAiLlmClient } from './openai-llm.ts';

/** The environment variable that names each role's model, for error messages and the config loader. */
export const MODEL_ENV_VARS: Readonly<Record<ModelRole, string>> = {
  planner: 'STEWARD_MODEL_PLANNER',
  classifier: 'STEWARD_MODEL_CLASSIFIER',
  synthesizer: 'STEWARD_MODEL_SYNTHESIZER',
  llm_step: 'STEWARD_MODEL_LLM_STEP',
  butler: 'STEWARD_MODEL_BUTLER',
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
  /**
   * `openai:<model>`, `anthropic:<model>`, or a bare `<model>` (OpenAI if configured, else Anthropic); or the name of
   * a catalog model. The `butler` (quick answers) defaults to the classifier's model.
   */
  models: Record<Exclude<ModelRole, 'butler'>, string> & { butler?: string };
  /** Where each role's model was set (`STEWARD_MODEL`, a catalog's roles), for messages; unset: its own variable. */
  modelSources?: Partial<Record<ModelRole, string>>;
  /** Named models a request may ask for by name (`LlmRequest.model`); their answers carry the name (for prices). */
  catalog?: ModelCatalog;
}

/** How the router reaches the catalog's models by name: clients are built on first use. */
export interface NamedModels {
  names(): string[];
  /** The client of a catalog model with what it can do, or undefined for a name the catalog lacks. */
  get(name: string): { client: LlmClient; capabilities: readonly Capability[] } | undefined;
}

const NO_NAMED_MODELS: NamedModels = { names: () => [], get: () => undefined };

/** Where model failures are written: the operator's log (never people). */
export type LlmLog = (level: 'info' | 'warn' | 'error', message: string) => void;

/**
 * An `LlmClient` that hands each request to the client for its role (or to the catalog model the request names), and
 * logs every failed call with its reason.
 */
export class RoutedLlmClient implements LlmClient {
  constructor(
    /** A client per role; without a `butler` one, the classifier's serves it. */
    private readonly clients: Readonly<Record<Exclude<ModelRole, 'butler'>, LlmClient> & { butler?: LlmClient }>,
    private readonly log: LlmLog = () => undefined,
    private readonly specs: Partial<Readonly<Record<ModelRole, string>>> = {},
    private readonly named: NamedModels = NO_NAMED_MODELS,
    /** The catalog name of each role's model, when it has one. */
    private readonly roleNames: Partial<Readonly<Record<ModelRole, string>>> = {},
  ) {}

  /**
   * Completes the request with the catalog model it names, else the model configured for `request.role`. Refuses
   * (`config`) a name the catalog lacks, or a model without what the role needs.
   */
  async complete(request: LlmRequest): Promise<LlmResponse> {
    const { client, name } = this.route(request);
    try {
      const response = await client.complete(this.seesImages(request, name) ? request : withoutImages(request));
      return name === undefined ? response : { ...response, modelName: name };
    } catch (err) {
      // The reason only: adapters' messages name the host, model and status and never the key; prompts stay out.
      const model = request.model ?? this.specs[request.role] ?? 'its model';
      const reason = err instanceof Error ? err.message : String(err);
      const level = request.signal?.aborted ? 'info' : 'warn';
      this.log(level, `model call failed (${request.role}, ${model}): ${reason}`);
      throw err;
    }
  }

  // Only a catalog model marked seesImages gets images: a model of unknown kind may refuse the whole request for them.
  private seesImages(request: LlmRequest, name: string | undefined): boolean {
    return name !== undefined && (this.named.get(name)?.capabilities.includes('seesImages') ?? false);
  }

  /** The model a role's requests go to (`openai:gpt-4.1`), with its catalog name when it has one. */
  modelOf(role: ModelRole): { model: string; catalogName?: string } | undefined {
    const model = this.specs[role] ?? (role === 'butler' ? this.specs.classifier : undefined);
    if (model === undefined) return undefined;
    const catalogName = this.roleNames[role] ?? (role === 'butler' ? this.roleNames.classifier : undefined);
    return catalogName === undefined ? { model } : { model, catalogName };
  }

  private route(request: LlmRequest): { client: LlmClient; name: string | undefined } {
    if (request.model === undefined) {
      const client = this.clients[request.role] ?? this.clients.classifier;
      return {
        client,
        name: this.roleNames[request.role] ?? (this.clients[request.role] ? undefined : this.roleNames.classifier),
      };
    }
    const found = this.named.get(request.model);
    if (!found) {
      const known = this.named.names();
      throw new StewardError(
        'config',
        known.length === 0
          ? `No model named "${request.model}": there is no model catalog (models.json).`
          : `No model named "${request.model}" in the model catalog (it has ${known.join(', ')}).`,
      );
    }
    const lacking = missingCapabilities(request.role, found.capabilities);
    if (lacking.length > 0) {
      throw new StewardError(
        'config',
        `Model "${request.model}" cannot serve as the ${request.role}: the role needs ${lacking.join(' and ')}, which the catalog does not mark it with.`,
      );
    }
    return { client: found.client, name: request.model };
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
        const note = await client.probe(timeoutMs);
        if (note === undefined) return undefined;
        const warning = `The model for ${served.join(', ')} (${this.specs[served[0] ?? 'planner'] ?? 'its model'}) ${note}`;
        this.log('warn', warning);
        return warning;
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

/** The request with no images: their text already describes them (`LlmMessage`). */
function withoutImages(request: LlmRequest): LlmRequest {
  if (!request.messages.some((m) => 'images' in m && m.images !== undefined)) return request;
  return {
    ...request,
    messages: request.messages.map((m) => {
      if (!('images' in m) || m.images === undefined) return m;
      const { images: _dropped, ...rest } = m;
      return rest;
    }),
  };
}

function isProbeable(
  client: LlmClient,
): client is LlmClient & { probe(timeoutMs: number): Promise<string | undefined | void> } {
  return typeof (client as { probe?: unknown }).probe === 'function';
}

/** Splits a model spec into provider and model name; throws a `config` error naming the variable when it cannot. */
export function parseModelSpec(
  role: ModelRole,
  spec: string,
  configured: Readonly<Record<LlmProvider, boolean>>,
): { provider: LlmProvider; model: string } {
  return parseSpec(MODEL_ENV_VARS[role], spec, configured);
}

/** As `parseModelSpec`, with `envVar` the words that say where the spec was set. */
export function parseSpec(
  envVar: string,
  spec: string,
  configured: Readonly<Record<LlmProvider, boolean>>,
): { provider: LlmProvider; model: string } {
  const trimmed = spec.trim();
  // Only these two prefixes are providers: Ollama names such as `llama3.1:8b` carry colons of their own.
  const match = /^(openai|anthropic):(.*)$/.exec(trimmed);
  const named = match?.[1] as LlmProvider | undefined;
  const model = (match ? (match[2] ?? '') : trimmed).trim();
  if (!model) throw new StewardError('config', `${envVar} is empty; set it to a model such as openai:gpt-4.1-mini.`);
  if (named) {
    if (!configured[named]) {
      throw new StewardError(
        'config',
        `${envVar} names ${named} ("${trimmed}"), but ${KEY_ENV_VARS[named]} is not set: set it in .env, or name a model of a provider that is set up.`,
      );
    }
    return { provider: named, model };
  }
  if (configured.openai) return { provider: 'openai', model };
  if (configured.anthropic) return { provider: 'anthropic', model };
  throw new StewardError(
    'config',
    `${envVar} names model ${model}, but neither ${KEY_ENV_VARS.openai} nor ${KEY_ENV_VARS.anthropic} is set: set one in .env.`,
  );
}

/**
 * Builds one routed client from settings; roles and catalog models naming the same provider and model share a client.
 * A catalog model no role uses gets its client when a request first names it.
 */
export function createLlmClient(settings: LlmSettings, log?: LlmLog): RoutedLlmClient {
  const configured = { openai: settings.openai !== undefined, anthropic: settings.anthropic !== undefined };
  const shared = new Map<string, LlmClient>();
  const specs: Partial<Record<ModelRole, string>> = {};
  const roleNames: Partial<Record<ModelRole, string>> = {};
  const clientOf = (where: string, spec: string): { key: string; client: LlmClient } => {
    const { provider, model } = parseSpec(where, spec, configured);
    const key = `${provider}:${model}`;
    let client = shared.get(key);
    if (!client) {
      client = buildClient(provider, model, settings);
      shared.set(key, client);
    }
    return { key, client };
  };
  const catalog = settings.catalog;
  const clientFor = (role: ModelRole): LlmClient => {
    const given = role === 'butler' ? (settings.models.butler ?? settings.models.classifier) : settings.models[role];
    const { spec, name } = resolveModel(given, catalog);
    const where =
      name === undefined
        ? (settings.modelSources?.[role] ?? MODEL_ENV_VARS[role])
        : `Model "${name}" of ${catalog?.source ?? 'the catalog'}`;
    const { key, client } = clientOf(where, spec);
    specs[role] = key;
    if (name !== undefined) roleNames[role] = name;
    return client;
  };
  const named: NamedModels = {
    names: () => Object.keys(catalog?.models ?? {}),
    get: (name) => {
      const model = Object.hasOwn(catalog?.models ?? {}, name) ? catalog?.models[name] : undefined;
      if (!model || !catalog) return undefined;
      return {
        client: clientOf(`Model "${name}" of ${catalog.source}`, model.spec).client,
        capabilities: model.capabilities,
      };
    },
  };
  const clients = {
    planner: clientFor('planner'),
    classifier: clientFor('classifier'),
    synthesizer: clientFor('synthesizer'),
    llm_step: clientFor('llm_step'),
    butler: clientFor('butler'),
  };
  return new RoutedLlmClient(clients, log, specs, named, roleNames);
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
