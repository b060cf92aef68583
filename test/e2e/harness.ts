/**
 * End-to-end harness: the console channel driven through its streams, the real engine, the real store on
 * PostgreSQL or PGlite, real MCP servers from npm, and the real openai SDK talking to the fake LLM server.
 * A recording wrapper around the MCP host keeps the exact tool calls Steward sent.
 */
import { afterEach, beforeEach } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ConsoleChannel } from '../../src/bot/console-channel.ts';
import type { WorkflowRequest } from '../../src/engine/channel.ts';
import type { Step } from '../../src/engine/plan/plan-schema.ts';
import type { StoredRun, StoredStepAttempt, ToolRunner } from '../../src/engine/ports.ts';
import { Steward, type StewardDeps, type StewardSettings } from '../../src/engine/flows/steward.ts';
import type { Json, ToolInfo } from '../../src/engine/types.ts';
import { createLlmClient } from '../../src/llm/model-router.ts';
import type { ModelCatalog } from '../../src/llm/model-catalog.ts';
import type { McpServerConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { openDatabase } from '../../src/store/database.ts';
import { PgEstimateHistory } from '../../src/store/estimate-history.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { PgQuestionLog } from '../../src/store/pg-question-log.ts';
import type { ServerQuestions } from '../../src/engine/server-questions.ts';
import { PgWorkflowStore } from '../../src/store/pg-workflow-store.ts';
import { PgAssistantStore } from '../../src/store/pg-assistant-store.ts';
import { PgDelegationStore } from '../../src/store/pg-delegation-store.ts';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { createDashboardApp } from '../../src/web/dashboard-app.ts';
import { startDashboardServer } from '../../src/web/dashboard-server.ts';
import { CronerCalendar } from '../../src/cron/croner-calendar.ts';
import { startFakeLlm, type FakeLlm, type FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import type { SetUp } from '../helpers/connect-origin.ts';
import {
  auditHttpConfig,
  auditStdioConfig,
  mcpConfig,
  sharedAuditUrl,
  type ServerOptions,
} from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';

/** One MCP call as Steward sent it, with the time it was sent. */
export interface RecordedCall {
  name: string;
  args: Record<string, Json>;
  at: number;
}

export interface Harness {
  llm: FakeLlm;
  store: PgRunStore;
  db: TestDatabase;
  host: McpHost;
  steward: Steward;
  calls: RecordedCall[];
  logs: string[];
  /** What the MCP host logged (`level message`), as the app sends it to the same log. */
  mcpLogs: string[];
  /** Types a line into the console and waits until the channel has handled it. */
  type(line: string): Promise<void>;
  /** Types a line and returns at once, as a person typing on while Steward works. */
  typeNow(line: string): void;
  /** Everything the console printed so far. */
  output(): string;
  /** When (performance.now()) the console had printed at least `length` characters; undefined if not yet. */
  printedBy(length: number): number | undefined;
  /** Waits until the console printed text matching `pattern` (after `from` characters). */
  waitFor(pattern: RegExp, timeoutMs?: number, from?: number): Promise<string>;
  /** The web dashboard, with `dashboard: true`: its address (`dashboard` in the console prints a sign-in link). */
  dashboard?: { url: string };
  close(): Promise<void>;
}

const DEFAULT_SETTINGS: StewardSettings = {
  maxParallel: 4,
  maxAttempts: 3,
  amendmentCap: 3,
  maxRepairs: 2,
  reviewTimeoutMs: 600_000,
};

/**
 * The engine wired as the app wires it, for both harnesses: its models served by the fake LLM through the real
 * openai SDK (with the canary key), a real clock and ids, and the default settings with `settings` over them.
 */
export function createSteward(
  o: Pick<
    StewardDeps,
    | 'tools'
    | 'store'
    | 'notifier'
    | 'log'
    | 'signals'
    | 'workflows'
    | 'calendar'
    | 'assistants'
    | 'delegations'
    | 'estimateHistory'
    | 'dashboardLinks'
    | 'connections'
    | 'questions'
    | 'prompts'
  > & {
    /** The engine's clock (default the real one): workflow tests move it to a schedule's time. */
    clock?: () => Date;
    llm: FakeLlm;
    settings?: Partial<StewardSettings>;
    /** Per model call (default 10 s). */
    llmTimeoutMs?: number;
    /** False: the model never streams (as a server without streaming), so plans are read whole and nothing starts early. */
    modelStreams?: boolean;
    /** A model catalog naming the fake's models (`synth-model`, …), as models.json would. */
    catalog?: ModelCatalog;
  },
): Steward {
  const llm = createLlmClient(
    {
      openai: { apiKey: CANARY_KEY, baseURL: o.llm.baseURL, maxRetries: 0, timeoutMs: o.llmTimeoutMs ?? 10_000 },
      models: {
        planner: 'planner-model',
        classifier: 'classifier-model',
        synthesizer: 'synth-model',
        llm_step: 'step-model',
      },
      ...(o.catalog && { catalog: o.catalog }),
    },
    o.log,
  );
  return new Steward({
    llm: o.modelStreams === false ? { complete: (r) => llm.complete({ ...r, onText: undefined }) } : llm,
    tools: o.tools,
    store: o.store,
    notifier: o.notifier,
    clock: o.clock ?? (() => new Date()),
    newId: () => crypto.randomUUID(),
    log: o.log,
    settings: { ...DEFAULT_SETTINGS, ...o.settings },
    signals: o.signals,
    workflows: o.workflows,
    calendar: o.calendar,
    assistants: o.assistants,
    delegations: o.delegations,
    estimateHistory: o.estimateHistory,
    ...(o.dashboardLinks && { dashboardLinks: o.dashboardLinks }),
    ...(o.connections && { connections: o.connections }),
    ...(o.questions && { questions: o.questions }),
    ...(o.prompts && { prompts: o.prompts }),
  });
}

/**
 * Servers' questions as the app wires them (`questions: true`): the host declares elicitation and sends questions to
 * Steward once it is built (`bind`), which stores them in the test's database.
 */
export function serverQuestions(on: boolean | undefined, db: TestDatabase) {
  const late: { to?: ServerQuestions } = {};
  const port: ServerQuestions = {
    ask: (call, request, signal) => late.to?.ask(call, request, signal) ?? Promise.resolve({ action: 'decline' }),
  };
  return {
    host: on ? { questions: port } : {},
    steward: on ? { questions: new PgQuestionLog(db.db) } : {},
    bind: (steward: Steward) => void (late.to = steward.serverQuestions),
  };
}

/**
 * Starts every part; `close` stops them all. `db` is a fresh test database of that kind, or `{ url }`: a PostgreSQL
 * database the test made (on a private cluster it may restart), opened and migrated here and left in place at close.
 */
export async function startHarness(options: {
  db: 'postgres' | 'pglite' | { url: string };
  servers: McpServerConfig[];
  script: FakeLlmScript;
  settings?: Partial<StewardSettings>;
  llmTimeoutMs?: number;
  clock?: () => Date;
  /** Plan cards carry estimates from the database's history, as the app wires them (off by default). */
  estimates?: boolean;
  /** False: the model never streams, so plans are read whole and nothing starts early. */
  modelStreams?: boolean;
  /** Serve the web dashboard on a free port, as the app does with STEWARD_DASHBOARD_PORT (events polled every 100 ms). */
  dashboard?: boolean;
  /** The run store on the test's database (default: a plain PgRunStore), e.g. one that holds a write at a gate. */
  store?: (db: TestDatabase['db']) => PgRunStore;
  /**
   * Parts on the harness's database started before the MCP host (a web origin for OAuth callbacks): the host's
   * options, people's connections for Steward, more secrets that must never be shown, and how to stop them.
   */
  setup?: SetUp;
  /** Servers may ask questions (MCP elicitation), stored in the test's database, as the app wires it. */
  questions?: boolean;
  /** A model catalog naming the fake's models (`synth-model`, …), as models.json would. */
  catalog?: ModelCatalog;
}): Promise<Harness> {
  const llm = await startFakeLlm(options.script);
  const db = typeof options.db === 'string' ? await createTestDatabase(options.db) : await databaseAt(options.db.url);
  const extra = await options.setup?.(db);
  const asks = serverQuestions(options.questions, db);
  const mcpLogs: string[] = [];
  const { host, failures } = await McpHost.connect(mcpConfig(...options.servers), {
    logger: (level, message) => mcpLogs.push(`${level} ${message}`),
    ...extra?.host,
    ...asks.host,
  });
  if (failures.length > 0) throw new Error(`MCP servers failed: ${JSON.stringify(failures)}`);
  const connections = extra?.connections?.(host);
  const calls: RecordedCall[] = [];
  const tools = recordingTools(host, calls);
  const store = options.store?.(db.db) ?? new PgRunStore(db.db);
  const input = new PassThrough();
  const out = new PassThrough();
  let printed = '';
  const writes: { at: number; upTo: number }[] = [];
  out.on('data', (chunk: Buffer) => {
    printed += chunk.toString('utf8');
    writes.push({ at: performance.now(), upTo: printed.length });
  });
  const channel = new ConsoleChannel({ input, output: out, user: 'ada' });
  const logs: string[] = [];
  const dashboard = options.dashboard ? await startTestDashboard(db, options.settings) : undefined;
  const steward = createSteward({
    llm,
    tools,
    store,
    notifier: channel,
    log: (level, message) => logs.push(`${level} ${message}`),
    settings: options.settings,
    signals: db.signals,
    llmTimeoutMs: options.llmTimeoutMs,
    workflows: new PgWorkflowStore(db.db, { owner: store.owner }),
    calendar: new CronerCalendar(),
    clock: options.clock,
    assistants: new PgAssistantStore(db.db),
    delegations: new PgDelegationStore(db.db),
    estimateHistory: options.estimates ? new PgEstimateHistory(db.db) : undefined,
    modelStreams: options.modelStreams,
    ...(options.catalog && { catalog: options.catalog }),
    ...(dashboard && { dashboardLinks: dashboard.links }),
    ...(connections && { connections }),
    prompts: host,
    ...asks.steward,
  });
  asks.bind(steward);
  await channel.start(steward);

  const waitFor = async (pattern: RegExp, timeoutMs = 15_000, from = 0): Promise<string> => {
    const found = await waitUntil(String(pattern), () => pattern.exec(printed.slice(from)), {
      timeoutMs,
      details: () => `console so far:\n${printed}`,
    });
    return found[0];
  };
  return {
    llm,
    store,
    db,
    host,
    steward,
    calls,
    logs,
    mcpLogs,
    async type(line) {
      input.write(`${line}\n`);
      await new Promise((r) => setImmediate(r));
      await channel.settled();
    },
    typeNow: (line) => void input.write(`${line}\n`),
    output: () => printed,
    printedBy: (length) => writes.find((w) => w.upTo >= length)?.at,
    waitFor,
    ...(dashboard && { dashboard: { url: dashboard.url } }),
    async close() {
      // Runs left waiting for a person never finish; give the others a moment to settle.
      await Promise.race([steward.idle(), new Promise((r) => setTimeout(r, 2000))]);
      const problems = await checkInvariants({
        store,
        db,
        calls,
        llm,
        shown: [printed, ...logs, ...mcpLogs],
        canaries: [CANARY_KEY, ...(extra?.canaries?.() ?? [])],
        tools: host.listTools(),
      });
      await steward.shutdown();
      await channel.stop();
      await dashboard?.server.close();
      await extra?.close?.();
      await host.close();
      await db.close();
      await llm.close();
      if (problems.length > 0)
        throw new Error(`MCP calls outside an approved plan, or leaked secrets:\n${problems.join('\n')}`);
    },
  };
}

/** The dashboard on a free local port over the harness's database, signing in with links it issues. */
async function startTestDashboard(db: TestDatabase, settings: Partial<StewardSettings> = {}) {
  let url = '';
  const server = await startDashboardServer({
    port: 0,
    host: '127.0.0.1',
    app: (port) => {
      url = `http://127.0.0.1:${port}`;
      return createDashboardApp({
        data: new PgDashboard(db.db, { baseUrl: url }),
        secret: `harness-${crypto.randomUUID()}`,
        publicUrl: url,
        approvers: settings.approvers ?? [],
        clock: () => new Date(),
        pollMs: 100,
        ...(settings.spend && { spendCaps: settings.spend.caps }),
      });
    },
  });
  return { server, url, links: new PgDashboard(db.db, { baseUrl: url }) };
}

/**
 * The process that takes over after this one stopped (as at a deploy): a second Steward on the same store, tools and
 * model, with every message it sends people kept in `said` (as JSON).
 */
export function nextSteward(h: Harness, settings?: Partial<StewardSettings>): { steward: Steward; said: string[] } {
  const said: string[] = [];
  const steward = createSteward({
    llm: h.llm,
    tools: recordingTools(h.host, h.calls),
    store: h.store,
    notifier: { send: (_c, m) => Promise.resolve(void said.push(JSON.stringify(m))) },
    log: () => undefined,
    settings,
  });
  return { steward, said };
}

/** The workflow requests this Steward receives from now on, each still answered by it (channels' routing tests). */
export function recordWorkflowRequests(steward: Steward): WorkflowRequest[] {
  const seen: WorkflowRequest[] = [];
  const answer = steward.workflowCommand.bind(steward);
  steward.workflowCommand = (request) => (seen.push(request), answer(request));
  return seen;
}

/**
 * For a test file on the audit server: a fresh audit server for each test, and the harness a test starts through
 * `start` closed after it (with the invariant checks), then the server's log removed.
 */
export function useAuditHarness(): { readonly audit: AuditServer; start: typeof startHarness } {
  let audit: AuditServer | undefined;
  let started: Harness | undefined;
  beforeEach(() => {
    audit = createAuditServer();
  });
  afterEach(async () => {
    try {
      await started?.close();
    } finally {
      started = undefined;
      audit?.remove();
    }
  });
  return {
    get audit(): AuditServer {
      if (!audit) throw new Error('the audit server exists only while a test runs');
      return audit;
    },
    async start(options) {
      started = await startHarness(options);
      return started;
    },
  };
}

/** The PostgreSQL database at `url`, opened and migrated; `close` closes its pool and drops nothing. */
export async function databaseAt(url: string): Promise<TestDatabase> {
  const store = await openDatabase({ databaseUrl: url, dataDir: tmpdir() });
  return { ...store, name: new URL(url).pathname.slice(1) };
}

/** The LLM key every end-to-end test runs with; it must never appear anywhere but the Authorization header. */
export const CANARY_KEY = `sk-canary-${crypto.randomUUID()}`;
// Also in the environment, where a careless adapter could pass it to an MCP server.
process.env.OPENAI_API_KEY = CANARY_KEY;

/**
 * What every end-to-end test must leave true: no MCP call outside an approved plan, and no secret (`canaries`)
 * in what people were shown or logs (`shown`), in any table, or in what was sent to the model.
 */
export async function checkInvariants(o: {
  store: PgRunStore;
  db: TestDatabase;
  calls: RecordedCall[];
  llm: FakeLlm;
  shown: string[];
  canaries: string[];
  /** The tools connected: with them, calls of read-only closed-world tools may come before any approval. */
  tools?: readonly ToolInfo[];
}): Promise<string[]> {
  const problems = await unapprovedCalls(o.store, o.db, o.calls, o.tools ?? []);
  const tables = [
    'runs',
    'plan_revisions',
    'step_attempts',
    'decisions',
    'llm_usage',
    'run_events',
    'tool_pins',
  ] as const;
  const dumps = await Promise.all(
    tables.map(async (t) => [t, JSON.stringify(await o.db.db.selectFrom(t).selectAll().execute())] as const),
  );
  for (const [i, secret] of o.canaries.entries()) {
    const name = i === 0 ? 'the LLM key' : `secret #${i + 1}`;
    if (o.shown.some((s) => s.includes(secret))) seen(`what people were shown, or a log line, holds ${name}`);
    if (o.llm.requests.some((r) => JSON.stringify(r.body).includes(secret))) seen(`a prompt holds ${name}`);
    for (const [table, dump] of dumps) if (dump.includes(secret)) seen(`table ${table} holds ${name}`);
  }
  return problems;
  function seen(what: string): void {
    problems.push(what);
  }
}

/** Wraps a tool runner so every call Steward sends is recorded for the invariant check. */
export function recordingTools(host: McpHost, calls: RecordedCall[]): ToolRunner {
  return {
    listTools: () => host.listTools(),
    refreshTool: (name, options) => host.refreshTool(name, options),
    prepareAs: (name, person, options) => host.prepareAs(name, person, options),
    openAs: (server, person) => host.openAs(server, person),
    listResources: () => host.listResources(),
    readResource: (server, uri, opts) => host.readResource(server, uri, opts),
    callTool: (name, args, opts) => {
      calls.push({ name, args, at: Date.now() });
      return host.callTool(name, args, opts);
    },
  };
}

/**
 * The control-flow invariant, checked after every end-to-end test: each MCP call Steward sent is a step of
 * an approved plan revision, sent with exactly the arguments recorded for that step's attempt. A step that started
 * while the plan was being written (before any approval) counts only when its tool is read-only and closed-world by
 * its annotations (SECURITY.md section 12), and so does a quick answer's call.
 */
async function unapprovedCalls(
  store: PgRunStore,
  db: TestDatabase,
  calls: RecordedCall[],
  tools: readonly ToolInfo[],
): Promise<string[]> {
  const runs = await db.db.selectFrom('runs').select(['id']).execute();
  const early = (name: string) =>
    tools.some((t) => t.name === name && t.annotations.readOnlyHint === true && t.annotations.openWorldHint === false);
  const sent = new Map<string, number>();
  for (const { id } of runs) {
    const run = await store.getRun(id);
    if (!run) continue;
    const revisions = new Map((await store.listRevisions(id)).map((r) => [r.revision, r.plan]));
    // Steps let in while the plan streamed, recorded before they were sent; only read-only closed-world ones count.
    const startedEarly = (await store.listEvents(id))
      .filter((e) => e.type === 'stepsStartedEarly')
      .flatMap((e) => (e.payload as { steps: Step[] }).steps)
      .filter((s) => s.kind === 'tool' && early(s.tool));
    for (const a of await store.listStepAttempts(id)) {
      const approved = run.approvedRisk === null ? undefined : revisions.get(a.revision);
      // A quick answer's calls (revisions below 0, SECURITY.md section 16) count only for read-only closed-world tools.
      const quick = a.revision < 0 ? revisions.get(a.revision)?.steps.find((s) => s.id === a.stepId) : undefined;
      const step =
        approved?.steps.find((s) => s.id === a.stepId) ??
        (a.revision === 0 ? startedEarly.find((s) => s.id === a.stepId) : undefined) ??
        (quick?.kind === 'tool' && early(quick.tool) ? quick : undefined);
      if (step?.kind !== 'tool' || a.args === null) continue;
      const key = JSON.stringify([step.tool, canonical(a.args)]);
      sent.set(key, (sent.get(key) ?? 0) + 1);
    }
  }
  const problems: string[] = [];
  for (const c of calls) {
    const key = JSON.stringify([c.name, canonical(c.args)]);
    const left = sent.get(key) ?? 0;
    if (left === 0) problems.push(`${c.name} ${JSON.stringify(c.args)}`);
    else sent.set(key, left - 1);
  }
  return problems;
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, x]) => [k, canonical(x)]),
    );
  return v;
}

/** A planner answer as JSON text. */
export function planReply(steps: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    summary: 'Do the work',
    rationale: 'because',
    needsTools: true,
    answer: null,
    risks: [],
    steps,
    ...extra,
  });
}

/** The one run a test made (the test fails if there is not exactly one); either harness will do. */
export async function onlyRun(harness: Pick<Harness, 'db' | 'store'>): Promise<StoredRun> {
  const rows = await harness.db.db.selectFrom('runs').select(['id']).execute();
  if (rows.length !== 1) throw new Error(`expected exactly one run, found ${rows.length}`);
  return (await harness.store.getRun(rows[0]!.id))!;
}

/**
 * Waits until the end of a step's latest attempt is stored. The dispatcher decides what follows a step (start the
 * next, or, paused, nothing) in the same transition that records its end, so after this the decision is made.
 */
export async function waitForStoredEnd(store: PgRunStore, runId: string, stepId: string): Promise<StoredStepAttempt> {
  return waitUntil(`the end of step ${stepId} to be stored`, async () => {
    const latest = (await store.listStepAttempts(runId)).filter((a) => a.stepId === stepId).at(-1);
    return latest?.endedAt ? latest : undefined;
  });
}

/** When the (first) attempt at a step started, as stored; the test fails if it never started. */
export async function storedStart(store: PgRunStore, runId: string, stepId: string): Promise<Date> {
  const attempt = (await store.listStepAttempts(runId)).find((a) => a.stepId === stepId);
  if (!attempt) throw new Error(`step ${stepId} never started`);
  return attempt.startedAt;
}

/** One line the audit fixture server wrote: a call (with its arguments), a cancellation, or what it asked. */
export interface AuditEntry {
  type: string;
  name: string;
  args?: Record<string, unknown>;
  /** On a call: the calls in flight at the server as it arrived, itself included. */
  inFlight?: number;
}

/** The audit fixture server (test/fixtures/audit-server.mjs) with its log in a temp folder of its own. */
export interface AuditServer {
  /** The server's config, for `startHarness`; `options` as for `auditStdioConfig`. */
  config(options?: ServerOptions): McpServerConfig;
  /** What the server recorded so far, oldest first. */
  entries(): AuditEntry[];
  /** Deletes the folder and its log. */
  remove(): void;
}

/** Makes a fresh log folder for the audit fixture server, a stdio child of each host that connects to it. */
export function createAuditServer(): AuditServer {
  return auditServerLoggingTo(auditStdioConfig);
}

/**
 * An audit server whose hosts each get a session of their own on this process's shared audit server over
 * Streamable HTTP (`sharedAuditUrl`), with a fresh log folder: what the scenario matrix's cells use, since a stdio
 * child for each cell costs most of a console cell's CPU. A host that closes and connects again gets a new session
 * logging to the same file, as a new child would; nothing here can kill the server.
 */
export async function startSharedAuditServer(): Promise<AuditServer> {
  const url = await sharedAuditUrl();
  return auditServerLoggingTo((file, options) => auditHttpConfig(url, file, options));
}

function auditServerLoggingTo(config: (file: string, options?: ServerOptions) => McpServerConfig): AuditServer {
  const dir = mkdtempSync(join(tmpdir(), 'steward-audit-'));
  const file = join(dir, 'audit.jsonl');
  return {
    config: (options) => config(file, options),
    entries: () =>
      existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as AuditEntry)
        : [],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
