/**
 * Maps MCP protocol shapes (tool definitions, call results) to the engine's `ToolInfo` and `ToolOutput`.
 */
import { createHash } from 'node:crypto';
import type { CallToolResult, CompatibilityCallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Json, ToolInfo, ToolOutput } from '../engine/types.ts';
import { canonicalJson } from '../engine/plan/canonical-json.ts';
import { outputText } from '../engine/text.ts';
import { connectsInBrowser, type McpServerConfig } from './mcp-config.ts';

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** Qualified tool name as plans write it. */
export function qualifiedName(server: string, tool: string): string {
  return `${server}.${tool}`;
}

/** A tool as the engine sees it, with the tool's override winning over the server's, and both over defaults. */
export function toToolInfo(
  server: McpServerConfig,
  tool: Tool,
  serverInfo?: { name: string; version: string },
): ToolInfo {
  const override = server.tools[tool.name] ?? {};
  const annotations: ToolInfo['annotations'] = {};
  for (const hint of HINTS) {
    const value = tool.annotations?.[hint];
    if (typeof value === 'boolean') annotations[hint] = value;
  }
  // The operator's word on one tool wins over its annotations (risk, early start and quick answers read these). A
  // server-wide word only narrows: it may call tools writing or open-world, but it calls a tool read-only or
  // closed-world only where the tool says nothing itself (and, for read-only, does not say it is destructive), so a
  // write tool the server marks as one, or adds later, never becomes read-only by a blanket setting.
  if (override.readOnly !== undefined) annotations.readOnlyHint = override.readOnly;
  else if (server.readOnly === false) annotations.readOnlyHint = false;
  else if (server.readOnly && annotations.readOnlyHint === undefined && annotations.destructiveHint !== true) {
    annotations.readOnlyHint = true;
  }
  if (override.openWorld !== undefined) annotations.openWorldHint = override.openWorld;
  else if (server.openWorld === true) annotations.openWorldHint = true;
  else if (server.openWorld === false && annotations.openWorldHint === undefined) annotations.openWorldHint = false;
  const risk = override.risk ?? server.risk;
  const idempotent = override.idempotent ?? server.idempotent;
  return {
    name: qualifiedName(server.name, tool.name),
    server: server.name,
    tool: tool.name,
    description: tool.description ?? tool.title ?? '',
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    annotations,
    policy: {
      allowed: override.allowed ?? server.allowed,
      ...(risk ? { risk } : {}),
      ...(idempotent !== undefined ? { idempotent } : {}),
      timeoutMs: override.timeoutMs ?? server.timeoutMs,
      ...(override.sensitive !== undefined ? { sensitive: override.sensitive } : {}),
      ...(override.trustedRefFields ? { trustedRefFields: override.trustedRefFields } : {}),
      ...(server.maxConcurrency !== undefined ? { maxConcurrency: server.maxConcurrency } : {}),
      ...(connectsInBrowser(server) === 'person' ? { perPerson: true } : {}),
      ...(connectsInBrowser(server) === 'workspace' ? { asWorkspace: true } : {}),
    },
    ...fingerprintOf(tool, serverInfo),
  };
}

/** The definition that approval pins, and its SHA-256 over canonical JSON (key order does not count). */
export function fingerprintOf(
  tool: Tool,
  serverInfo?: { name: string; version: string },
): { fingerprint: string; definition: Json } {
  const definition = {
    name: tool.name,
    title: tool.title ?? null,
    description: tool.description ?? null,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema ?? null,
    annotations: tool.annotations ?? null,
    server: serverInfo ?? null,
  } as unknown as Json;
  return { fingerprint: createHash('sha256').update(canonicalJson(definition)).digest('hex'), definition };
}

/** The hard cap for a call that keeps reporting progress, tool override first. */
export function maxTotalTimeoutFor(server: McpServerConfig, tool: string): number {
  return server.tools[tool]?.maxTotalTimeoutMs ?? server.maxTotalTimeoutMs;
}

/**
 * Keeps a tool output within `maxBytes` (as JSON): a larger one is cut to its leading text, with its full size
 * and SHA-256 recorded, so the database and prompts never carry an unbounded value.
 */
export function boundOutput(output: ToolOutput, maxBytes: number): ToolOutput {
  const json = JSON.stringify(output);
  const bytes = Buffer.byteLength(json);
  if (bytes <= maxBytes) return output;
  const sha256 = createHash('sha256').update(json).digest('hex');
  // Every block in words (links with their URIs, images described), so what is kept never starts with base64.
  const texts = outputText(output as unknown as Json);
  const note = `\n[output cut: ${bytes} bytes in all, sha256 ${sha256}; the rest was not kept]`;
  const kept = texts.slice(0, Math.max(0, Math.floor(maxBytes / 2) - note.length));
  return {
    content: [{ type: 'text', text: `${kept}${note}` }],
    ...(output.isError ? { isError: true } : {}),
    truncated: { bytes, sha256 },
  };
}

/** A call result as the engine stores it; `isError` is kept, for the engine to decide on. */
export function toToolOutput(result: CallToolResult | CompatibilityCallToolResult): ToolOutput {
  // Servers on the 2024-10-07 protocol answer with `toolResult` instead of content blocks.
  if (!Array.isArray(result.content)) {
    return { content: [{ type: 'text', text: JSON.stringify(result.toolResult ?? null) }] };
  }
  const output: ToolOutput = { content: result.content as Json[] };
  if (result.structuredContent !== undefined) output.structuredContent = result.structuredContent as Json;
  if (result.isError === true) output.isError = true;
  return output;
}
