/**
 * One live connection to one MCP server: start-up, the tool cache, calls, and noticing when it dies.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { stepError } from '../engine/errors.ts';
import type { ToolCallOutcome } from '../engine/ports.ts';
import type { Json } from '../engine/types.ts';
import { followSignal } from './abort-fanout.ts';
import { describeError, serverUnavailable, toStepError } from './call-errors.ts';
import type { McpServerConfig } from './mcp-config.ts';
import {
  createTransport,
  describeStartFailure,
  stopProcess,
  TrackedStdioTransport,
  type McpLogger,
} from './mcp-transport.ts';
import { StderrTail } from './stderr-tail.ts';
import { callableTools, listAllTools } from './tool-listing.ts';
import { maxTotalTimeoutFor, qualifiedName, toToolOutput } from './tool-mapping.ts';

/** What opening a connection needs besides the server's config. */
export interface OpenOptions {
  clientName: string;
  clientVersion: string;
  connectTimeoutMs: number;
  logger: McpLogger;
}

/** A connected server. `open` throws an Error whose message is a sentence for the operator. */
export class McpConnection {
  tools: Tool[] = [];
  /** Set once the server has gone away on its own; every later call fails with it. */
  goneReason: string | undefined;
  private closing = false;
  private refreshSeq = 0;
  private skippedTools = '';

  private constructor(
    readonly config: McpServerConfig,
    private readonly client: Client,
    private readonly transport: TrackedStdioTransport | StreamableHTTPClientTransport,
    private readonly stderr: StderrTail,
    private readonly logger: McpLogger,
  ) {}

  /** Starts the server (or reaches it), initializes, and lists every page of its tools. */
  static async open(config: McpServerConfig, options: OpenOptions): Promise<McpConnection> {
    const stderr = new StderrTail();
    const transport = createTransport(config, stderr, options.logger);
    // Debounced because a server registering tools one by one sends one notification per tool.
    const onChanged = () => void conn.refreshTools();
    const client = new Client(
      { name: options.clientName, version: options.clientVersion },
      { capabilities: {}, listChanged: { tools: { autoRefresh: false, debounceMs: 100, onChanged } } },
    );
    const conn = new McpConnection(config, client, transport, stderr, options.logger);
    // A deadline for the whole start-up, cleared after: the SDK never drops its abort listener, and a
    // late abort would send `notifications/cancelled` for requests that finished long ago.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), options.connectTimeoutMs);
    try {
      const requestOptions = { signal: deadline.signal, timeout: options.connectTimeoutMs };
      await client.connect(transport, requestOptions);
      conn.tools = conn.usable(await listAllTools(client, requestOptions));
    } catch (err) {
      await conn.close();
      const timedOut = deadline.signal.aborted || (err instanceof McpError && err.code === ErrorCode.RequestTimeout);
      // The child's last stderr chunk can land a tick after the close that failed the request.
      await delay(20);
      const why = timedOut ? 'timeout' : err;
      throw new Error(describeStartFailure(config, why, stderr.lastLine(), options.connectTimeoutMs), { cause: err });
    } finally {
      clearTimeout(timer);
    }
    client.onclose = () => conn.onGone();
    client.onerror = (err) => {
      // A server that ignores notifications/cancelled keeps reporting progress on calls we gave up on.
      const late = err.message.startsWith('Received a progress notification for an unknown token');
      options.logger(late ? 'debug' : 'warn', `MCP server "${config.name}": ${describeError(err)}`);
    };
    return conn;
  }

  /** Name and version the server reported at initialize. */
  serverInfo(): { name: string; version: string } | undefined {
    const info = this.client.getServerVersion();
    return info ? { name: info.name, version: info.version } : undefined;
  }

  /** The child's process id for a stdio server while it runs, for diagnostics. */
  get pid(): number | undefined {
    return this.transport instanceof TrackedStdioTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  /** Calls one tool; every failure comes back as an outcome. */
  async call(
    tool: string,
    args: Record<string, Json>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<ToolCallOutcome> {
    const name = qualifiedName(this.config.name, tool);
    if (options.signal.aborted) return { ok: false, error: stepError('cancelled', `${name} was cancelled.`) };
    if (this.goneReason !== undefined) {
      return { ok: false, error: serverUnavailable(this.config.name, this.goneReason) };
    }
    // A signal of our own per call: the SDK adds an abort listener per request and never removes it.
    const own = followSignal(options.signal);
    try {
      const result = await this.client.callTool({ name: tool, arguments: args }, undefined, {
        signal: own.signal,
        timeout: options.timeoutMs,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: maxTotalTimeoutFor(this.config, tool),
        // Asking for progress is what makes the server send it, and progress is what extends the timeout.
        onprogress: () => {},
      });
      return { ok: true, value: toToolOutput(result) };
    } catch (err) {
      const failed = { name, server: this.config.name, timeoutMs: options.timeoutMs };
      const gone = this.goneReason !== undefined ? { serverGone: this.goneReason } : {};
      return { ok: false, error: toStepError(err, { ...failed, cancelledByCaller: options.signal.aborted, ...gone }) };
    } finally {
      own.release();
    }
  }

  /** Closes the session and stops the child (stdin closed, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    this.closing = true;
    this.goneReason ??= 'the MCP host was shut down';
    if (!(this.transport instanceof TrackedStdioTransport)) {
      // Tells the server to drop the session; a hung server must not hold up shutdown.
      if (this.transport.sessionId) {
        await Promise.race([this.transport.terminateSession().catch(() => {}), delay(1000)]);
      }
      await this.client.close().catch(() => {});
      return;
    }
    await this.client.close().catch(() => {});
    if (this.transport.spawnedPid !== undefined) await stopProcess(this.transport.spawnedPid);
  }

  private onGone(): void {
    if (this.closing) return;
    const last = this.stderr.lastLine();
    const what = this.config.transport.kind === 'stdio' ? 'its process exited' : 'the connection closed';
    this.goneReason = `${what}${last ? ` (last stderr: ${last})` : ''}`;
    this.logger('error', `MCP server "${this.config.name}" stopped: ${this.goneReason}`);
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

  /**
   * Reads the tool list from the server again (used before each step to compare definitions with their pins),
   * within the step's own time: a hung server costs the step its timeout once, not twice.
   */
  refresh(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    return this.refreshTools(options);
  }

  private async refreshTools(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    const seq = ++this.refreshSeq;
    try {
      const timeout = Math.min(options.timeoutMs ?? this.config.timeoutMs, this.config.timeoutMs);
      const tools = await listAllTools(this.client, { timeout, signal: options.signal });
      // A slower, older refresh must not overwrite a newer list.
      if (seq !== this.refreshSeq || this.closing) return;
      const before = this.tools.length;
      this.tools = this.usable(tools);
      this.logger(
        before === this.tools.length ? 'debug' : 'info',
        `MCP server "${this.config.name}" now offers ${this.tools.length} tools`,
      );
    } catch (err) {
      if (this.closing) return;
      this.logger('warn', `MCP server "${this.config.name}": refreshing tools failed: ${describeError(err)}`);
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
