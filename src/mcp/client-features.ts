/**
 * Two client features a session declares from its server's `mcp.json` entry: roots (the directories the server may
 * use, answered on `roots/list`; declared only when the entry names some) and the server's log messages
 * (`notifications/message`), which go to Steward's log at the entry's `logLevel` or above, as one capped line of the
 * server's words: never to a model, a card or a report.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ListRootsRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_LOG_LEVEL, MCP_LOG_LEVELS, type McpLogLevel, type McpServerConfig } from './mcp-config.ts';
import type { McpLogger } from './mcp-transport.ts';

/** The most characters of one server log message kept in Steward's log. */
export const LOG_LINE_CHARS = 500;

/** The capabilities the entry adds to a session's: roots when it names some, nothing else. */
export function clientCapabilitiesFor(config: McpServerConfig): { roots?: Record<string, never> } {
  // No `listChanged`: the roots come from mcp.json and change only with a restart.
  return config.roots ? { roots: {} } : {};
}

/** Answers `roots/list` (when the entry names roots) and logs the server's messages at its level or above. */
export function handleClientFeatures(client: Client, config: McpServerConfig, logger: McpLogger): void {
  const roots = config.roots;
  if (roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((uri) => ({ uri })) }));
  const least = rank(config.logLevel ?? DEFAULT_LOG_LEVEL);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const { level, logger: source, data } = n.params;
    // A server may ignore logging/setLevel (or never be sent it): the level is applied here as well.
    if (rank(level) < least) return;
    const from = source ? ` (${oneLine(source, 60)})` : '';
    logger(
      toLogLevel(level),
      `MCP server "${config.name}" logged ${level}${from}: ${oneLine(asText(data), LOG_LINE_CHARS)}`,
    );
  });
}

/**
 * Asks a server that declares the logging capability to send only messages at the entry's level or above, so it does
 * not send what would be dropped. A server that refuses is only logged: its messages are filtered here anyway.
 */
export async function setServerLogLevel(
  client: Client,
  config: McpServerConfig,
  logger: McpLogger,
  options: RequestOptions,
): Promise<void> {
  if (!client.getServerCapabilities()?.logging) return;
  try {
    await client.setLoggingLevel(config.logLevel ?? DEFAULT_LOG_LEVEL, options);
  } catch (err) {
    logger('debug', `MCP server "${config.name}" refused logging/setLevel: ${(err as Error).message}`);
  }
}

function rank(level: string): number {
  const at = MCP_LOG_LEVELS.indexOf(level as McpLogLevel);
  return at < 0 ? MCP_LOG_LEVELS.length : at;
}

function toLogLevel(level: string): 'debug' | 'info' | 'warn' | 'error' {
  const at = rank(level);
  if (at <= rank('debug')) return 'debug';
  if (at <= rank('notice')) return 'info';
  return at <= rank('warning') ? 'warn' : 'error';
}

function asText(data: unknown): string {
  if (typeof data === 'string') return data;
  try {
    return JSON.stringify(data) ?? String(data);
  } catch {
    return String(data);
  }
}

/** Untrusted text on one line, control characters gone, capped: a server cannot forge log lines. */
function oneLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
