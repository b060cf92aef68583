/**
 * The MCP host: one connection per configured server, offered to the engine as a `ToolRunner`; for a server that
 * connects per person, one session per person who uses it (`PersonSessions`).
 */
import { stepError } from '../engine/errors.ts';
import type {
  PersonalAccess,
  PersonConnection,
  ResourceListing,
  ServerPrompt,
  ServerPrompts,
  ToolCallOptions,
  ToolCallOutcome,
  ToolRunner,
} from '../engine/ports.ts';
import type { Result } from '../engine/result.ts';
import type { ServerQuestions } from '../engine/server-questions.ts';
import type { Actor, Json, StepError, ToolInfo } from '../engine/types.ts';
import { notConnected, serverUnavailable } from './call-errors.ts';
import { CallSlots } from './call-slots.ts';
import { createMemoryConnectionStore, ownerKey, personOwner, type ConnectionStore } from './connection-store.ts';
import { connectsInBrowser, type McpConfig, type McpServerConfig } from './mcp-config.ts';
import { McpConnection } from './mcp-connection.ts';
import { createOAuthFetch, type McpLogger } from './mcp-transport.ts';
import { brokenOutput, outputSchemaProblem } from './output-check.ts';
import type { Authorizer } from './oauth-provider.ts';
import type { PersonAuthorizationOptions } from './person-authorization.ts';
import { PersonSessions, type PersonSession } from './person-sessions.ts';
import { QuestionCalls, sessionKey } from './question-calls.ts';
import { DEFAULT_RECONNECT_SCHEDULE, type ReconnectSchedule } from './reconnect.ts';
import { boundOutput, toToolInfo } from './tool-mapping.ts';
import { readResourceAs, readResourceOn, resourceListing } from './resource-host.ts';
import { getPromptFor, listPromptsFor } from './prompt-host.ts';
import { HostConnections, WORKSPACE } from './host-connections.ts';

export type { McpLogger } from './mcp-transport.ts';
export type { ReconnectSchedule } from './reconnect.ts';
export type { Authorizer } from './oauth-provider.ts';

/** Options for `McpHost.connect`. */
export interface McpHostOptions {
  logger?: McpLogger;
  /** Name sent to servers at initialize. */
  clientName?: string;
  clientVersion?: string;
  /** Outputs larger than this (as JSON) are cut, with their size and hash kept. */
  maxOutputBytes?: number;
  /**
   * One message from a server larger than this (as received) is never held: it is refused, with its size and hash,
   * as an error for the call it answers, and the server stays connected. At least `maxOutputBytes`; 8 MiB by default.
   */
  maxMessageBytes?: number;
  /** Limit on spawn + initialize + listing tools, per server and per attempt. */
  connectTimeoutMs?: number;
  /**
   * Waits between attempts to bring back a server that went away or did not start: `initialDelayMs` (250 ms),
   * doubling after each failed attempt up to `maxDelayMs` (30 s), each wait drawn between half and all of that.
   */
  reconnect?: Partial<ReconnectSchedule>;
  /** Where OAuth connections (servers with `auth`) keep their tokens; in this process's memory when left out. */
  connections?: ConnectionStore;
  /** Where authorization servers send a person back to, unless a server's config names its own redirectUrl. */
  oauthRedirectUrl?: string;
  /** Completes an authorization a server asks for; without one, such a server waits for a later connect. */
  authorize?: Authorizer;
  /** How long a person's own session (`"auth": "person"`) stays open after its last call; 5 minutes by default. */
  personIdleMs?: number;
  /**
   * Where servers' questions (`elicitation/create`) go: with it, every session declares the elicitation capability
   * (form mode); without it, none does.
   */
  questions?: ServerQuestions;
  /**
   * Told when a call ends: its qualified name (only for a configured server), `ok`, `tool_error` (the tool said
   * isError) or the step error's code, and its seconds including any wait for a slot. For the operator's metrics.
   */
  onCallEnded?: (tool: string, outcome: string, seconds: number) => void;
}

/** Without a web origin of Steward's own, the loopback address a desktop client would use (RFC 8252). */
const DEFAULT_REDIRECT_URL = 'http://localhost/oauth/callback';

/** A server that could not be started or reached, with a sentence for the operator. */
export interface McpStartFailure {
  server: string;
  message: string;
}

type ServerTool = McpConnection['tools'][number];

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_OUTPUT_BYTES = 1_000_000;
// Outputs up to here are read whole and then cut to `maxOutputBytes` with their leading text kept; the SDK's own
// stdio buffer would give up (and close the connection) at 10 MiB.
const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * Runs MCP tools by qualified name (`<server>.<tool>`). A server that goes away (or does not start) is brought
 * back in the background while the host is open. Never throws from calls.
 */
export class McpHost implements ToolRunner, ServerPrompts {
  private readonly mapped = new WeakMap<object, ToolInfo>();
  // One per server, shared by every run of this process: `maxConcurrency` protects the server, not a run. Without
  // one, a server's calls that may write share a single slot and its read-only calls take none (`slotsFor`).
  private readonly slots = new Map<string, CallSlots>();
  /** The calls runs have in flight, so a server's question finds its step. */
  private questionCalls: QuestionCalls | undefined;
  private onCallEnded: McpHostOptions['onCallEnded'];
  /** People's connections made from a browser. */
  private readonly people: HostConnections;

  private constructor(
    private readonly connections: Map<string, McpConnection>,
    /** Servers that connect per person, by name. */
    private readonly personal: Map<string, PersonSessions>,
    private readonly maxOutputBytes: number,
    private readonly authorization: PersonAuthorizationOptions,
  ) {
    this.people = new HostConnections(connections, personal, authorization);
    for (const [name, conn] of connections) this.slots.set(name, new CallSlots(conn.config.maxConcurrency ?? 1));
    for (const [name, pool] of personal) this.slots.set(name, new CallSlots(pool.config.maxConcurrency ?? 1));
  }

  /**
   * Connects every enabled server in parallel. One that fails is reported in `failures`, the others serve, and
   * the host keeps trying it: its tools join the catalog when it comes up.
   */
  static async connect(
    config: McpConfig,
    options: McpHostOptions = {},
  ): Promise<{ host: McpHost; failures: McpStartFailure[] }> {
    const logger = options.logger ?? (() => {});
    const questions = options.questions ? new QuestionCalls(logger) : undefined;
    if (questions && options.questions) questions.answerWith(options.questions);
    const open = {
      clientName: options.clientName ?? 'steward',
      clientVersion: options.clientVersion ?? '0.1.0',
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      maxMessageBytes: Math.max(
        options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
        options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      ),
      reconnect: { ...DEFAULT_RECONNECT_SCHEDULE, ...options.reconnect },
      logger,
      oauth: {
        store: options.connections ?? createMemoryConnectionStore(),
        redirectUrl: options.oauthRedirectUrl ?? DEFAULT_REDIRECT_URL,
        ...(options.authorize ? { authorize: options.authorize } : {}),
      },
      ...(questions && { questions }),
    };
    const enabled = config.servers.filter((s) => !s.disabled && !isPerPerson(s));
    for (const s of config.servers) if (s.disabled) logger('info', `MCP server "${s.name}" is disabled in the config`);
    const personal = new Map<string, PersonSessions>();
    for (const s of config.servers.filter((s) => !s.disabled && isPerPerson(s)))
      personal.set(s.name, new PersonSessions(s, open, options.personIdleMs));
    // Each one's catalog is listed under a stored connection while the shared servers start.
    const listed = Promise.all(
      [...personal.values()].map((pool) =>
        pool.start().then(
          (line) => logger('info', line),
          (err: unknown) => logger('warn', `MCP server "${pool.config.name}": ${(err as Error).message}`),
        ),
      ),
    );
    const started = await Promise.all(enabled.map((s) => McpConnection.start(s, open)));
    await listed;
    const connections = new Map<string, McpConnection>();
    const failures: McpStartFailure[] = [];
    started.forEach(({ connection, failure }) => {
      const name = connection.config.name;
      connections.set(name, connection);
      if (failure === undefined) {
        logger('info', `MCP server "${name}" connected with ${connection.tools.length} tools`);
      } else if (awaitsApprover(connection)) {
        // Not a failure: the server waits for an approver to connect it from chat.
        logger(
          'info',
          `MCP server "${name}" waits for an approver to connect it for the workspace (connections connect ${name})`,
        );
      } else {
        failures.push({ server: name, message: failure });
        logger('error', failure);
      }
    });
    const authorization = {
      store: open.oauth.store,
      redirectUrl: open.oauth.redirectUrl,
      clientName: open.clientName,
      fetch: createOAuthFetch(open.maxMessageBytes, logger),
    };
    const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const host = new McpHost(connections, personal, maxOutputBytes, authorization);
    host.questionCalls = questions;
    host.onCallEnded = options.onCallEnded;
    return { host, failures };
  }

  /**
   * Tools of the servers that are up right now, with the config's overrides applied; for a server that connects per
   * person, the tools its latest session (anyone's) listed.
   */
  listTools(): ToolInfo[] {
    const tools: ToolInfo[] = [];
    for (const conn of this.connections.values()) {
      // A workspace connection that waits for an approver keeps offering the tools it listed: a plan may name them,
      // and its run waits for the connection instead of the planner never seeing the server.
      if (!conn.isUp && !awaitsApprover(conn)) continue;
      for (const tool of conn.tools) tools.push(this.infoOf(conn.config, tool, conn.serverInfo()));
    }
    for (const pool of this.personal.values())
      for (const tool of pool.tools) tools.push(this.infoOf(pool.config, tool, pool.serverInfo()));
    return tools;
  }

  /**
   * Opens (or finds) the person's own session of a server that connects per person and reads its tool list there, so
   * the definition the call will go out under is the one compared with the pin. The listing becomes the catalog.
   */
  async prepareAs(
    name: string,
    person: Actor,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<PersonalAccess> {
    const server = name.slice(0, Math.max(0, name.indexOf('.')));
    const pool = this.personal.get(server);
    if (!pool) return { kind: 'ready', tool: this.listTools().find((t) => t.name === name) };
    const found = await pool.session(personOwner(person));
    if (found.kind === 'connect') return { kind: 'connect', server };
    if (found.kind === 'failed') return { kind: 'failed', error: serverUnavailable(server, found.message) };
    try {
      await found.connection.refresh(options);
      pool.noteListing(found.connection);
      const tool = found.connection.tools.find((t) => `${server}.${t.name}` === name);
      return { kind: 'ready', tool: tool && this.infoOf(pool.config, tool, found.connection.serverInfo()) };
    } finally {
      found.release();
    }
  }

  /**
   * The servers that offer resources, a few of each (see `ToolRunner.listResources`); for a server that connects per
   * person, what its latest session (anyone's) listed.
   */
  listResources(): ResourceListing[] {
    const out: ResourceListing[] = [];
    for (const c of [...this.connections.values(), ...this.personal.values()]) {
      if (!c.resources || !c.config.allowed) continue;
      const tools = c.tools.map((t) => this.infoOf(c.config, t, c.serverInfo()));
      out.push(resourceListing(c.resources, c.config, tools));
    }
    return out;
  }

  /**
   * Reads one resource from a server that offers resources; on a server that connects per person, only under
   * `options.as`'s own session (never anyone else's), as a call is made. Never throws.
   */
  readResource(server: string, uri: string, options: ToolCallOptions): Promise<ToolCallOutcome> {
    const pool = this.personal.get(server);
    if (pool) return readResourceAs(pool, server, uri, options, this.maxOutputBytes);
    return readResourceOn(this.connections.get(server), server, uri, options, this.maxOutputBytes);
  }

  /** The servers' prompts for `person` (see `ServerPrompts.listPrompts`). */
  listPrompts(
    person: Actor,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<{ prompts: ServerPrompt[]; unconnected: string[]; problems: string[] }> {
    return listPromptsFor(this.connections.values(), this.personal.values(), person, options);
  }

  /** One prompt filled in, on the session `person` may use for its server (see `ServerPrompts.getPrompt`). */
  getPrompt(
    server: string,
    name: string,
    args: Record<string, string>,
    person: Actor,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<Result<string[], string>> {
    const at = { name: server, conn: this.connections.get(server), pool: this.personal.get(server) };
    return getPromptFor(at, name, args, person, options);
  }

  /** Opens (or finds) the person's own session of a server that connects per person (see `ToolRunner.openAs`). */
  async openAs(server: string, person: Actor): Promise<PersonalAccess> {
    const pool = this.personal.get(server);
    if (!pool) return { kind: 'ready', tool: undefined };
    const found = await pool.session(personOwner(person));
    if (found.kind === 'connect') return { kind: 'connect', server };
    if (found.kind === 'failed') return { kind: 'failed', error: serverUnavailable(server, found.message) };
    found.release();
    return { kind: 'ready', tool: undefined };
  }

  /**
   * Re-reads the tool list of the server that offers `name`. A server that is down is waited for, so the
   * definition check that follows sees what the server offers now. Never throws, and returns within `timeoutMs`
   * (a failed refresh keeps the old list).
   */
  async refreshTool(name: string, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    // A server that connects per person is read under the person's own session, by `prepareAs`.
    const conn = this.connections.get(name.slice(0, name.indexOf('.')));
    if (!conn) return;
    // Waiting for an approver: nothing to read until they connect (the call then says so, and its step waits).
    if (!conn.isUp && awaitsApprover(conn) && !(await this.workspaceConnected(conn))) return;
    const timeoutMs = options.timeoutMs ?? conn.config.timeoutMs;
    const deadline = performance.now() + timeoutMs;
    const signal = options.signal ?? new AbortController().signal;
    if (conn.isUp) {
      await conn.refresh({ signal, timeoutMs });
      // A failed listing may be the first sign that an HTTP server has gone: let the health check decide.
      await conn.settle(deadline - performance.now());
    }
    // A session that comes back lists its tools as it opens, so there is nothing left to read.
    if (!conn.isUp) await conn.ready(signal, deadline - performance.now());
  }

  /**
   * Calls `<server>.<tool>`; unknown, disallowed and failed calls come back as error outcomes. A call to a server
   * that is down waits for it to come back, and a call to a server at its `maxConcurrency` (by default: a call that
   * may write, while another one to that server runs) waits for a free slot (first come, first served), both within
   * the call's own timeout; a call aborted or timed out while it waits is never sent.
   */
  async callTool(name: string, args: Record<string, Json>, options: ToolCallOptions): Promise<ToolCallOutcome> {
    const noted = this.onCallEnded;
    const server = name.slice(0, Math.max(0, name.indexOf('.')));
    // A name a plan made up is not reported: its label would be one more series for every typo.
    if (!noted || !(this.connections.has(server) || this.personal.has(server)))
      return this.callSlotted(name, args, options);
    const started = performance.now();
    const outcome = await this.callSlotted(name, args, options);
    const result = outcome.ok ? (outcome.value.isError ? 'tool_error' : 'ok') : outcome.error.code;
    noted(name, result, (performance.now() - started) / 1000);
    return outcome;
  }

  /** A call within its server's slots (`callTool`). */
  private async callSlotted(
    name: string,
    args: Record<string, Json>,
    options: ToolCallOptions,
  ): Promise<ToolCallOutcome> {
    const slots = this.slotsFor(name);
    if (!slots) return this.sendNoted(name, args, options);
    const started = performance.now();
    const wait = await slots.acquire(options.signal, options.timeoutMs);
    if (wait.kind === 'aborted') return { ok: false, error: stepError('cancelled', `${name} was cancelled.`) };
    if (wait.kind === 'timeout') {
      const server = name.slice(0, name.indexOf('.'));
      const configured = (this.connections.get(server) ?? this.personal.get(server))?.config.maxConcurrency;
      return { ok: false, error: busyTimeout(name, slots, options.timeoutMs, configured !== undefined) };
    }
    try {
      // A slot found free costs no time worth counting: the call keeps its whole timeout (and says so if it ends).
      const left = Math.max(1, Math.round(options.timeoutMs - (performance.now() - started)));
      const timeoutMs = wait.queued ? left : options.timeoutMs;
      return await this.sendNoted(name, args, { ...options, timeoutMs });
    } finally {
      wait.release();
    }
  }

  /**
   * Sends a call, noted as the run's call in flight on its session while it is (so a server's question during it
   * reaches that step): only once it holds its slot, since a call still waiting for one is not what a server asks
   * about.
   */
  private sendNoted(name: string, args: Record<string, Json>, options: ToolCallOptions): Promise<ToolCallOutcome> {
    const { runId: _run, stepId: _step, ...sent } = options;
    if (!this.questionCalls) return this.send(name, args, sent);
    const server = name.slice(0, Math.max(0, name.indexOf('.')));
    // Only a server that connects per person runs the call on the person's own session.
    const owner = options.as && this.personal.has(server) ? ownerKey(personOwner(options.as)) : 'workspace';
    return this.questionCalls.track(sessionKey(server, owner), options, () => this.send(name, args, sent));
  }

  /**
   * The slots a call to `name` must hold: its server's `maxConcurrency` when the config sets one; otherwise the
   * server's single write slot for a tool not marked read-only (a server rarely guards its own state against two
   * writes at once: server-memory rewrites its file and loses one of two relations sent together), and none for a
   * read-only tool, so reads stay parallel.
   */
  private slotsFor(name: string): CallSlots | undefined {
    const dot = name.indexOf('.');
    const server = name.slice(0, Math.max(0, dot));
    const slots = this.slots.get(server);
    const config = (this.connections.get(server) ?? this.personal.get(server))?.config;
    if (!slots || !config || config.maxConcurrency !== undefined) return slots;
    const tool = name.slice(dot + 1);
    const conn = this.connections.get(server);
    const listed = conn ? conn.tools : (this.personal.get(server)?.tools ?? []);
    const found = listed.find((t) => t.name === tool);
    const info = found && this.infoOf(config, found, conn?.serverInfo() ?? this.personal.get(server)?.serverInfo());
    return info?.annotations.readOnlyHint === true ? undefined : slots;
  }

  /** Sends a call that holds its server's slot (or an unknown name, to be refused). */
  private async send(
    name: string,
    args: Record<string, Json>,
    options: Omit<ToolCallOptions, 'runId' | 'stepId'>,
  ): Promise<ToolCallOutcome> {
    const server = name.slice(0, Math.max(0, name.indexOf('.')));
    const pool = this.personal.get(server);
    if (!pool) return this.sendShared(server, name, args, options);
    // A server that connects per person runs a call only under the requester's own connection, never anyone else's.
    if (!options.as) {
      const why = `MCP server "${server}" connects per person, and this call names no person; it was not made.`;
      return { ok: false, error: stepError('not_connected', why) };
    }
    const person = personOwner(options.as);
    const found: PersonSession = await pool.session(person);
    if (found.kind === 'connect') return { ok: false, error: notConnected(server) };
    if (found.kind === 'failed') return { ok: false, error: serverUnavailable(server, found.message) };
    try {
      const outcome = await this.sendOn(found.connection, name, args, options);
      // Refused and not refreshed: this session is of no more use; the person connects again.
      if (!outcome.ok && outcome.error.code === 'not_connected') await pool.forget(person.personId);
      return outcome;
    } finally {
      found.release();
    }
  }

  /**
   * Sends a call on the server's one connection. One the workspace connects through an approver, down for want of
   * tokens, refuses it at once as `not_connected` (its step waits for the connection); tokens stored meanwhile (by
   * another process, maybe) bring it up first.
   */
  private async sendShared(
    server: string,
    name: string,
    args: Record<string, Json>,
    options: Omit<ToolCallOptions, 'runId' | 'stepId'>,
  ): Promise<ToolCallOutcome> {
    const conn = this.connections.get(server);
    if (conn && connectsInBrowser(conn.config) === 'workspace') {
      if (!conn.isUp && !(await this.workspaceConnected(conn)))
        return { ok: false, error: notConnected(server, 'workspace') };
      const outcome = await this.sendOn(conn, name, args, options);
      // Refused and not refreshed: down until an approver connects it again.
      if (!outcome.ok && outcome.error.code === 'not_connected') conn.drop('its authorization was refused');
      return outcome;
    }
    return this.sendOn(conn, name, args, options);
  }

  /**
   * Whether the workspace's connection of a server an approver connects can be used: up, or tokens stored for it
   * (then it is brought up now rather than at the end of its backoff; a server that is down for another reason is
   * waited for as any other).
   */
  private async workspaceConnected(conn: McpConnection): Promise<boolean> {
    if (conn.isUp) return true;
    const stored = await this.authorization.store.read(conn.config.name, WORKSPACE, 'tokens').catch(() => undefined);
    if (stored === undefined) return false;
    return (await conn.retryNow()) || !conn.needsAuthorization;
  }

  /** Sends a call on one connection (the server's, or a person's own). */
  private async sendOn(
    conn: McpConnection | undefined,
    name: string,
    args: Record<string, Json>,
    options: Omit<ToolCallOptions, 'runId' | 'stepId' | 'as'>,
  ): Promise<ToolCallOutcome> {
    const dot = name.indexOf('.');
    const server = dot > 0 ? name.slice(0, dot) : '';
    const tool = dot > 0 ? name.slice(dot + 1) : '';
    if (!conn) return { ok: false, error: stepError('unknown_tool', `No enabled MCP server offers "${name}".`) };
    const started = performance.now();
    // The definition the engine last saw (while the server is down, the last one it listed): a send after a wait
    // must still match it, since the engine compared that one with its pin.
    const known = this.definitionOf(conn, tool);
    let timeoutMs = options.timeoutMs;
    for (let sends = 0; ; sends++) {
      if (!conn.isUp) {
        const readiness = await conn.ready(options.signal, timeoutMs);
        if (readiness === 'aborted') return { ok: false, error: stepError('cancelled', `${name} was cancelled.`) };
        if (readiness !== 'up') {
          const why = conn.goneReason ?? 'it is not connected';
          const waited = readiness === 'timeout' ? `${why}; not back within ${timeoutMs} ms` : why;
          return { ok: false, error: serverUnavailable(server, waited) };
        }
        timeoutMs = Math.max(1, Math.round(options.timeoutMs - (performance.now() - started)));
      }
      const current = this.definitionOf(conn, tool);
      if (!current) {
        return { ok: false, error: stepError('unknown_tool', `MCP server "${server}" has no tool "${tool}".`) };
      }
      if (known && current.fingerprint !== known.fingerprint) {
        const why = `the definition of "${tool}" changed while the call waited for the server, so the call was not sent; it must be checked again`;
        return { ok: false, error: serverUnavailable(server, why) };
      }
      // The engine checks policy first; this is the last line if something upstream forgot.
      if ((conn.config.tools[tool]?.allowed ?? conn.config.allowed) === false) {
        return { ok: false, error: stepError('unknown_tool', `${name} is not allowed by the MCP config.`) };
      }
      let result;
      try {
        result = await conn.call(tool, args, {
          signal: options.signal,
          timeoutMs,
          ...(options.onProgress && { onProgress: options.onProgress }),
        });
      } catch (err) {
        // conn.call translates every SDK failure; this only guards the never-throw promise against bugs.
        return { ok: false, error: stepError('internal', `${name} failed unexpectedly: ${String(err)}`) };
      }
      const { outcome } = result;
      // Sent once more only when the server provably never got it (refused, or a session it no longer knows).
      const left = options.timeoutMs - (performance.now() - started);
      if (result.notDelivered && sends === 0 && left > 1) {
        await conn.settle(left);
        timeoutMs = Math.max(1, Math.round(options.timeoutMs - (performance.now() - started)));
        continue;
      }
      if (!outcome.ok) return outcome;
      // Checked here for every tool: the SDK checks only the tools of a listing's last page.
      const broken = current.outputSchema && outputSchemaProblem(current.outputSchema, outcome.value);
      if (broken) return { ok: false, error: brokenOutput(name, broken) };
      return { ok: true, value: boundOutput(outcome.value, this.maxOutputBytes) };
    }
  }

  /** Name and version a server reported at initialize, for pinning tool definitions. */
  serverInfo(name: string): { name: string; version: string } | undefined {
    return this.connections.get(name)?.serverInfo() ?? this.personal.get(name)?.serverInfo();
  }

  /** The servers that connect per person. */
  personServers(): string[] {
    return this.people.personServers();
  }

  /** The servers whose one connection, the workspace's, an approver makes in their browser. */
  workspaceServers(): string[] {
    return this.people.workspaceServers();
  }

  /**
   * Someone connected a server that connects per person, maybe through another process: each such server whose
   * tools this process has not listed yet lists them now under a stored connection, so its planner sees them. Lines
   * for the log (none when every catalog was there already).
   */
  async listUnlisted(): Promise<string[]> {
    const unlisted = [...this.personal.values()].filter((pool) => pool.tools.length === 0);
    const lines = await Promise.all(unlisted.map((pool) => pool.start()));
    // An approver connected a workspace server (here or through another process): it comes up now, not after backoff.
    for (const conn of this.connections.values()) {
      if (conn.isUp || connectsInBrowser(conn.config) !== 'workspace') continue;
      if (await this.workspaceConnected(conn))
        lines.push(`MCP server "${conn.config.name}" connected for the workspace with ${conn.tools.length} tools`);
    }
    return lines;
  }

  /** Person sessions open now, per server that connects per person (diagnostics and tests). */
  openPersonSessions(server: string): number {
    return this.personal.get(server)?.openCount ?? 0;
  }

  /**
   * Where to send a person's browser to connect `server`: its authorization server's page, carrying `state`; the
   * callback at `redirectUrl` then calls `finishConnection`. Throws with a sentence when the server cannot be reached.
   */
  connectionUrl(server: string, person: Actor, state: string): Promise<URL> {
    return this.people.connectionUrl(server, person, state);
  }

  /** The code the person's browser came back with, exchanged (`HostConnections.finishConnection`). */
  finishConnection(server: string, person: Actor, code: string, pending = false): Promise<string | undefined> {
    return this.people.finishConnection(server, person, code, pending);
  }

  /** The person confirmed the connection that waited for them (`HostConnections.usePending`). */
  usePending(server: string, person: Actor): Promise<boolean> {
    return this.people.usePending(server, person);
  }

  /** The person refused the connection that waited for them (`HostConnections.refusePending`). */
  refusePending(server: string, person: Actor, fingerprint?: string): Promise<{ known: boolean; revoked: boolean }> {
    return this.people.refusePending(server, person, fingerprint);
  }

  /** Forgets the person's connection to `server`, revoked where it can be (`HostConnections.disconnect`). */
  disconnect(server: string, person: Actor): Promise<{ known: boolean; revoked: boolean }> {
    return this.people.disconnect(server, person);
  }

  /** Where the person, and the workspace, stand with each server connected from a browser. */
  connectionsOf(person: Actor, at: Date = new Date()): Promise<PersonConnection[]> {
    return this.people.connectionsOf(person, at);
  }

  /** Whether the person (the workspace, for a server an approver connects) holds tokens for the server. */
  hasConnection(server: string, person: Actor): Promise<boolean> {
    return this.people.hasConnection(server, person);
  }

  /** The servers that wait, now, for an approver to connect them for the workspace. */
  awaitingApprover(): string[] {
    return [...this.connections.values()].filter(awaitsApprover).map((c) => c.config.name);
  }

  /** Each enabled server and whether it is connected now (for readiness probes). */
  serverStatus(): { name: string; up: boolean }[] {
    return [...this.connections.entries()].map(([name, conn]) => ({ name, up: conn.isUp }));
  }

  /** Process id of a stdio server's child while it is up, for diagnostics. */
  serverPid(name: string): number | undefined {
    return this.connections.get(name)?.pid;
  }

  /** Stops reconnecting, closes every session and stops every child process. */
  async close(): Promise<void> {
    await Promise.all([
      ...[...this.connections.values()].map((c) => c.close()),
      ...[...this.personal.values()].map((p) => p.close()),
    ]);
  }

  private definitionOf(conn: McpConnection, tool: string): ToolInfo | undefined {
    const found = conn.tools.find((t) => t.name === tool);
    return found && this.infoOf(conn.config, found, conn.serverInfo());
  }

  // A refreshed list (or a new session) brings new objects, so a changed definition is always mapped (and hashed) anew.
  private infoOf(
    config: McpServerConfig,
    tool: ServerTool,
    serverInfo: { name: string; version: string } | undefined,
  ): ToolInfo {
    let info = this.mapped.get(tool);
    if (!info) {
      info = toToolInfo(config, tool, serverInfo);
      this.mapped.set(tool, info);
    }
    return info;
  }
}

/** A server whose workspace connection an approver makes, down until they do (or do again). */
function awaitsApprover(conn: McpConnection): boolean {
  return conn.needsAuthorization && connectsInBrowser(conn.config) === 'workspace';
}

function isPerPerson(s: McpServerConfig): boolean {
  return s.transport.kind === 'http' && s.transport.auth?.owner === 'person';
}

/** A call that waited its whole timeout for a slot; never sent, so sending it again later is safe. */
function busyTimeout(name: string, slots: CallSlots, timeoutMs: number, configured: boolean): StepError {
  const server = name.slice(0, name.indexOf('.'));
  const takes = configured
    ? `takes ${slots.limit} call${slots.limit === 1 ? '' : 's'} at a time (maxConcurrency)`
    : 'takes one call that may write at a time (the default without maxConcurrency)';
  return stepError(
    'timeout',
    `${name} was not sent: MCP server "${server}" ${takes} and none came free within the call's ${timeoutMs} ms timeout.`,
    true,
  );
}
