/**
 * The MCP host: one connection per configured server, offered to the engine as a `ToolRunner`.
 */
import { stepError } from '../engine/errors.ts';
import type { ToolCallOutcome, ToolRunner } from '../engine/ports.ts';
import type { Json, ToolInfo } from '../engine/types.ts';
import type { McpConfig } from './mcp-config.ts';
import { McpConnection } from './mcp-connection.ts';
import type { McpLogger } from './mcp-transport.ts';
import { boundOutput, toToolInfo } from './tool-mapping.ts';

export type { McpLogger } from './mcp-transport.ts';

/** Options for `McpHost.connect`. */
export interface McpHostOptions {
  logger?: McpLogger;
  /** Name sent to servers at initialize. */
  clientName?: string;
  clientVersion?: string;
  /** Outputs larger than this (as JSON) are cut, with their size and hash kept. */
  maxOutputBytes?: number;
  /** Limit on spawn + initialize + listing tools, per server. */
  connectTimeoutMs?: number;
}

/** A server that could not be started or reached, with a sentence for the operator. */
export interface McpStartFailure {
  server: string;
  message: string;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_OUTPUT_BYTES = 1_000_000;

/** Runs MCP tools by qualified name (`<server>.<tool>`) on the servers that connected. Never throws from calls. */
export class McpHost implements ToolRunner {
  private readonly mapped = new WeakMap<object, ToolInfo>();

  private constructor(
    private readonly connections: Map<string, McpConnection>,
    private readonly maxOutputBytes: number,
  ) {}

  /** Connects every enabled server in parallel; one that fails is reported and the others still serve. */
  static async connect(
    config: McpConfig,
    options: McpHostOptions = {},
  ): Promise<{ host: McpHost; failures: McpStartFailure[] }> {
    const logger = options.logger ?? (() => {});
    const open = {
      clientName: options.clientName ?? 'steward',
      clientVersion: options.clientVersion ?? '0.1.0',
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      logger,
    };
    const enabled = config.servers.filter((s) => !s.disabled);
    for (const s of config.servers) if (s.disabled) logger('info', `MCP server "${s.name}" is disabled in the config`);
    const settled = await Promise.allSettled(enabled.map((s) => McpConnection.open(s, open)));
    const connections = new Map<string, McpConnection>();
    const failures: McpStartFailure[] = [];
    settled.forEach((result, i) => {
      const name = enabled[i]?.name ?? '?';
      if (result.status === 'fulfilled') {
        connections.set(name, result.value);
        logger('info', `MCP server "${name}" connected with ${result.value.tools.length} tools`);
      } else {
        const message = result.reason instanceof Error ? result.reason.message : String(result.reason);
        failures.push({ server: name, message });
        logger('error', message);
      }
    });
    return { host: new McpHost(connections, options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES), failures };
  }

  /** Tools of the servers that are still up, with the config's overrides applied. */
  listTools(): ToolInfo[] {
    const tools: ToolInfo[] = [];
    for (const conn of this.connections.values()) {
      if (conn.goneReason !== undefined) continue;
      for (const tool of conn.tools) {
        // A refreshed list brings new objects, so a changed definition is always mapped (and hashed) anew.
        let info = this.mapped.get(tool);
        if (!info) {
          info = toToolInfo(conn.config, tool, conn.serverInfo());
          this.mapped.set(tool, info);
        }
        tools.push(info);
      }
    }
    return tools;
  }

  /** Re-reads the tool list of the server that offers `name`; never throws (a failed refresh keeps the old list). */
  async refreshTool(name: string, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    const conn = this.connections.get(name.slice(0, name.indexOf('.')));
    if (conn && conn.goneReason === undefined) await conn.refresh(options);
  }

  /** Calls `<server>.<tool>`; unknown, disallowed and failed calls come back as error outcomes. */
  async callTool(
    name: string,
    args: Record<string, Json>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<ToolCallOutcome> {
    const dot = name.indexOf('.');
    const server = dot > 0 ? name.slice(0, dot) : '';
    const tool = dot > 0 ? name.slice(dot + 1) : '';
    const conn = this.connections.get(server);
    if (!conn) return { ok: false, error: stepError('unknown_tool', `No connected MCP server offers "${name}".`) };
    // A dead server's tool list is stale, so its calls say "unavailable" rather than "unknown".
    if (conn.goneReason === undefined) {
      const info = conn.tools.find((t) => t.name === tool);
      if (!info) {
        return { ok: false, error: stepError('unknown_tool', `MCP server "${server}" has no tool "${tool}".`) };
      }
      // The engine checks policy first; this is the last line if something upstream forgot.
      if ((conn.config.tools[tool]?.allowed ?? conn.config.allowed) === false) {
        return { ok: false, error: stepError('unknown_tool', `${name} is not allowed by the MCP config.`) };
      }
    }
    try {
      const outcome = await conn.call(tool, args, options);
      return outcome.ok ? { ok: true, value: boundOutput(outcome.value, this.maxOutputBytes) } : outcome;
    } catch (err) {
      // conn.call translates every SDK failure; this only guards the never-throw promise against bugs.
      return { ok: false, error: stepError('internal', `${name} failed unexpectedly: ${String(err)}`) };
    }
  }

  /** Name and version a server reported at initialize, for pinning tool definitions. */
  serverInfo(name: string): { name: string; version: string } | undefined {
    return this.connections.get(name)?.serverInfo();
  }

  /** Process id of a stdio server's child while it runs, for diagnostics. */
  serverPid(name: string): number | undefined {
    return this.connections.get(name)?.pid;
  }

  /** Closes every session and stops every child process. */
  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }
}
