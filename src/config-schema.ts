/**
 * The environment variables Steward reads, as one zod schema: each with its default and, for the sentence a bad value
 * gets (`src/config-errors.ts`), what it must be and a value that works. `src/config.ts` builds the configuration.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import type { SettingHint } from './config-errors.ts';
import { DEFAULT_OUTPUT_CAPS } from './engine/flows/deps.ts';
import { DEFAULT_PLANNER_TOOLS } from './engine/plan/tool-selection.ts';
import { DEFAULT_DELEGATION_LIMITS, DEPTH_CEILING } from './engine/assistant/delegations.ts';
import { DEFAULT_DELEGATE_TIMEOUT_MS } from './engine/assistant/delegate-tool.ts';
import { DEFAULT_PRICE_PER_MILLION } from './engine/model-cost.ts';

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

/** The environment variables and what each accepts. */
export const envSchema = z.object({
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
  STEWARD_QUICK_PLANNER: choice(['beside', 'after'], 'beside'),
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
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl('http://localhost:4318'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl('http://localhost:4318/v1/traces'),
  // Read only to warn: Steward's exporter speaks OTLP/HTTP in JSON. Shared with other programs, so never an error.
  OTEL_EXPORTER_OTLP_PROTOCOL: optionalText,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optionalText,
  OTEL_SERVICE_NAME: hinted(
    z.preprocess(blankToUndefined, z.string().trim().min(1).default('steward')),
    'a service name',
    'steward',
  ),
  STEWARD_OTEL_CONTENT: choice(['off', 'on'], 'off'),
});

/** Every environment variable Steward reads, as the schema names them (docs/configuration.md documents each). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/** The value each variable takes when it is not set, for those that have one (others are off or derived). */
export function configDefaults(): Record<string, unknown> {
  const parsed = envSchema.parse({});
  return Object.fromEntries(Object.entries(parsed).filter(([, v]) => v !== undefined));
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
