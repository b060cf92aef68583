/**
 * One configured server for as long as the host is open: its current session, the tool cache, calls, noticing
 * when the server goes away, and bringing it back (a new session, with backoff) until the host closes.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { stepError } from '../engine/errors.ts';
import type { ResourceListing, ToolCallOutcome, ToolProgress } from '../engine/ports.ts';
import type { Json, ToolOutput } from '../engine/types.ts';
import { followSignal } from './abort-fanout.ts';
import { describeError, neverDelivered, serverUnavailable, toStepError } from './call-errors.ts';
import { connectsInBrowser, type McpServerConfig } from './mcp-config.ts';
import { McpSession, StartFailure, type OpenOptions, type SessionEvents } from './mcp-session.ts';
import { describeStartFailure } from './mcp-transport.ts';
import { describeOversized } from './oversized-message.ts';
import { reconnectDelay, type ReconnectSchedule } from './reconnect.ts';
import { toResourceOutput } from './resource-reads.ts';
import { callableTools, listAllTools } from './tool-listing.ts';
import { maxTotalTimeoutFor, qualifiedName, toToolOutput } from './tool-mapping.ts';

export type { OpenOptions } from './mcp-session.ts';

/** What a connection needs besides the server's config. */
export interface ConnectionOptions extends OpenOptions {
  reconnect: ReconnectSchedule;
}

/** How waiting for a server to be up ended. */
export type Readiness = 'up' | 'aborted' | 'timeout' | 'closed';

/** A call's outcome, and whether its request provably never reached the server (so it may be sent again). */
export interface CallResult {
  outcome: ToolCallOutcome;
  notDelivered: boolean;
}

// A health check of an HTTP session that reported a transport error: long enough for a busy server.
const PROBE_TIMEOUT_MS = 5000;

/** A configured server. `start` never throws: a server that does not come up is retried in the background. */
export class McpConnection {
  /** The tools of the current session; while the server is down, the last ones it listed (not offered). */
  tools: Tool[] = [];
  /** The resources its current session listed at start; while it is down, the last ones (see `McpSession`). */
  resources: ResourceListing | undefined;
  /** Why the server is down right now; undefined while it is up. */
  goneReason: string | undefined = 'it has not connected yet';
  /** Down because its authorization server wants someone to authorize Steward (no working tokens are stored). */
  needsAuthorization = false;
  private session: McpSession | undefined;
  private lastServerInfo: { name: string; version: string } | undefined;
  private everUp = false;
  private closing = false;
  private readonly shutdown = new AbortController();
  /** Attempts since the server was last stably up (or since start), for the backoff. */
  private retries = 0;
  private upSince = 0;
  private downSince = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempt: Promise<void> | undefined;
  private probe: Promise<void> | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly endings = new Set<Promise<void>>();
  private refreshSeq = 0;
  /** The tool listing in flight, and the one that starts after it for callers who asked meanwhile. */
  private listing: Promise<void> | undefined;
  private nextListing: Promise<void> | undefined;
  private skippedTools = '';
  private readonly events: SessionEvents;

  private constructor(
    readonly config: McpServerConfig,
    private readonly options: ConnectionOptions,
  ) {
    this.events = {
      onClose: (session) => this.onClose(session),
      onError: (session, err) => this.onError(session, err),
      onToolsChanged: (session) => void this.refresh({}, session),
      onResourcesChanged: (session) => void this.relistResources(session),
    };
  }

  /**
   * Opens the first session. When that fails, the failure's sentence comes back for the operator and the
   * connection keeps trying in the background.
   */
  static async start(
    config: McpServerConfig,
    options: ConnectionOptions,
  ): Promise<{ connection: McpConnection; failure?: string; unauthorized?: boolean }> {
    const connection = new McpConnection(config, options);
    const failure = await connection.connectOnce();
    if (!failure) return { connection };
    connection.goneReason = `it has not started yet (${failure.reason})`;
    connection.needsAuthorization = failure.unauthorized;
    connection.scheduleRetry();
    return { connection, failure: failure.message, unauthorized: failure.unauthorized };
  }

  /** The current session's client, for requests beside calls and reads (prompts); undefined while it is down. */
  get client(): McpSession['client'] | undefined {
    return this.session?.client;
  }

  get isUp(): boolean {
    return this.session !== undefined;
  }

  /** Name and version the server reported at initialize (the last ones known while it is down). */
  serverInfo(): { name: string; version: string } | undefined {
    return this.session?.serverInfo() ?? this.lastServerInfo;
  }

  /** The child's process id for a stdio server while it is up. */
  get pid(): number | undefined {
    return this.session?.pid;
  }

  /**
   * Waits until the server is up, for at most `timeoutMs`; never throws. Returns at once when it is up already,
   * when `signal` is aborted, or when the host has closed.
   */
  ready(signal: AbortSignal, timeoutMs: number): Promise<Readiness> {
    if (this.closing) return Promise.resolve('closed');
    if (this.session) return Promise.resolve('up');
    if (signal.aborted) return Promise.resolve('aborted');
    if (timeoutMs <= 0) return Promise.resolve('timeout');
    return new Promise((resolve) => {
      // Through the fan-out: many calls that share one run-wide signal may wait for the same server.
      const own = followSignal(signal);
      const done = (readiness: Readiness) => {
        clearTimeout(timer);
        own.release();
        this.waiters.delete(onChange);
        resolve(readiness);
      };
      const onChange = () => done(this.session ? 'up' : 'closed');
      const timer = setTimeout(() => done('timeout'), timeoutMs);
      own.signal.addEventListener('abort', () => done('aborted'), { once: true });
      this.waiters.add(onChange);
    });
  }

  /**
   * Tries to open a session now instead of at the end of the backoff (tokens were stored for it, maybe by another
   * process): true when it is up. An attempt already under way is waited for rather than doubled.
   */
  async retryNow(): Promise<boolean> {
    if (this.session || this.closing) return this.session !== undefined;
    if (this.attempt) await this.attempt;
    if (this.session || this.closing) return this.session !== undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.attempt = this.retry().finally(() => (this.attempt = undefined));
    await this.attempt;
    return this.session !== undefined;
  }

  /**
   * Ends the session because its connection was disconnected (its tokens revoked and forgotten): calls find it down,
   * waiting for someone to authorize Steward again, and it is tried again with backoff as any other.
   */
  drop(why: string): void {
    const session = this.session;
    if (session) this.lost(session, why);
    this.needsAuthorization = true;
  }

  /** Waits (at most `timeoutMs`) for a health check in progress to decide whether the server is still there. */
  async settle(timeoutMs: number): Promise<void> {
    const probe = this.probe;
    if (!probe || timeoutMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([probe, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** Calls one tool on the current session; every failure comes back as an outcome. */
  async call(
    tool: string,
    args: Record<string, Json>,
    options: { signal: AbortSignal; timeoutMs: number; onProgress?: (progress: ToolProgress) => void },
  ): Promise<CallResult> {
    const name = qualifiedName(this.config.name, tool);
    return this.request(name, options, async (session, signal) => {
      const result = await session.client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: options.timeoutMs,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: maxTotalTimeoutFor(this.config, tool),
        // Asking for progress is what makes the server send it, and progress is what extends the timeout. The SDK
        // forgets the call's handler when it ends, so a report after the end never reaches the caller; it also reads
        // a notification a turn after a response, so a report sent right before the result may be lost with it.
        onprogress: (p) => {
          if (options.signal.aborted) return;
          try {
            options.onProgress?.({
              progress: p.progress,
              ...(p.total !== undefined && { total: p.total }),
              ...(p.message !== undefined && { message: p.message }),
            });
          } catch (err) {
            this.logger(
              'warn',
              `MCP server "${this.config.name}": a progress report of ${name} failed: ${describeError(err)}`,
            );
          }
        },
      });
      return toToolOutput(result);
    });
  }

  /**
   * Reads one resource on the current session (MCP `resources/read`), as `call` sends a call: the caller's signal
   * cancels it while it waits for its answer (the server gets `notifications/cancelled`), and every failure comes back
   * as an outcome.
   */
  async read(uri: string, options: { signal: AbortSignal; timeoutMs: number }): Promise<CallResult> {
    const name = `${this.config.name} resource ${uri}`;
    return this.request(name, options, async (session, signal) =>
      toResourceOutput(await session.client.readResource({ uri }, { signal, timeout: options.timeoutMs })),
    );
  }

  /**
   * One request on the current session (a call, a resource read): refused at once when already cancelled or with no
   * session, sent with a signal of its own that follows the caller's, and every failure comes back as an outcome.
   */
  private async request(
    name: string,
    options: { signal: AbortSignal; timeoutMs: number },
    send: (session: McpSession, signal: AbortSignal) => Promise<ToolOutput>,
  ): Promise<CallResult> {
    if (options.signal.aborted) {
      return { outcome: { ok: false, error: stepError('cancelled', `${name} was cancelled.`) }, notDelivered: false };
    }
    const session = this.session;
    if (!session) {
      const why = this.goneReason ?? 'it is not connected';
      return { outcome: { ok: false, error: serverUnavailable(this.config.name, why) }, notDelivered: false };
    }
    // A signal of our own per request: the SDK adds an abort listener per request and never removes it.
    const own = followSignal(options.signal);
    try {
      return { outcome: { ok: true, value: await send(session, own.signal) }, notDelivered: false };
    } catch (err) {
      return this.failed(session, err, name, options);
    } finally {
      own.release();
    }
  }

  /** A request that failed, as an outcome; whether it provably never reached the server. */
  private async failed(
    session: McpSession,
    err: unknown,
    name: string,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<CallResult> {
    // A scope step-up or a revoked token: an authorization that came back meanwhile lets the request go again.
    if (!options.signal.aborted && (await session.finishAuthorization(err).catch(() => false))) {
      return {
        outcome: { ok: false, error: serverUnavailable(this.config.name, 'authorizing') },
        notDelivered: true,
      };
    }
    const cancelledByCaller = options.signal.aborted;
    const connects = connectsInBrowser(this.config);
    const failed = { name, server: this.config.name, timeoutMs: options.timeoutMs, cancelledByCaller, connects };
    const gone = session.lost !== undefined ? { serverGone: session.lost } : {};
    return {
      outcome: { ok: false, error: toStepError(err, { ...failed, ...gone }) },
      notDelivered: !cancelledByCaller && neverDelivered(err),
    };
  }

  /**
   * Reads the tool list from the server again (used before each step to compare definitions with their pins),
   * within the step's own time: a hung server costs the step its timeout once, not twice. Never throws; a failed
   * refresh keeps the list it had, and a caller whose signal aborts stops waiting.
   *
   * One listing is in flight at a time, and every caller waits for one that started after it asked: steps that
   * start together (a thousand workflow fires in one second) share a listing instead of sending one each, and none
   * is judged by a list older than its request.
   */
  async refresh(options: { signal?: AbortSignal; timeoutMs?: number } = {}, from = this.session): Promise<void> {
    if (!this.listing) {
      this.listing = this.listOnce(options, from).finally(() => (this.listing = undefined));
      return untilAborted(this.listing, options.signal);
    }
    this.nextListing ??= this.listing.then(() => {
      this.nextListing = undefined;
      return this.refresh(options, from);
    });
    return untilAborted(this.nextListing, options.signal);
  }

  private async listOnce(
    options: { signal?: AbortSignal; timeoutMs?: number },
    from: McpSession | undefined,
  ): Promise<void> {
    const session = this.session;
    if (!session || session !== from) return;
    const seq = ++this.refreshSeq;
    try {
      const timeout = Math.min(options.timeoutMs ?? this.config.timeoutMs, this.config.timeoutMs);
      const tools = await listAllTools(session.client, { timeout, signal: options.signal });
      // A slower, older refresh (or one from a session that has ended since) must not overwrite a newer list.
      if (seq !== this.refreshSeq || session !== this.session) return;
      const before = this.tools.length;
      this.tools = this.usable(tools);
      // Refreshed before every step: only a change is worth a line in the log.
      if (before !== this.tools.length)
        this.logger('info', `MCP server "${this.config.name}" now offers ${this.tools.length} tools`);
    } catch (err) {
      if (this.closing || session !== this.session) return;
      this.logger('warn', `MCP server "${this.config.name}": refreshing tools failed: ${describeError(err)}`);
    }
  }

  /** Lists the resources of a server that announced a change, so the next plan is shown them; never throws. */
  private async relistResources(session: McpSession): Promise<void> {
    if (session !== this.session) return;
    await session.listResources({ timeout: this.config.timeoutMs }, this.logger).catch(() => {});
    if (session === this.session) this.resources = session.resources;
  }

  /** Stops reconnecting, ends the session and stops every child (stdin closed, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    this.closing = true;
    this.goneReason = 'the MCP host was shut down';
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    // Stops an attempt in progress, child and all.
    this.shutdown.abort();
    const session = this.session;
    this.session = undefined;
    this.wake();
    await Promise.all([session?.close(), this.attempt, this.probe, ...this.endings]);
  }

  private get logger() {
    return this.options.logger;
  }

  /** One attempt to open a session; undefined when it is up. */
  private async connectOnce(): Promise<StartFailure | undefined> {
    let session: McpSession;
    try {
      session = await McpSession.open(this.config, this.options, this.events, this.shutdown.signal);
    } catch (err) {
      if (err instanceof StartFailure) return err;
      const text = describeStartFailure(this.config, err, undefined, this.options.connectTimeoutMs);
      return new StartFailure(text.message, text.reason, { cause: err });
    }
    if (this.closing) {
      await session.close();
      return undefined;
    }
    const retries = this.retries;
    const wasUp = this.everUp;
    this.session = session;
    this.lastServerInfo = session.serverInfo();
    this.tools = this.usable(session.tools);
    this.resources = session.resources;
    this.goneReason = undefined;
    this.needsAuthorization = false;
    this.upSince = performance.now();
    this.everUp = true;
    if (retries > 0) {
      const name = this.config.name;
      const count = `${this.tools.length} tools`;
      this.logger(
        'info',
        wasUp
          ? `MCP server "${name}" is back with ${count} (retry ${retries}, ${seconds(performance.now() - this.downSince)} s after it stopped)`
          : `MCP server "${name}" connected with ${count} (retry ${retries})`,
      );
    }
    this.wake();
    return undefined;
  }

  /** Waits out the backoff, then tries again (and again) until the server is up or the host closes. */
  private scheduleRetry(): number {
    this.retries += 1;
    const wait = reconnectDelay(this.options.reconnect, this.retries);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.attempt = this.retry().finally(() => (this.attempt = undefined));
    }, wait);
    return wait;
  }

  private async retry(): Promise<void> {
    // Down for want of an authorization no one here can give (a workspace server waiting for an approver, a person's
    // session whose tokens are gone): an attempt without tokens would only register one more OAuth client at its
    // authorization server. Until tokens are stored it looks at the store, not the server, at each turn of the
    // backoff (someone connecting it brings it up at once: `retryNow`).
    if (await this.waitsForTokens()) {
      if (!this.closing) this.scheduleRetry();
      return;
    }
    const failure = await this.connectOnce();
    if (!failure || this.closing) return;
    this.needsAuthorization = failure.unauthorized;
    if (!this.everUp) this.goneReason = `it has not started yet (${failure.reason})`;
    const tried = this.retries;
    const wait = this.scheduleRetry();
    this.logger('warn', `${failure.message} Retry ${tried} failed; the next in ${seconds(wait)} s.`);
  }

  /** Whether it is down for want of tokens that only someone else can get, and none are stored yet. */
  private async waitsForTokens(): Promise<boolean> {
    const t = this.config.transport;
    if (!this.needsAuthorization || t.kind !== 'http' || !t.auth) return false;
    // A machine connection gets its own tokens, and a host given an authorizer asks someone.
    if (t.auth.grant === 'client_credentials' || this.options.oauth.authorize) return false;
    const owner = this.options.oauth.owner ?? { kind: 'workspace' as const };
    // Not knowing (the database away) is not a reason to stop trying the server.
    const tokens = await this.options.oauth.store.read(this.config.name, owner, 'tokens').catch(() => 'unknown');
    return tokens === undefined;
  }

  private onClose(session: McpSession): void {
    const last = session.stderr.lastLine();
    const what = session.isHttp ? 'the connection closed' : 'its process exited';
    // Refused messages keep the session; a server that goes away after one most likely went because of it.
    const after = session.oversized ? ` after sending an ${describeOversized(session.oversized)}` : '';
    this.lost(session, `${what}${after}${last ? ` (last stderr: ${last})` : ''}`);
  }

  private onError(session: McpSession, err: Error): void {
    // A server may go on reporting progress for a call it was told was cancelled (the spec lets a cancellation arrive
    // too late, and server-everything keeps its loop going): nothing waits for it, so it is dropped without a word.
    if (err.message.startsWith('Received a progress notification for an unknown token')) return;
    const current = session === this.session && !this.closing;
    // An ended session's streams report their own closing.
    this.logger(current ? 'warn' : 'debug', `MCP server "${this.config.name}": ${describeError(err)}`);
    // Over HTTP nothing closes when the server goes away: a stream breaks or a request fails. Ask whether it is there.
    if (current && session.isHttp) void this.checkHealth(session);
  }

  /** Pings an HTTP session that reported a transport error; a failed ping means the server is gone. */
  private checkHealth(session: McpSession): Promise<void> {
    this.probe ??= session.client
      .ping({ timeout: Math.min(PROBE_TIMEOUT_MS, this.options.connectTimeoutMs) })
      .then(
        () => {},
        (err: unknown) => this.lost(session, `the connection failed: ${cut(describeError(err), 300)}`),
      )
      .finally(() => (this.probe = undefined));
    return this.probe;
  }

  private lost(session: McpSession, why: string): void {
    if (session !== this.session || this.closing) return;
    session.lost = why;
    this.session = undefined;
    this.goneReason = why;
    this.downSince = performance.now();
    this.logger('error', `MCP server "${this.config.name}" stopped: ${why}`);
    // Over HTTP this also fails the calls still waiting on the old session; over stdio it makes sure the child is gone.
    const ending = session.close().finally(() => this.endings.delete(ending));
    this.endings.add(ending);
    // A server that dies soon after each start keeps backing off; one that ran a while starts over at the first wait.
    if (this.downSince - this.upSince >= this.options.reconnect.maxDelayMs) this.retries = 0;
    this.scheduleRetry();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  // Plans must not see tools that a plain tools/call cannot run.
  private usable(tools: Tool[]): Tool[] {
    const { callable, taskOnly } = callableTools(tools);
    const skipped = taskOnly.join(', ');
    if (skipped !== '' && skipped !== this.skippedTools) {
      this.logger('info', `MCP server "${this.config.name}": skipping task-only tools ${skipped}`);
    }
    this.skippedTools = skipped;
    return callable;
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The promise, or sooner when the signal aborts (what was waited for goes on for the others). */
function untilAborted(p: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return p;
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = () => resolve();
    signal.addEventListener('abort', stop, { once: true });
    void p.finally(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    });
  });
}
