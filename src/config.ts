/**
 * Configuration from the environment (and `.env`), validated with zod at start.
 * A bad value stops start-up with one message naming the variable.
 */
import type { ScheduleLimits } from './engine/workflow/schedule-limits.ts';
import { isIP } from 'node:net';
import { z } from 'zod';
import { configIssueSentence, isSettingHint, type SettingHint } from './config-errors.ts';
import { StewardError } from './engine/errors.ts';
import { DEFAULT_OUTPUT_CAPS } from './engine/flows/deps.ts';
import { DEFAULT_PLANNER_TOOLS } from './engine/plan/tool-selection.ts';
import { DEFAULT_DELEGATION_LIMITS, DEPTH_CEILING, type DelegationLimits } from './engine/assistant/delegations.ts';
import { DEFAULT_DELEGATE_TIMEOUT_MS } from './engine/assistant/delegate-tool.ts';
import { DEFAULT_PRICE_PER_MILLION, type PricedModel, type RoleModels } from './engine/model-cost.ts';
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

// An empty value means "not set", not zero.
const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
/** A setting's schema with what it must be and a value that works, for the sentence a bad value gets. */
const hinted = <T extends z.ZodType>(schema: T, expected: string, example: string | number) =>
  schema.meta({ expected, example: String(example) } satisfies SettingHint);
const positiveInt = (fallback: number) =>
  hinted(
    z.preprocess(blankToUndefined, z.coerce.number().int().positive().default(fallback)),
    'a whole number of 1 or more',
    fallback,
  );
/** A whole number from `min` to `max`, or unset. */
const wholeNumber = (min: number, max: number, example: number, what = `a whole number from ${min} to ${max}`) =>
  hinted(z.preprocess(blankToUndefined, z.coerce.number().int().min(min).max(max).optional()), what, example);
/** A number of seconds (fractions allowed) from `min` to `max`. */
const seconds = (min: number, max: number, fallback: number) =>
  hinted(
    z.preprocess(blankToUndefined, z.coerce.number().min(min).max(max).default(fallback)),
    `a number of seconds from ${min} to ${max}`,
    fallback,
  );
const choiceWords = (values: readonly string[]) =>
  values.length === 2 ? `${values[0]} or ${values[1]}` : `one of ${values.join(', ')}`;
/** One of a few words, `fallback` when unset. */
const choice = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  hinted(z.preprocess(blankToUndefined, z.enum(values).default(fallback)), choiceWords(values), fallback);
/** One of a few words, or unset. */
const optionalChoice = <const T extends readonly [string, ...string[]]>(values: T) =>
  hinted(z.preprocess(blankToUndefined, z.enum(values).optional()), choiceWords(values), values[0]);
const port = (example: number) =>
  wholeNumber(0, 65_535, example, 'a port number from 0 to 65535 (0 picks a free port)');
/** A folder or file path that may be left out but not set empty. */
const path = (fallback: string, what: string) => hinted(z.string().trim().min(1).default(fallback), what, fallback);
const optionalText = z.string().trim().min(1).optional().catch(undefined);
// A base URL without a scheme ("localhost:11434/v1") parses as a URL of scheme "localhost:" and fails only at the
// first request, with an error about the protocol: refuse it at start, showing the form that works.
const httpUrl = (example: string) =>
  hinted(
    z.preprocess(
      blankToUndefined,
      z
        .string()
        .trim()
        .refine(
          (v) => /^https?:\/\/[^/\s]/i.test(v) && URL.canParse(v),
          `must be an http:// or https:// URL, e.g. ${example}`,
        )
        .optional(),
    ),
    'an http:// or https:// URL',
    example,
  );

/** The largest spend cap accepted, in US dollars: its micro-dollars stay well inside exact integers. */
const MAX_SPEND_USD = 1_000_000_000;

/**
 * A spend cap in US dollars (`5`, `12.50`, `0.25`), or no cap (unset, empty or `off`). A currency sign, a comma or a
 * negative amount is refused by name, so a typo never silently means "no cap".
 */
const spendCap = hinted(
  z.preprocess(
    (v) => (typeof v === 'string' && (v.trim() === '' || v.trim().toLowerCase() === 'off') ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^\d+(\.\d{1,6})?$/, 'must be an amount in US dollars such as 5 or 12.50 (no currency sign), or off')
      .transform(Number)
      .refine((n) => n <= MAX_SPEND_USD, `must be at most ${MAX_SPEND_USD} US dollars`)
      .optional(),
  ),
  'an amount in US dollars, or off',
  '12.50',
);

/**
 * PostgreSQL connections one Steward process may hold (STEWARD_DB_POOL_SIZE). PostgreSQL allows 100 connections by
 * default and keeps 3 for superusers: at 10 each, two Steward processes overlapping in a deploy and a third (a bench,
 * a test run, a second instance) hold 30, leaving over 60 for migrations, psql, backups, monitoring and other apps.
 * A larger pool bought nothing in the bench: at 100 runs at once the wait for a connection comes from Steward's busy
 * event loop, and 20 connections waited as long as 10 (and opened more connections, each one slow on a busy host).
 */
export const DEFAULT_DB_POOL_SIZE = 10;

/**
 * Steps of one run that may run at once (STEWARD_MAX_PARALLEL). At 4, the bench's fan-outs of 8 and 16 ran in 2 and
 * 4 waves, each as long as its slowest call, while a ReAct agent sends such calls together. 16 runs every fan-out of
 * the bench in one wave and still bounds what one run holds at once (calls, llm steps, their outputs in memory). It
 * no longer has to protect servers: `maxConcurrency` in mcp.json limits each server across all runs.
 */
export const DEFAULT_MAX_PARALLEL = 16;

const envSchema = z.object({
  DATABASE_URL: hinted(
    z.preprocess(
      blankToUndefined,
      z
        .string()
        .trim()
        .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
        .optional(),
    ),
    'a PostgreSQL URL',
    'postgres://steward:password@localhost:5432/steward',
  ),
  STEWARD_DB_POOL_SIZE: positiveInt(DEFAULT_DB_POOL_SIZE),
  DATA_DIR: path('./data', 'the folder for the embedded database and the log'),
  MCP_CONFIG: path('./mcp.json', 'the path of the MCP server config file'),
  STEWARD_ASSISTANTS_FILE: optionalText,
  STEWARD_SECRETS_KEY: optionalText,
  STEWARD_SECRETS_OLD_KEYS: optionalText,
  OPENAI_API_KEY: optionalText,
  OPENAI_BASE_URL: httpUrl('http://localhost:11434/v1'),
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: httpUrl('https://api.anthropic.com'),
  OPENAI_STRUCTURED_OUTPUT: choice(['native', 'prompt'], 'native'),
  OPENAI_MAX_TOKENS_FIELD: optionalChoice(['max_completion_tokens', 'max_tokens']),
  STEWARD_MODEL: optionalText,
  STEWARD_MODEL_PLANNER: optionalText,
  STEWARD_MODEL_CLASSIFIER: optionalText,
  STEWARD_MODEL_SYNTHESIZER: optionalText,
  STEWARD_MODEL_LLM_STEP: optionalText,
  STEWARD_MODEL_CATALOG: optionalText,
  STEWARD_MODEL_BUTLER: optionalText,
  STEWARD_MAX_PARALLEL: positiveInt(DEFAULT_MAX_PARALLEL),
  STEWARD_MAX_ATTEMPTS: positiveInt(3),
  STEWARD_AMENDMENT_CAP: hinted(
    z.preprocess(blankToUndefined, z.coerce.number().int().min(0).default(3)),
    'a whole number of 0 or more (0 turns amendments off)',
    3,
  ),
  STEWARD_REVIEW_TIMEOUT_SECONDS: positiveInt(900),
  // How long an MCP server's question waits for an answer; fractions allowed (tests use short ones).
  STEWARD_QUESTION_TIMEOUT_SECONDS: seconds(0.5, 86_400, 600),
  // How long a run's lease lasts unless renewed; fractions allowed (tests use short leases).
  STEWARD_LEASE_SECONDS: hinted(
    z.preprocess(
      blankToUndefined,
      z.coerce.number().min(1, 'must be at least 1 (a shorter lease lapses between renewals)').max(3600).default(15),
    ),
    'a number of seconds from 1 to 3600',
    15,
  ),
  STEWARD_SHUTDOWN_GRACE_SECONDS: seconds(0, 3600, 20),
  STEWARD_LOG_FILE: optionalText,
  STEWARD_APPROVERS: z.string().optional(),
  STEWARD_TIME_ZONE: hinted(
    z.preprocess(
      blankToUndefined,
      z.string().refine(isTimeZone, 'must be an IANA time zone such as Europe/Berlin or UTC').default('UTC'),
    ),
    'an IANA time zone',
    'Europe/Berlin',
  ),
  // Schedule limits (engine/workflow/schedule-limits.ts): how often, how many, and whether to the second.
  STEWARD_SCHEDULE_MIN_MINUTES: hinted(
    z.preprocess(blankToUndefined, z.coerce.number().min(0).max(1440).default(5)),
    'a number of minutes from 0 to 1440 (0 turns the check off)',
    5,
  ),
  STEWARD_SCHEDULES_PER_PERSON: positiveInt(10),
  STEWARD_SCHEDULES_PER_CHANNEL: positiveInt(20),
  STEWARD_WORKFLOW_FIRES_PER_DAY: positiveInt(48),
  STEWARD_SCHEDULE_SECONDS: choice(['on', 'off'], 'off'),
  // Spend caps in US dollars per UTC day and month; unset or off: no cap (spend is still counted).
  STEWARD_SPEND_CHANNEL_DAY: spendCap,
  STEWARD_SPEND_CHANNEL_MONTH: spendCap,
  STEWARD_SPEND_WORKSPACE_DAY: spendCap,
  STEWARD_SPEND_WORKSPACE_MONTH: spendCap,
  STEWARD_SPEND_PERSON_DAY: spendCap,
  STEWARD_SPEND_PERSON_MONTH: spendCap,
  // US dollars per million tokens (input and output alike) for a model the catalog does not price: never free.
  STEWARD_SPEND_DEFAULT_PRICE: hinted(
    z.preprocess(
      blankToUndefined,
      z.coerce
        .number({ message: 'must be a price in US dollars per million tokens, such as 15' })
        .finite('must be a price in US dollars per million tokens, such as 15')
        .positive('must be more than 0: a model without a price is never counted as free')
        .max(10_000, 'must be at most 10000 US dollars per million tokens')
        .default(DEFAULT_PRICE_PER_MILLION),
    ),
    'a price in US dollars per million tokens',
    DEFAULT_PRICE_PER_MILLION,
  ),
  STEWARD_TOKENS_PER_RUN: positiveInt(200_000),
  STEWARD_TOKENS_PER_USER_PER_DAY: positiveInt(2_000_000),
  STEWARD_MAX_OUTPUT_TOKENS_PLANNER: positiveInt(DEFAULT_OUTPUT_CAPS.planner),
  STEWARD_MAX_OUTPUT_TOKENS_CLASSIFIER: positiveInt(DEFAULT_OUTPUT_CAPS.classifier),
  STEWARD_MAX_OUTPUT_TOKENS_SYNTHESIZER: positiveInt(DEFAULT_OUTPUT_CAPS.synthesizer),
  STEWARD_MAX_OUTPUT_TOKENS_LLM_STEP: positiveInt(DEFAULT_OUTPUT_CAPS.llm_step),
  STEWARD_PLANNER_TOOLS: positiveInt(DEFAULT_PLANNER_TOOLS),
  STEWARD_MAX_OUTPUT_TOKENS_BUTLER: positiveInt(DEFAULT_OUTPUT_CAPS.butler),
  STEWARD_QUICK_ANSWERS: choice(['on', 'off'], 'on'),
  STEWARD_QUICK_MAX_TURNS: positiveInt(4),
  STEWARD_QUICK_MAX_TOKENS: positiveInt(12_000),
  // Brakes on delegation; a depth above the ceiling is lowered to it (the ceiling is not a setting).
  STEWARD_DELEGATION_DEPTH: hinted(
    positiveInt(DEFAULT_DELEGATION_LIMITS.depth).transform((n) => Math.min(n, DEPTH_CEILING)),
    'a whole number of 1 or more',
    DEFAULT_DELEGATION_LIMITS.depth,
  ),
  STEWARD_DELEGATION_CONCURRENCY: positiveInt(DEFAULT_DELEGATION_LIMITS.concurrency),
  STEWARD_DELEGATION_ROUNDS: positiveInt(DEFAULT_DELEGATION_LIMITS.rounds),
  STEWARD_DELEGATION_MESSAGES: positiveInt(DEFAULT_DELEGATION_LIMITS.messages),
  STEWARD_DELEGATE_TIMEOUT_SECONDS: positiveInt(DEFAULT_DELEGATE_TIMEOUT_MS / 1000),
  SLACK_BOT_TOKEN: optionalText,
  SLACK_APP_TOKEN: optionalText,
  SLACK_SIGNING_SECRET: optionalText,
  SLACK_API_URL: hinted(z.preprocess(blankToUndefined, z.url().optional()), 'a URL', 'https://slack.com/api/'),
  SLACK_PLAN_BLOCKS: choice(['on', 'off'], 'on'),
  DISCORD_TOKEN: optionalText,
  DISCORD_API_URL: hinted(z.preprocess(blankToUndefined, z.url().optional()), 'a URL', 'https://discord.com/api'),
  DISCORD_GUILD_ID: hinted(
    z.preprocess(
      blankToUndefined,
      z
        .string()
        .regex(/^\d{15,22}$/, 'must be a server (guild) ID, a number of 15 to 22 digits')
        .optional(),
    ),
    'a server (guild) ID',
    '123456789012345678',
  ),
  DISCORD_MESSAGE_CONTENT: choice(['on', 'off'], 'off'),
  PORT: hinted(
    z.preprocess(blankToUndefined, z.coerce.number().int().min(0).max(65_535).default(3000)),
    'a port number from 0 to 65535 (0 picks a free port)',
    3000,
  ),
  STEWARD_HEALTH_PORT: port(8081),
  STEWARD_DASHBOARD_PORT: port(8080),
  STEWARD_DASHBOARD_HOST: hinted(
    z.preprocess(
      blankToUndefined,
      z
        .string()
        .refine(
          (h) => isIP(h) !== 0 || /^(?=.*[A-Za-z])[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/.test(h),
          'must be an address to listen on (no port), such as 127.0.0.1, 0.0.0.0, ::1 or a host name of this machine',
        )
        .default('127.0.0.1'),
    ),
    'an address to listen on',
    '0.0.0.0',
  ),
  STEWARD_DASHBOARD_URL: httpUrl('https://steward.example.com'),
  STEWARD_DASHBOARD_SECRET: optionalText,
});

/** Every environment variable Steward reads, as the schema names them (docs/configuration.md documents each). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/** The value each variable takes when it is not set, for those that have one (others are off or derived). */
export function configDefaults(): Record<string, unknown> {
  const parsed = envSchema.parse({});
  return Object.fromEntries(Object.entries(parsed).filter(([, v]) => v !== undefined));
}

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
    quickAnswers: { maxTurns: number; maxTokens: number } | undefined;
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
  return {
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.STEWARD_DB_POOL_SIZE,
    healthPort: e.STEWARD_HEALTH_PORT,
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
      quickAnswers: quick ? { maxTurns: e.STEWARD_QUICK_MAX_TURNS, maxTokens: e.STEWARD_QUICK_MAX_TOKENS } : undefined,
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

/** Whether `Intl` knows the zone (the IANA database Node ships). */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Whether a role's model can call tools by the catalog: a model the catalog does not list is taken at its word. */
function callsTools(value: string, catalog: ModelCatalog): boolean {
  const { name } = resolveModel(value, catalog);
  const model = name === undefined ? undefined : catalog.models[name];
  return !model || model.capabilities.includes('callsTools');
}
