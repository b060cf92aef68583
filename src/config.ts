/**
 * Configuration from the environment (and `.env`), validated at start against `src/config-schema.ts`.
 * A bad value stops start-up with one sentence naming the variable, its problem and a value that works.
 */
import type { z } from 'zod';
import type { ScheduleLimits } from './engine/workflow/schedule-limits.ts';
import { envSchema } from './config-schema.ts';
import { configIssueSentence, isSettingHint } from './config-errors.ts';
import { StewardError } from './engine/errors.ts';
import type { DelegationLimits } from './engine/assistant/delegations.ts';
import type { PricedModel, RoleModels } from './engine/model-cost.ts';
import type { SpendSettings } from './engine/flows/deps.ts';
import type { SpendCaps } from './engine/spend.ts';
import type { ModelRole } from './engine/ports.ts';
import {
  checkRoleModels,
  loadModelCatalog,
  resolveModel,
  unreachableModels,
  type ModelCatalog,
} from './llm/model-catalog.ts';

export { CONFIG_VARIABLES, configDefaults, DEFAULT_DB_POOL_SIZE, DEFAULT_MAX_PARALLEL } from './config-schema.ts';

/** Validated configuration. */
export interface Config {
  databaseUrl: string | undefined;
  /** Largest PostgreSQL connection pool (PGlite has one connection and ignores it). */
  databasePoolSize: number;
  dataDir: string;
  mcpConfigPath: string;
  /**
   * The key (base64 of 32 bytes) that seals OAuth connection secrets at rest, and older keys (comma-separated) that
   * still open rows until they are sealed again under it; needed only when an MCP server has "auth".
   */
  secretsKey: string | undefined;
  secretsOldKeys: string[];
  /** The Assistants bootstrap file when named (it must exist); unset: `./assistants.json`, read only if it exists. */
  assistantsFile: string | undefined;
  llm: {
    openai?: {
      apiKey: string;
      baseURL?: string;
      structuredOutput: 'native' | 'prompt';
      /** Unset: `max_completion_tokens`. */
      maxTokensField?: 'max_completion_tokens' | 'max_tokens';
    };
    anthropic?: { apiKey: string; baseURL?: string };
    models: Record<ModelRole, string>;
    /** Where each role's model came from: its variable, `STEWARD_MODEL`, the catalog's roles, or the default. */
    modelSources: Record<ModelRole, string>;
    /** The model catalog (models.json), when there is one: named models, their capabilities and prices. */
    catalog?: ModelCatalog;
  };
  settings: {
    maxParallel: number;
    maxAttempts: number;
    amendmentCap: number;
    maxRepairs: number;
    reviewTimeoutMs: number;
    /** How long an MCP server's question waits for an answer before it is declined. */
    questionTimeoutMs: number;
    leaseMs: number;
    approvers: string[];
    /** Most tools the planner is shown; a larger catalog is narrowed to those that fit the request. */
    plannerTools: number;
    /** The zone of a workflow schedule that names none. */
    timeZone: string;
    /** How often schedules may fire, and how many may be live. */
    scheduleLimits: ScheduleLimits;
    /** Quick answers' caps; undefined when STEWARD_QUICK_ANSWERS is off. */
    quickAnswers: { maxTurns: number; maxTokens: number; frontDesk: 'beside' | 'after' } | undefined;
    /** `perCall`: the most tokens one answer of each role may take (lowered further by what the budgets have left). */
    budgets: { perRun: number; perUserPerDay: number; perCall: Record<ModelRole, number> };
    /** The brakes on delegation, judged in the database (`DelegationStore`). */
    delegation: DelegationLimits;
    /** How long a delegate step waits for its child run before stopping it. */
    delegateTimeoutMs: number;
    /** The catalog's priced models (empty without a catalog): a call's cost, else "cost unknown". */
    modelPrices: PricedModel[];
    /** The catalog's model names (empty without a catalog): what an Assistant's model per role may name. */
    modelNames: string[];
    /** Spend caps (micro-dollars), the price of an unpriced model, and each role's model for pricing a call. */
    spend: SpendSettings;
  };
  /** Things worth saying at start that do not stop it (a role given a model it merely prefers otherwise). */
  warnings: string[];
  logFile: string | undefined;
  /** On SIGTERM, how long steps in flight may take to end before their runs are handed over. */
  shutdownGraceMs: number;
  /** Slack, when SLACK_BOT_TOKEN is set: Socket Mode with an app token, else HTTP on `port` with the signing secret. */
  slack:
    | {
        botToken: string;
        appToken?: string;
        signingSecret?: string;
        apiUrl?: string;
        port: number;
        /** Cards show steps as Slack's plan block (until the workspace refuses one). */
        planBlocks: boolean;
      }
    | undefined;
  /** Discord, when DISCORD_TOKEN is set (with Slack or alone). */
  discord:
    | {
        token: string;
        /** The REST API's base (tests: a local fake); the gateway's address comes from it. */
        apiUrl?: string;
        /** Register `/steward` in this server only (seen at once); unset: globally (seen within the hour). */
        guildId?: string;
        /** Ask for the privileged Message Content intent, so thread replies need not mention the bot. */
        messageContent: boolean;
      }
    | undefined;
  /** Port of `/healthz` and `/readyz` (0: a free one); off when undefined. */
  healthPort: number | undefined;
  /** The read-only web dashboard, when STEWARD_DASHBOARD_PORT is set. */
  dashboard: DashboardConfig | undefined;
  /** Values that must never be printed: keys, and the database URL (it may hold a password). */
  secrets: string[];
  /** OpenTelemetry traces, exported over OTLP/HTTP when an OTLP endpoint is set; off when undefined. */
  tracing: TracingConfig | undefined;
}

/** Where and how traces go (docs/operations.md, "Traces"). */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else the endpoint with `/v1/traces`. */
  url: string;
  serviceName: string;
  /** Step arguments and outputs go on spans (cut short, secrets masked): `STEWARD_OTEL_CONTENT=on`. */
  content: boolean;
}

/** The web dashboard's settings. */
export interface DashboardConfig {
  /** 0: a free one. */
  port: number;
  /** The address it listens on: 127.0.0.1 unless set (a proxy on the same machine reaches it; nothing else does). */
  host: string;
  /** The address people open (behind a proxy, the proxy's), for sign-in links; no trailing slash. Unset: the port's. */
  publicUrl: string | undefined;
  /** Signs session cookies; at least 32 characters, never printed. */
  secret: string;
}

/** The shortest cookie-signing secret accepted: 32 characters of a random string is well past guessing. */
export const MIN_DASHBOARD_SECRET = 32;

const DEFAULT_MODELS = {
  openai: { planner: 'gpt-4.1', classifier: 'gpt-4.1-mini', synthesizer: 'gpt-4.1', llm_step: 'gpt-4.1-mini' },
  anthropic: {
    planner: 'claude-sonnet-4-5',
    classifier: 'claude-haiku-4-5',
    synthesizer: 'claude-sonnet-4-5',
    llm_step: 'claude-haiku-4-5',
  },
} as const;

/** Reads and validates configuration from an environment object. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new StewardError('config', badSettingSentence(env, parsed.error.issues[0]));
  const e = parsed.data;
  // A custom OpenAI-compatible server (Ollama, vLLM, LM Studio) usually needs no key.
  const openai =
    e.OPENAI_API_KEY || e.OPENAI_BASE_URL
      ? {
          apiKey: e.OPENAI_API_KEY ?? 'not-needed',
          baseURL: e.OPENAI_BASE_URL,
          structuredOutput: e.OPENAI_STRUCTURED_OUTPUT,
          maxTokensField: e.OPENAI_MAX_TOKENS_FIELD,
        }
      : undefined;
  const anthropic = e.ANTHROPIC_API_KEY ? { apiKey: e.ANTHROPIC_API_KEY, baseURL: e.ANTHROPIC_BASE_URL } : undefined;
  if (!openai && !anthropic) {
    throw new StewardError(
      'config',
      'No language model is configured. Set OPENAI_API_KEY (or OPENAI_BASE_URL for any OpenAI-compatible server: a local Ollama works with OPENAI_BASE_URL=http://localhost:11434/v1 and STEWARD_MODEL=llama3.1), or ANTHROPIC_API_KEY, in .env (start from it with `cp .env.example .env`) or in the environment.',
    );
  }
  if (e.SLACK_BOT_TOKEN && !e.SLACK_APP_TOKEN && !e.SLACK_SIGNING_SECRET) {
    throw new StewardError(
      'config',
      'Configuration error: SLACK_BOT_TOKEN is set, but neither SLACK_APP_TOKEN (Socket Mode, e.g. SLACK_APP_TOKEN=xapp-1-…) nor SLACK_SIGNING_SECRET (HTTP mode on PORT) is: set one of them in .env. See docs/slack.md.',
    );
  }
  const dashboard = dashboardConfig(e);
  const local = openai && !e.OPENAI_API_KEY;
  const fromEnv = {
    planner: e.STEWARD_MODEL_PLANNER,
    classifier: e.STEWARD_MODEL_CLASSIFIER,
    synthesizer: e.STEWARD_MODEL_SYNTHESIZER,
    llm_step: e.STEWARD_MODEL_LLM_STEP,
    butler: e.STEWARD_MODEL_BUTLER,
  };
  const catalog = loadModelCatalog(e.STEWARD_MODEL_CATALOG, Object.keys(fromEnv));
  // A role's own variable wins over the catalog's roles, which win over STEWARD_MODEL (the setting for the rest).
  const pick = (role: ModelRole) => fromEnv[role] ?? catalog?.roles[role];
  // The butler needs no model of its own: unnamed, it takes the classifier's.
  const named = (Object.keys(fromEnv) as ModelRole[]).filter((r) => r !== 'butler').map(pick);
  if (local && !anthropic && !e.STEWARD_MODEL && named.some((m) => !m)) {
    // A local server has no gpt-4.1: guessing a model name would only fail later, at the first request.
    throw new StewardError(
      'config',
      'OPENAI_BASE_URL is set without OPENAI_API_KEY, so it points at a server of your own, whose models Steward cannot guess: set STEWARD_MODEL in .env to one of its models (for Ollama, e.g. STEWARD_MODEL=llama3.1), or a model per role (STEWARD_MODEL_PLANNER and the others), or name them in a model catalog (models.local.json.example).',
    );
  }
  const base = openai ? DEFAULT_MODELS.openai : DEFAULT_MODELS.anthropic;
  const all = e.STEWARD_MODEL;
  const defaults = all ? { planner: all, classifier: all, synthesizer: all, llm_step: all } : base;
  const models = {
    planner: pick('planner') ?? defaults.planner,
    classifier: pick('classifier') ?? defaults.classifier,
    synthesizer: pick('synthesizer') ?? defaults.synthesizer,
    llm_step: pick('llm_step') ?? defaults.llm_step,
    // The quick-answer loop is a short, cheap one: the classifier's model unless one is named.
    butler: pick('butler') ?? pick('classifier') ?? defaults.classifier,
  };
  const sourceOf = (role: ModelRole): string => {
    if (fromEnv[role]) return `STEWARD_MODEL_${role.toUpperCase()}`;
    if (catalog?.roles[role]) return `roles.${role} of ${catalog.source}`;
    if (role === 'butler') return sourceOf('classifier');
    return all ? 'STEWARD_MODEL' : `the ${openai ? 'OpenAI' : 'Anthropic'} default`;
  };
  const roles: ModelRole[] = ['planner', 'classifier', 'synthesizer', 'llm_step', 'butler'];
  const modelSources = Object.fromEntries(roles.map((r) => [r, sourceOf(r)])) as Record<ModelRole, string>;
  const configured = { openai: openai !== undefined, anthropic: anthropic !== undefined };
  // The butler is checked only when quick answers are on. One that merely inherits a classifier model the catalog
  // says cannot call tools turns quick answers off with a warning, instead of stopping a Steward that never asked.
  let quick = e.STEWARD_QUICK_ANSWERS === 'on';
  const checked: Partial<typeof models> = { ...models };
  const inherited = quick && catalog && pick('butler') === undefined && !callsTools(models.butler, catalog);
  if (!quick || inherited) delete checked.butler;
  const warnings = catalog ? [...checkRoleModels(checked, catalog), ...unreachableModels(catalog, configured)] : [];
  if (inherited) {
    quick = false;
    warnings.push(
      `Quick answers are off: they take the classifier's model "${models.butler}", which ${catalog.source} does not mark "callsTools": true. Name one that does with STEWARD_MODEL_BUTLER or the catalog's roles.butler.`,
    );
  }
  const tracing = tracingConfig(e);
  const protocol = e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (tracing && protocol === 'grpc')
    warnings.push(
      `Traces go over OTLP/HTTP in JSON only, not gRPC as OTEL_EXPORTER_OTLP_${e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'TRACES_' : ''}PROTOCOL says: point ${e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'} at the collector's OTLP/HTTP port (4318 by default), not its gRPC one.`,
    );
  return {
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.STEWARD_DB_POOL_SIZE,
    healthPort: e.STEWARD_HEALTH_PORT,
    tracing,
    dashboard,
    dataDir: e.DATA_DIR,
    mcpConfigPath: e.MCP_CONFIG,
    secretsKey: e.STEWARD_SECRETS_KEY,
    secretsOldKeys: (e.STEWARD_SECRETS_OLD_KEYS ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== ''),
    assistantsFile: e.STEWARD_ASSISTANTS_FILE,
    llm: {
      openai,
      anthropic,
      models,
      modelSources,
      ...(catalog && { catalog }),
    },
    settings: {
      maxParallel: e.STEWARD_MAX_PARALLEL,
      maxAttempts: e.STEWARD_MAX_ATTEMPTS,
      amendmentCap: e.STEWARD_AMENDMENT_CAP,
      maxRepairs: 2,
      reviewTimeoutMs: e.STEWARD_REVIEW_TIMEOUT_SECONDS * 1000,
      questionTimeoutMs: Math.round(e.STEWARD_QUESTION_TIMEOUT_SECONDS * 1000),
      leaseMs: Math.round(e.STEWARD_LEASE_SECONDS * 1000),
      approvers: (e.STEWARD_APPROVERS ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      plannerTools: e.STEWARD_PLANNER_TOOLS,
      timeZone: e.STEWARD_TIME_ZONE,
      scheduleLimits: {
        minIntervalMs: e.STEWARD_SCHEDULE_MIN_MINUTES * 60_000,
        perPerson: e.STEWARD_SCHEDULES_PER_PERSON,
        perChannel: e.STEWARD_SCHEDULES_PER_CHANNEL,
        firesPerDay: e.STEWARD_WORKFLOW_FIRES_PER_DAY,
        seconds: e.STEWARD_SCHEDULE_SECONDS === 'on',
      },
      quickAnswers: quick
        ? {
            maxTurns: e.STEWARD_QUICK_MAX_TURNS,
            maxTokens: e.STEWARD_QUICK_MAX_TOKENS,
            frontDesk: e.STEWARD_QUICK_PLANNER,
          }
        : undefined,
      budgets: {
        perRun: e.STEWARD_TOKENS_PER_RUN,
        perUserPerDay: e.STEWARD_TOKENS_PER_USER_PER_DAY,
        perCall: {
          planner: e.STEWARD_MAX_OUTPUT_TOKENS_PLANNER,
          classifier: e.STEWARD_MAX_OUTPUT_TOKENS_CLASSIFIER,
          synthesizer: e.STEWARD_MAX_OUTPUT_TOKENS_SYNTHESIZER,
          llm_step: e.STEWARD_MAX_OUTPUT_TOKENS_LLM_STEP,
          butler: e.STEWARD_MAX_OUTPUT_TOKENS_BUTLER,
        },
      },
      delegation: {
        depth: e.STEWARD_DELEGATION_DEPTH,
        concurrency: e.STEWARD_DELEGATION_CONCURRENCY,
        rounds: e.STEWARD_DELEGATION_ROUNDS,
        messages: e.STEWARD_DELEGATION_MESSAGES,
      },
      delegateTimeoutMs: e.STEWARD_DELEGATE_TIMEOUT_SECONDS * 1000,
      modelPrices: pricedModels(catalog),
      modelNames: Object.keys(catalog?.models ?? {}),
      spend: {
        caps: spendCaps(e),
        defaultPricePerMillion: e.STEWARD_SPEND_DEFAULT_PRICE,
        roleModels: roleModels(models, catalog),
      },
    },
    warnings,
    logFile: e.STEWARD_LOG_FILE,
    shutdownGraceMs: Math.round(e.STEWARD_SHUTDOWN_GRACE_SECONDS * 1000),
    slack: e.SLACK_BOT_TOKEN
      ? {
          botToken: e.SLACK_BOT_TOKEN,
          appToken: e.SLACK_APP_TOKEN,
          signingSecret: e.SLACK_SIGNING_SECRET,
          apiUrl: e.SLACK_API_URL,
          port: e.PORT,
          planBlocks: e.SLACK_PLAN_BLOCKS === 'on',
        }
      : undefined,
    discord: e.DISCORD_TOKEN
      ? {
          token: e.DISCORD_TOKEN,
          apiUrl: e.DISCORD_API_URL,
          guildId: e.DISCORD_GUILD_ID,
          messageContent: e.DISCORD_MESSAGE_CONTENT === 'on',
        }
      : undefined,
    secrets: secretValues(e).filter((s) => s.length >= 6),
  };
}

const SECRET_NAMES = [
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'DATABASE_URL',
  'SLACK_BOT_TOKEN',
  'SLACK_APP_TOKEN',
  'SLACK_SIGNING_SECRET',
  'DISCORD_TOKEN',
  'STEWARD_DASHBOARD_SECRET',
  'STEWARD_SECRETS_KEY',
  'STEWARD_SECRETS_OLD_KEYS',
] as const;
type SecretName = (typeof SECRET_NAMES)[number];

/** The secret values set in the environment (keys, tokens, the database URL), to keep out of logs and messages. */
export function secretValues(e: Partial<Record<SecretName, string | undefined>>): string[] {
  return [
    e.OPENAI_API_KEY,
    e.ANTHROPIC_API_KEY,
    e.DATABASE_URL,
    e.SLACK_BOT_TOKEN,
    e.SLACK_APP_TOKEN,
    e.SLACK_SIGNING_SECRET,
    e.DISCORD_TOKEN,
    e.STEWARD_DASHBOARD_SECRET,
    e.STEWARD_SECRETS_KEY,
    ...(e.STEWARD_SECRETS_OLD_KEYS ?? '').split(','),
  ].filter((s): s is string => !!s);
}

/** The first bad setting as a sentence naming the variable, the value's problem and a good value. */
function badSettingSentence(env: NodeJS.ProcessEnv, issue: z.core.$ZodIssue | undefined): string {
  const name = String(issue?.path[0] ?? '');
  if (!issue || !(name in envSchema.shape)) return `Configuration error: ${issue?.message ?? 'invalid'}`;
  const meta = envSchema.shape[name as keyof typeof envSchema.shape].meta();
  const secret = (SECRET_NAMES as readonly string[]).includes(name);
  return configIssueSentence(name, env[name], issue, isSettingHint(meta) ? meta : undefined, secret);
}

/** The dashboard's settings when its port is set; a missing or short secret stops start-up (its value is never shown). */
function dashboardConfig(e: {
  STEWARD_DASHBOARD_PORT?: number | undefined;
  STEWARD_DASHBOARD_HOST: string;
  STEWARD_DASHBOARD_URL?: string | undefined;
  STEWARD_DASHBOARD_SECRET?: string | undefined;
}): DashboardConfig | undefined {
  const port = e.STEWARD_DASHBOARD_PORT;
  if (port === undefined) return undefined;
  const secret = e.STEWARD_DASHBOARD_SECRET ?? '';
  if (secret.length < MIN_DASHBOARD_SECRET)
    throw new StewardError(
      'config',
      `Configuration error: STEWARD_DASHBOARD_PORT is set, so STEWARD_DASHBOARD_SECRET must be a random string of at least ${MIN_DASHBOARD_SECRET} characters (it signs the dashboard's session cookies), e.g. the output of \`openssl rand -base64 48\`.${secret ? ` The one set has ${secret.length}.` : ''}`,
    );
  const publicUrl = e.STEWARD_DASHBOARD_URL?.replace(/\/+$/, '');
  return { port, host: e.STEWARD_DASHBOARD_HOST, publicUrl, secret };
}

/** The catalog's models that have prices, each with the provider's model id its answers name. */
function pricedModels(catalog: ModelCatalog | undefined): PricedModel[] {
  return Object.values(catalog?.models ?? {}).flatMap((m) =>
    m.prices
      ? [
          {
            name: m.name,
            model: m.spec
              .trim()
              .replace(/^(openai|anthropic):/, '')
              .trim(),
            prices: m.prices,
          },
        ]
      : [],
  );
}

/** The spend caps in micro-dollars, from `STEWARD_SPEND_<SCOPE>_<PERIOD>` in US dollars. */
function spendCaps(e: z.infer<typeof envSchema>): SpendCaps {
  const micro = (usd: number | undefined) => (usd === undefined ? null : Math.round(usd * 1_000_000));
  return {
    channel: { day: micro(e.STEWARD_SPEND_CHANNEL_DAY), month: micro(e.STEWARD_SPEND_CHANNEL_MONTH) },
    workspace: { day: micro(e.STEWARD_SPEND_WORKSPACE_DAY), month: micro(e.STEWARD_SPEND_WORKSPACE_MONTH) },
    person: { day: micro(e.STEWARD_SPEND_PERSON_DAY), month: micro(e.STEWARD_SPEND_PERSON_MONTH) },
  };
}

/** Each role's model as the router sends it: the provider's id (no provider prefix) and its catalog name. */
function roleModels(models: Record<ModelRole, string>, catalog: ModelCatalog | undefined): RoleModels {
  const out: Partial<Record<ModelRole, { model: string; modelName?: string }>> = {};
  for (const [role, given] of Object.entries(models) as [ModelRole, string][]) {
    const { spec, name } = resolveModel(given, catalog);
    const model = spec
      .trim()
      .replace(/^(openai|anthropic):/, '')
      .trim();
    out[role] = name === undefined ? { model } : { model, modelName: name };
  }
  return out;
}

/** Whether a role's model can call tools by the catalog: a model the catalog does not list is taken at its word. */
function callsTools(value: string, catalog: ModelCatalog): boolean {
  const { name } = resolveModel(value, catalog);
  const model = name === undefined ? undefined : catalog.models[name];
  return !model || model.capabilities.includes('callsTools');
}

/**
 * Traces are on when an OTLP endpoint is set. As the OpenTelemetry spec says, the traces endpoint is used as it is and
 * the general one gets `v1/traces` appended (https://opentelemetry.io/docs/specs/otel/protocol/exporter/).
 */
function tracingConfig(e: {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_SERVICE_NAME: string;
  STEWARD_OTEL_CONTENT: 'on' | 'off';
}): TracingConfig | undefined {
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (url === undefined) return undefined;
  return { url, serviceName: e.OTEL_SERVICE_NAME, content: e.STEWARD_OTEL_CONTENT === 'on' };
}
