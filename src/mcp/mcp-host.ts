/**
 * The MCP host: one connection per configured server, offered to the engine as a `ToolRunner`.
 */
import { stepError } from '../engine/errors.ts';
import type { ToolCallOutcome, ToolRunner } from '../engine/ports.ts';
import type { Json, StepError, ToolInfo } from '../engine/types.ts';
import { serverUnavailable } from './call-errors.ts';
import { CallSlots } from './call-slots.ts';
import { createMemoryConnectionStore, type ConnectionStore } from './connection-store.ts';
import type { McpConfig } from './mcp-config.ts';
import { McpConnection } from './mcp-connection.ts';
import type { McpLogger } from './mcp-transport.ts';
import type { Authorizer } from './oauth-provider.ts';
import { DEFAULT_RECONNECT_SCHEDULE, type ReconnectSchedule } from './reconnect.ts';
import { boundOutput, toToolInfo } from './tool-mapping.ts';

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
}

/** Until Steward serves its own callback, the loopback address a desktop client would use (RFC 8252). */
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
export class McpHost implements ToolRunner {
  private readonly mapped = new WeakMap<object, ToolInfo>();
  // One per server, shared by every run of this process: `maxConcurrency` protects the server, not a run.
  private readonly slots = new Map<string, CallSlots>();

  private constructor(
    private readonly connections: Map<string, McpConnection>,
    private readonly maxOutputBytes: number,
  ) {
    for (const [name, conn] of connections) this.slots.set(name, new CallSlots(conn.config.maxConcurrency));
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
    };
    const perPerson = (s: McpConfig['servers'][number]) =>
      s.transport.kind === 'http' && s.transport.auth?.owner === 'person';
    const enabled = config.servers.filter((s) => !s.disabled && !perPerson(s));
    for (const s of config.servers) if (s.disabled) logger('info', `MCP server "${s.name}" is disabled in the config`);
    for (const s of config.servers.filter((s) => !s.disabled && perPerson(s))) {
      logger(
        'warn',
        `MCP server "${s.name}" connects per person ("auth": "person"), which this version cannot do yet; it is left out`,
      );
    }
    const started = await Promise.all(enabled.map((s) => McpConnection.start(s, open)));
    const connections = new Map<string, McpConnection>();
    const failures: McpStartFailure[] = [];
    started.forEach(({ connection, failure }) => {
      const name = connection.config.name;
      connections.set(name, connection);
      if (failure === undefined) {
        logger('info', `MCP server "${name}" connected with ${connection.tools.length} tools`);
      } else {
        failures.push({ server: name, message: failure });
        logger('error', failure);
      }
    });
    return { host: new McpHost(connections, options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES), failures };
  }

  /** Tools of the servers that are up right now, with the config's overrides applied. */
  listTools(): ToolInfo[] {
    const tools: ToolInfo[] = [];
    for (const conn of this.connections.values()) {
      if (!conn.isUp) continue;
      for (const tool of conn.tools) tools.push(this.infoOf(conn, tool));
    }
    return tools;
  }

  /**
   * Re-reads the tool list of the server that offers `name`. A server that is down is waited for, so the
   * definition check that follows sees what the server offers now. Never throws, and returns within `timeoutMs`
   * (a failed refresh keeps the old list).
   */
  async refreshTool(name: string, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    const conn = this.connections.get(name.slice(0, name.indexOf('.')));
    if (!conn) return;
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
   * that is down waits for it to come back, and a call to a server at its `maxConcurrency` waits for a free slot
   * (first come, first served), both within the call's own timeout; a call aborted or timed out while it waits is
   * never sent.
   */
  async callTool(
    name: string,
    args: Record<string, Json>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<ToolCallOutcome> {
    const slots = this.slots.get(name.slice(0, Math.max(0, name.indexOf('.'))));
    if (!slots) return this.send(name, args, options);
    const started = performance.now();
    const wait = await slots.acquire(options.signal, options.timeoutMs);
    if (wait.kind === 'aborted') return { ok: false, error: stepError('cancelled', `${name} was cancelled.`) };
    if (wait.kind === 'timeout') return { ok: false, error: busyTimeout(name, slots, options.timeoutMs) };
    try {
      const timeoutMs = Math.max(1, Math.round(options.timeoutMs - (performance.now() - started)));
      return await this.send(name, args, { signal: options.signal, timeoutMs });
    } finally {
      wait.release();
    }
  }

  /** Sends a call that holds its server's slot (or an unknown name, to be refused). */
  private async send(
    name: string,
    args: Record<string, Json>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<ToolCallOutcome> {
    const dot = name.indexOf('.');
    const server = dot > 0 ? name.slice(0, dot) : '';
    const tool = dot > 0 ? name.slice(dot + 1) : '';
    const conn = this.connections.get(server);
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
        result = await conn.call(tool, args, { signal: options.signal, timeoutMs });
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
      return outcome.ok ? { ok: true, value: boundOutput(outcome.value, this.maxOutputBytes) } : outcome;
    }
  }

  /** Name and version a server reported at initialize, for pinning tool definitions. */
  serverInfo(name: string): { name: string; version: string } | undefined {
    return this.connections.get(name)?.serverInfo();
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
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }

  private definitionOf(conn: McpConnection, tool: string): ToolInfo | undefined {
    const found = conn.tools.find((t) => t.name === tool);
    return found && this.infoOf(conn, found);
  }

  // A refreshed list (or a new session) brings new objects, so a changed definition is always mapped (and hashed) anew.
  private infoOf(conn: McpConnection, tool: ServerTool): ToolInfo {
    let info = this.mapped.get(tool);
    if (!info) {
      info = toToolInfo(conn.config, tool, conn.serverInfo());
      this.mapped.set(tool, info);
    }
    return info;
  }
}

/** A call that waited its whole timeout for a slot; never sent, so sending it again later is safe. */
function busyTimeout(name: string, slots: CallSlots, timeoutMs: number): StepError {
  const server = name.slice(0, name.indexOf('.'));
  return stepError(
    'timeout',
    `${name} was not sent: MCP server "${server}" takes ${slots.limit} call${slots.limit === 1 ? '' : 's'} at a time ` +
      `(maxConcurrency) and none came free within the call's ${timeoutMs} ms timeout.`,
    true,
  );
}
