/**
 * The composition root: builds the concrete adapters from configuration and wires them to the engine.
 * Everything else receives its dependencies as parameters.
 */
import { isIP } from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { ConsoleChannel } from './bot/console-channel.ts';
import { toTerminalText } from './bot/console-text.ts';
import { ChannelSet } from './bot/channel-set.ts';
import { DiscordChannel } from './bot/discord/discord-channel.ts';
import { SlackChannel } from './bot/slack/slack-channel.ts';
import { loadConfig, type Config } from './config.ts';
import type { ChannelAdapter } from './engine/channel.ts';
import { Steward } from './engine/flows/steward.ts';
import { createLlmClient } from './llm/model-router.ts';
import { createLogger, redact, type Log } from './logger.ts';
import { connectsInBrowser, loadMcpConfig } from './mcp/mcp-config.ts';
import { McpHost } from './mcp/mcp-host.ts';
import { checkDatabase, openDatabase, type StoreDatabase } from './store/database.ts';
import { PgEstimateHistory } from './store/estimate-history.ts';
import { openConnectionStore } from './store/pg-connection-store.ts';
import { PgRunStore } from './store/pg-run-store.ts';
import { PgWorkflowStore } from './store/pg-workflow-store.ts';
import { PgAssistantStore } from './store/pg-assistant-store.ts';
import { PgDelegationStore } from './store/pg-delegation-store.ts';
import { loadAssistantsFile } from './assistants-file.ts';
import { CronerCalendar } from './cron/croner-calendar.ts';
import { startupSummary } from './startup-summary.ts';
import { startHealthServer, type HealthServer, type ReadinessCheck } from './health-server.ts';
import { PromMetrics } from './metrics.ts';
import type { OtelTracing } from './tracing.ts';
import { PgDashboard } from './store/pg-dashboard.ts';
import { createDashboardApp } from './web/dashboard-app.ts';
import { startDashboardServer, type DashboardServer } from './web/dashboard-server.ts';
import { CALLBACK_PATH, type ConnectFlow } from './web/connect-pages.ts';
import { deferredConnectFlow, PersonConnectionFlow } from './person-connections.ts';
import { PgConnectLinks } from './store/pg-connect-links.ts';
import { PgQuestionLog } from './store/pg-question-log.ts';
import type { ServerQuestions } from './engine/server-questions.ts';

/** How long the model check at start may take: long enough for a slow network, short enough not to hold start-up. */
const MODEL_PROBE_MS = 5_000;

/** A running Steward with its channels (Slack and Discord when configured, else the console). */
export interface App {
  config: Config;
  steward: Steward;
  /** What the engine talks to: the one platform served, or a set of them. */
  channel: ChannelAdapter;
  /** The platforms served, by name. */
  platforms: { slack?: SlackChannel; discord?: DiscordChannel; console?: ConsoleChannel };
  store: PgRunStore;
  tools: McpHost;
  database: StoreDatabase;
  log: Log;
  /** The `/healthz` and `/readyz` server, when `STEWARD_HEALTH_PORT` is set. */
  health: HealthServer | undefined;
  /** The read-only web dashboard, when `STEWARD_DASHBOARD_PORT` is set. */
  dashboard: DashboardServer | undefined;
  /** OpenTelemetry traces, when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  tracing: OtelTracing | undefined;
  /**
   * Stops the channel, closes MCP servers and the database; runs are handed back for another process (or the next
   * start) to take over. With `graceMs`, steps in flight first get that long to end (a deploy's SIGTERM).
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Starts Steward on Slack (with `SLACK_BOT_TOKEN`) and Discord (with `DISCORD_TOKEN`), or on the console (reading
 * `input`, writing `output`) when neither is set.
 * Throws `StewardError('config')` with one clear message on bad configuration.
 */
export async function startApp(options: {
  env: NodeJS.ProcessEnv;
  input: Readable;
  output: Writable;
  onClose?: () => void;
}): Promise<App> {
  const config = loadConfig(options.env);
  mkdirSync(config.dataDir, { recursive: true });
  // Logs go to a file unless one is named: the console channel owns the terminal, and Slack needs none.
  const log = createLogger({
    file: resolve(config.logFile ?? join(config.dataDir, 'steward.log')),
    secrets: config.secrets,
  });
  // Start-up lines may quote a server's stderr: inert on the terminal, like everything the console prints.
  const say = (line: string) => options.output.write(`${toTerminalText(line)}\n`);

  // All configuration is read before anything is opened, so a bad file fails fast with its own message.
  const mcp = await loadMcpConfig(config.mcpConfigPath);
  const assistantDefinitions = await loadAssistantsFile(config.assistantsFile);
  // Progress while the slow parts run (a database's migrations, servers started through npx): a start can take half
  // a minute on a busy machine, and nothing on the terminal looked like a hang.
  say(
    config.databaseUrl === undefined
      ? `Opening the embedded database in ${join(config.dataDir, 'pglite')}…`
      : 'Connecting to PostgreSQL…',
  );
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    maxConnections: config.databasePoolSize,
    onPoolError: (err) => log('warn', `PostgreSQL connection dropped: ${err.message}`),
    log,
  });
  const cleanup: (() => Promise<void>)[] = [() => database.close()];
  try {
    const llm = createLlmClient(config.llm, log);
    // Checked while the MCP servers start; a model that is down is a warning, since it may be up by the first request.
    const probed = llm.probe(MODEL_PROBE_MS);
    for (const w of mcp.warnings) say(`! ${w}`);
    for (const w of config.warnings) say(`! ${w}`);
    for (const a of assistantDefinitions) {
      const unknown = Object.entries(a.models).filter(([, m]) => !config.settings.modelNames.includes(m));
      if (unknown.length === 0) continue;
      const which = unknown.map(([role, m]) => `${role} "${m}"`).join(', ');
      say(
        `! The Assistant "${a.name}" names models the model catalog lacks (${which}): its calls for those roles will fail until the catalog names them.`,
      );
    }
    // With the health port, `/metrics` there; the adapters are told of what they count through small callbacks.
    const drives: { steward?: Steward; slack?: SlackChannel } = {};
    const metrics: PromMetrics | undefined =
      config.healthPort === undefined
        ? undefined
        : new PromMetrics({
            runsByStatus: () => store.runsByStatus(),
            runsAwaitingOwner: () => store.runsAwaitingOwner(),
            runsLeased: () => drives.steward?.leasedRuns ?? 0,
            outboxPending: (): Record<string, number> => (drives.slack ? { slack: drives.slack.outbox.pending } : {}),
            log,
          });
    const store: PgRunStore = new PgRunStore(database.db, {
      ...(metrics && { onSettled: (use) => metrics.modelUsed(use) }),
    });
    // With an OTLP endpoint, traces; the SDK is loaded only then. Closed before the database: a run's span reads it.
    const tracing = await startTracing(config, store, log);
    if (tracing && config.tracing) {
      cleanup.unshift(() => tracing.close());
      // Its address may carry a user and password: said without them, as the log would.
      say(`Traces: OTLP to ${redact(config.tracing.url, config.secrets)}.`);
    }
    const needed = mcp.config.servers.some((s) => s.transport.kind === 'http' && s.transport.auth && !s.disabled);
    const keys = { key: config.secretsKey, oldKeys: config.secretsOldKeys, needed };
    const connections = await openConnectionStore(database.db, keys);
    if (connections.sealedAgain > 0)
      say(`Sealed ${connections.sealedAgain} stored secrets again under STEWARD_SECRETS_KEY.`);
    // Before the MCP servers: its address is where authorization servers send people back (the OAuth callback), and
    // before the channels (Slack's Home tab links to its run pages), so a port that cannot be used stops start-up
    // before anyone can send a request. Its connect pages answer once the host is up.
    const connecting: { flow?: PersonConnectionFlow } = {};
    const personServers = mcp.config.servers
      .filter((s) => !s.disabled && connectsInBrowser(s) === 'person')
      .map((s) => s.name);
    const workspaceServers = mcp.config.servers
      .filter((s) => !s.disabled && connectsInBrowser(s) === 'workspace')
      .map((s) => s.name);
    const dashboard = await startDashboard(config, database, log, deferredConnectFlow(connecting), {
      personServers,
      workspaceServers,
    });
    if (dashboard) {
      cleanup.unshift(() => dashboard.server.close());
      say(`Dashboard: on port ${dashboard.server.port}; sign-in links point at ${dashboard.publicUrl}.`);
    }
    const starting = mcp.config.servers.filter((s) => !s.disabled).map((s) => s.name);
    if (starting.length > 0) say(`Starting ${starting.length} MCP server(s): ${starting.join(', ')}…`);
    // Servers' questions go to Steward, built after the host: until then (and if it has none) they are declined.
    const questions: { to?: ServerQuestions } = {};
    const { host, failures } = await McpHost.connect(mcp.config, {
      questions: {
        ask: (call, request, signal) =>
          questions.to?.ask(call, request, signal) ?? Promise.resolve({ action: 'decline' }),
      },
      logger: (level, message) => log(level === 'debug' ? 'info' : level, message),
      ...(connections.store && { connections: connections.store }),
      ...(dashboard && { oauthRedirectUrl: `${dashboard.publicUrl.replace(/\/+$/, '')}${CALLBACK_PATH}` }),
      ...(metrics && { onCallEnded: (tool, outcome, seconds) => metrics.stepEnded(tool, outcome, seconds) }),
    });
    cleanup.unshift(() => host.close());
    const browserServers = [...host.personServers(), ...host.workspaceServers()];
    if (browserServers.length > 0) {
      connecting.flow = new PersonConnectionFlow(host, new PgConnectLinks(database.db), dashboard?.publicUrl, log);
      if (!dashboard)
        say(
          `! ${browserServers.join(', ')} ${browserServers.length === 1 ? 'is' : 'are'} connected from a browser (per person, or by an approver for the workspace), which needs Steward's web address to connect from: set STEWARD_DASHBOARD_PORT (docs/mcp-servers.md, "Servers behind OAuth").`,
        );
    }
    for (const f of failures) say(`! ${f.message} (Steward runs with the other servers.)`);
    for (const w of await probed) say(`! ${w} Steward starts anyway; requests fail until the model answers.`);
    const assistants = new PgAssistantStore(database.db);
    // Applied before anyone can send a request: only what differs from the database is written (and audited).
    await assistants.applyDefinitions(assistantDefinitions, new Date());
    if (assistantDefinitions.length > 0) say(`Assistants: ${assistantDefinitions.map((a) => a.name).join(', ')}.`);
    // With a Slack or Discord token Steward serves those platforms (and leaves the terminal alone); else the console.
    const platforms: App['platforms'] = {};
    if (config.slack)
      platforms.slack = new SlackChannel({
        ...config.slack,
        log,
        dashboardUrl: dashboard?.publicUrl,
        ...(metrics && { onRateLimited: (method) => metrics.rateLimited('slack', method) }),
      });
    if (config.discord)
      platforms.discord = new DiscordChannel({
        ...config.discord,
        log,
        ...(metrics && { onRateLimited: (method) => metrics.rateLimited('discord', method) }),
      });
    if (!platforms.slack && !platforms.discord)
      platforms.console = new ConsoleChannel({
        input: options.input,
        output: options.output,
        user: options.env.USER,
        onClose: options.onClose,
      });
    const served = [platforms.slack, platforms.discord, platforms.console].filter((c) => c !== undefined);
    const channel: ChannelAdapter =
      served.length === 1 && served[0] ? served[0] : new ChannelSet(served, (level, m) => log(level, m));
    const steward = new Steward({
      llm,
      tools: host,
      store,
      notifier: channel,
      log,
      settings: config.settings,
      clock: () => new Date(),
      newId: () => randomUUID(),
      signals: database.signals,
      workflows: new PgWorkflowStore(database.db, { owner: store.owner }),
      calendar: new CronerCalendar(),
      assistants,
      delegations: new PgDelegationStore(database.db),
      estimateHistory: new PgEstimateHistory(database.db),
      ...(dashboard && { dashboardLinks: new PgDashboard(database.db, { baseUrl: dashboard.publicUrl }) }),
      ...(connecting.flow && { connections: connecting.flow }),
      questions: new PgQuestionLog(database.db),
      prompts: host,
      ...(tracing && { telemetry: tracing }),
    });
    questions.to = steward.serverQuestions;
    drives.steward = steward;
    drives.slack = platforms.slack;
    const where =
      database.kind === 'pglite' ? `embedded PostgreSQL in ${join(config.dataDir, 'pglite')}` : 'PostgreSQL server';
    const tools = host.listTools();
    say(`Steward: ${where}; ${tools.length} tools from ${new Set(tools.map((t) => t.server)).size} MCP server(s).`);
    const roles = (['planner', 'classifier', 'synthesizer', 'llm_step', 'butler'] as const).filter(
      (r) => r !== 'butler' || config.settings.quickAnswers !== undefined,
    );
    const failed = new Set(failures.map((f) => f.server));
    const waiting = host.awaitingApprover();
    const summary = startupSummary({
      databaseUrl: config.databaseUrl,
      pgliteDir: join(config.dataDir, 'pglite'),
      models: roles.flatMap((role) => {
        const model = llm.modelOf(role);
        return model ? [{ role, ...model, source: config.llm.modelSources[role] }] : [];
      }),
      channels: [platforms.slack && 'Slack', platforms.discord && 'Discord', platforms.console && 'console'].filter(
        (c) => c !== undefined,
      ),
      servers: mcp.config.servers.map((s) => ({
        name: s.name,
        tools: tools.filter((t) => t.server === s.name).length,
        state: s.disabled
          ? 'disabled'
          : failed.has(s.name)
            ? 'failed'
            : waiting.includes(s.name)
              ? 'awaiting approver'
              : 'connected',
      })),
    });
    for (const line of summary) say(line);
    // Before the channel, so a port that cannot be used stops start-up before anyone can send a request.
    const health =
      config.healthPort === undefined
        ? undefined
        : await startHealthServer({
            port: config.healthPort,
            checks: () => readinessChecks(database, host),
            ...(metrics && { metrics: () => metrics.render() }),
          });
    if (health) {
      cleanup.unshift(() => health.close());
      say(`Health: /healthz, /readyz and /metrics on port ${health.port}.`);
    }
    await channel.start(steward);
    if (platforms.slack)
      say(
        platforms.slack.mode === 'socket'
          ? 'Slack: connected in Socket Mode.'
          : `Slack: listening on port ${platforms.slack.port} at /slack/events.`,
      );
    if (platforms.discord) say(`Discord: connected as ${platforms.discord.client.user?.tag ?? 'the bot'}.`);
    await steward.recover();
    return {
      health,
      tracing,
      dashboard: dashboard?.server,
      config,
      steward,
      channel,
      platforms,
      store,
      tools: host,
      database,
      log,
      async close(closeOptions = {}) {
        // Each part closes even when the one before it failed: the database and the MCP servers are let go last.
        try {
          if (closeOptions.graceMs === undefined) {
            try {
              await steward.shutdown();
            } finally {
              await channel.stop();
            }
          } else {
            // Requests stop first; the channel still sends what the runs say while their steps end.
            try {
              await channel.stop();
            } finally {
              await steward.handOver(closeOptions.graceMs);
            }
          }
        } finally {
          for (const fn of cleanup)
            await fn().catch((err: unknown) => log('warn', `shutdown: ${(err as Error).message}`));
        }
      },
    };
  } catch (err) {
    for (const fn of cleanup) await fn().catch(() => undefined);
    throw err;
  }
}

/**
 * With `STEWARD_DASHBOARD_PORT`, the dashboard's server and the address its links use (unset: the address it listens
 * on, or localhost when that is every interface).
 */
async function startDashboard(
  config: Config,
  database: StoreDatabase,
  log?: Log,
  connect?: ConnectFlow,
  servers: { personServers: readonly string[]; workspaceServers: readonly string[] } = {
    personServers: [],
    workspaceServers: [],
  },
): Promise<{ server: DashboardServer; publicUrl: string } | undefined> {
  const settings = config.dashboard;
  if (!settings) return undefined;
  let publicUrl = settings.publicUrl ?? '';
  const server = await startDashboardServer({
    port: settings.port,
    host: settings.host,
    app: (port) => {
      publicUrl = settings.publicUrl ?? `http://${urlHost(settings.host)}:${port}`;
      return createDashboardApp({
        data: new PgDashboard(database.db, { baseUrl: publicUrl }),
        secret: settings.secret,
        publicUrl,
        approvers: config.settings.approvers,
        clock: () => new Date(),
        ...(log && { log }),
        ...(connect && { connect }),
        ...servers,
        spendCaps: config.settings.spend.caps,
      });
    },
  });
  return { server, publicUrl };
}

/** Traces over OTLP/HTTP (src/tracing.ts, loaded here and only here, so with traces off none of the SDK is loaded). */
async function startTracing(config: Config, store: PgRunStore, log: Log): Promise<OtelTracing | undefined> {
  if (!config.tracing) return undefined;
  const { OtelTracing } = await import('./tracing.ts');
  return new OtelTracing({
    ...config.tracing,
    secrets: config.secrets,
    instanceId: store.owner,
    log,
    describeRun: async (runId) => {
      const run = await store.getRun(runId);
      return (
        run && { createdAt: run.createdAt, route: run.route, assistant: run.assistant, parentRunId: run.parentRunId }
      );
    },
  });
}

/** How a link names the host the dashboard listens on: every interface is reachable as localhost; IPv6 in brackets. */
function urlHost(host: string): string {
  if (isIP(host) !== 0 && /^[0.:]+$/.test(host)) return 'localhost';
  return isIP(host) === 6 ? `[${host}]` : host;
}

/** Ready: the database answers with every migration applied, and every enabled MCP server is connected. */
async function readinessChecks(database: StoreDatabase, host: McpHost): Promise<ReadinessCheck[]> {
  const db = await checkDatabase(database.db);
  // A workspace server waiting for an approver is no reason to hold traffic back: connecting it needs this process.
  const waiting = new Set(host.awaitingApprover());
  const servers = host.serverStatus().map((s) => ({
    name: `mcp:${s.name}`,
    ok: s.up || waiting.has(s.name),
    ...(s.up
      ? {}
      : { detail: waiting.has(s.name) ? 'waits for an approver to connect it' : 'not connected; reconnecting' }),
  }));
  return [{ name: 'database', ...db }, ...servers];
}
