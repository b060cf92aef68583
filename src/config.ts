/**
 * Configuration from the environment (and `.env`), validated with zod at start.
 * A bad value stops start-up with one message naming the variable.
 */
import { z } from 'zod';
import { StewardError } from './engine/errors.ts';
import { DEFAULT_OUTPUT_CAPS } from './engine/flows/deps.ts';
import { DEFAULT_PLANNER_TOOLS } from './engine/plan/tool-selection.ts';
import type { ModelRole } from './engine/ports.ts';

// An empty value means "not set", not zero.
const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const positiveInt = (fallback: number) =>
  z.preprocess(blankToUndefined, z.coerce.number().int().positive().default(fallback));
const optionalText = z.string().trim().min(1).optional().catch(undefined);
// A base URL without a scheme ("localhost:11434/v1") parses as a URL of scheme "localhost:" and fails only at the
// first request, with an error about the protocol: refuse it at start, showing the form that works.
const httpUrl = (example: string) =>
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
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  STEWARD_DB_POOL_SIZE: positiveInt(DEFAULT_DB_POOL_SIZE),
  DATA_DIR: z.string().trim().min(1).default('./data'),
  MCP_CONFIG: z.string().trim().min(1).default('./mcp.json'),
  OPENAI_API_KEY: optionalText,
  OPENAI_BASE_URL: httpUrl('http://localhost:11434/v1'),
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: httpUrl('https://api.anthropic.com'),
  OPENAI_STRUCTURED_OUTPUT: z.preprocess(blankToUndefined, z.enum(['native', 'prompt']).default('native')),
  OPENAI_MAX_TOKENS_FIELD: z.preprocess(blankToUndefined, z.enum(['max_completion_tokens', 'max_tokens']).optional()),
  STEWARD_MODEL: optionalText,
  STEWARD_MODEL_PLANNER: optionalText,
  STEWARD_MODEL_CLASSIFIER: optionalText,
  STEWARD_MODEL_SYNTHESIZER: optionalText,
  STEWARD_MODEL_LLM_STEP: optionalText,
  STEWARD_MAX_PARALLEL: positiveInt(DEFAULT_MAX_PARALLEL),
  STEWARD_MAX_ATTEMPTS: positiveInt(3),
  STEWARD_AMENDMENT_CAP: z.preprocess(blankToUndefined, z.coerce.number().int().min(0).default(3)),
  STEWARD_REVIEW_TIMEOUT_SECONDS: positiveInt(900),
  // How long a run's lease lasts unless renewed; fractions allowed (tests use short leases).
  STEWARD_LEASE_SECONDS: z.preprocess(
    blankToUndefined,
    z.coerce.number().min(1, 'must be at least 1 (a shorter lease lapses between renewals)').max(3600).default(15),
  ),
  STEWARD_SHUTDOWN_GRACE_SECONDS: z.preprocess(blankToUndefined, z.coerce.number().min(0).max(3600).default(20)),
  STEWARD_LOG_FILE: optionalText,
  STEWARD_APPROVERS: z.string().optional(),
  STEWARD_TOKENS_PER_RUN: positiveInt(200_000),
  STEWARD_TOKENS_PER_USER_PER_DAY: positiveInt(2_000_000),
  STEWARD_MAX_OUTPUT_TOKENS_PLANNER: positiveInt(DEFAULT_OUTPUT_CAPS.planner),
  STEWARD_MAX_OUTPUT_TOKENS_CLASSIFIER: positiveInt(DEFAULT_OUTPUT_CAPS.classifier),
  STEWARD_MAX_OUTPUT_TOKENS_SYNTHESIZER: positiveInt(DEFAULT_OUTPUT_CAPS.synthesizer),
  STEWARD_MAX_OUTPUT_TOKENS_LLM_STEP: positiveInt(DEFAULT_OUTPUT_CAPS.llm_step),
  STEWARD_PLANNER_TOOLS: positiveInt(DEFAULT_PLANNER_TOOLS),
  SLACK_BOT_TOKEN: optionalText,
  SLACK_APP_TOKEN: optionalText,
  SLACK_SIGNING_SECRET: optionalText,
  SLACK_API_URL: z
    .url()
    .optional()
    .or(z.literal('').transform(() => undefined)),
  SLACK_PLAN_BLOCKS: z.preprocess(blankToUndefined, z.enum(['on', 'off']).default('on')),
  PORT: z.preprocess(blankToUndefined, z.coerce.number().int().min(0).max(65_535).default(3000)),
  STEWARD_HEALTH_PORT: z.preprocess(blankToUndefined, z.coerce.number().int().min(0).max(65_535).optional()),
});

/** Validated configuration. */
export interface Config {
  databaseUrl: string | undefined;
  /** Largest PostgreSQL connection pool (PGlite has one connection and ignores it). */
  databasePoolSize: number;
  dataDir: string;
  mcpConfigPath: string;
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
  };
  settings: {
    maxParallel: number;
    maxAttempts: number;
    amendmentCap: number;
    maxRepairs: number;
    reviewTimeoutMs: number;
    leaseMs: number;
    approvers: string[];
    /** Most tools the planner is shown; a larger catalog is narrowed to those that fit the request. */
    plannerTools: number;
    /** `perCall`: the most tokens one answer of each role may take (lowered further by what the budgets have left). */
    budgets: { perRun: number; perUserPerDay: number; perCall: Record<ModelRole, number> };
  };
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
  /** Port of `/healthz` and `/readyz` (0: a free one); off when undefined. */
  healthPort: number | undefined;
  /** Values that must never be printed: keys, and the database URL (it may hold a password). */
  secrets: string[];
}

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
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StewardError(
      'config',
      `Configuration error: ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`,
    );
  }
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
      'No language model is configured. Set OPENAI_API_KEY (or OPENAI_BASE_URL for any OpenAI-compatible server: a local Ollama works with OPENAI_BASE_URL=http://localhost:11434/v1 and STEWARD_MODEL=llama3.1), or ANTHROPIC_API_KEY.',
    );
  }
  if (e.SLACK_BOT_TOKEN && !e.SLACK_APP_TOKEN && !e.SLACK_SIGNING_SECRET) {
    throw new StewardError(
      'config',
      'Configuration error: SLACK_BOT_TOKEN is set, but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP mode on PORT). See docs/slack.md.',
    );
  }
  const local = openai && !e.OPENAI_API_KEY;
  const named = [
    e.STEWARD_MODEL_PLANNER,
    e.STEWARD_MODEL_CLASSIFIER,
    e.STEWARD_MODEL_SYNTHESIZER,
    e.STEWARD_MODEL_LLM_STEP,
  ];
  if (local && !anthropic && !e.STEWARD_MODEL && named.some((m) => !m)) {
    // A local server has no gpt-4.1: guessing a model name would only fail later, at the first request.
    throw new StewardError(
      'config',
      'OPENAI_BASE_URL points at a local server: set STEWARD_MODEL to one of its models (for Ollama, e.g. STEWARD_MODEL=llama3.1), or a model per role.',
    );
  }
  const base = openai ? DEFAULT_MODELS.openai : DEFAULT_MODELS.anthropic;
  const all = e.STEWARD_MODEL;
  const defaults = all ? { planner: all, classifier: all, synthesizer: all, llm_step: all } : base;
  return {
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.STEWARD_DB_POOL_SIZE,
    healthPort: e.STEWARD_HEALTH_PORT,
    dataDir: e.DATA_DIR,
    mcpConfigPath: e.MCP_CONFIG,
    llm: {
      openai,
      anthropic,
      models: {
        planner: e.STEWARD_MODEL_PLANNER ?? defaults.planner,
        classifier: e.STEWARD_MODEL_CLASSIFIER ?? defaults.classifier,
        synthesizer: e.STEWARD_MODEL_SYNTHESIZER ?? defaults.synthesizer,
        llm_step: e.STEWARD_MODEL_LLM_STEP ?? defaults.llm_step,
      },
    },
    settings: {
      maxParallel: e.STEWARD_MAX_PARALLEL,
      maxAttempts: e.STEWARD_MAX_ATTEMPTS,
      amendmentCap: e.STEWARD_AMENDMENT_CAP,
      maxRepairs: 2,
      reviewTimeoutMs: e.STEWARD_REVIEW_TIMEOUT_SECONDS * 1000,
      leaseMs: Math.round(e.STEWARD_LEASE_SECONDS * 1000),
      approvers: (e.STEWARD_APPROVERS ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      plannerTools: e.STEWARD_PLANNER_TOOLS,
      budgets: {
        perRun: e.STEWARD_TOKENS_PER_RUN,
        perUserPerDay: e.STEWARD_TOKENS_PER_USER_PER_DAY,
        perCall: {
          planner: e.STEWARD_MAX_OUTPUT_TOKENS_PLANNER,
          classifier: e.STEWARD_MAX_OUTPUT_TOKENS_CLASSIFIER,
          synthesizer: e.STEWARD_MAX_OUTPUT_TOKENS_SYNTHESIZER,
          llm_step: e.STEWARD_MAX_OUTPUT_TOKENS_LLM_STEP,
        },
      },
    },
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
    secrets: secretValues(e).filter((s) => s.length >= 6),
  };
}

type SecretName =
  | 'OPENAI_API_KEY'
  | 'ANTHROPIC_API_KEY'
  | 'DATABASE_URL'
  | 'SLACK_BOT_TOKEN'
  | 'SLACK_APP_TOKEN'
  | 'SLACK_SIGNING_SECRET';

/** The secret values set in the environment (keys, tokens, the database URL), to keep out of logs and messages. */
export function secretValues(e: Partial<Record<SecretName, string | undefined>>): string[] {
  return [
    e.OPENAI_API_KEY,
    e.ANTHROPIC_API_KEY,
    e.DATABASE_URL,
    e.SLACK_BOT_TOKEN,
    e.SLACK_APP_TOKEN,
    e.SLACK_SIGNING_SECRET,
  ].filter((s): s is string => !!s);
}
