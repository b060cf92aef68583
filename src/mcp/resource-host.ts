/**
 * The host's side of MCP resources: which servers offer them, and one read sent to a server as a call is sent
 * (waiting for a server that is down within the read's time, once more only when provably never delivered, the output
 * bounded as a tool's is).
 */
import { stepError } from '../engine/errors.ts';
import type { ResourceListing, ToolCallOptions, ToolCallOutcome } from '../engine/ports.ts';
import { serverUnavailable } from './call-errors.ts';
import type { McpConnection } from './mcp-connection.ts';
import { boundOutput } from './tool-mapping.ts';

/** The resources of the shared servers that listed some (kept while a server is down, as its tools are). */
export function resourceListings(connections: Iterable<McpConnection>): ResourceListing[] {
  const out: ResourceListing[] = [];
  for (const conn of connections) if (conn.resources && conn.config.allowed) out.push(conn.resources);
  return out;
}

/**
 * Reads `uri` from a shared server's connection. A server that connects per person is refused: its resources would
 * be read under one person's account, and nothing here knows whose.
 */
export async function readResourceOn(
  conn: McpConnection | undefined,
  server: string,
  uri: string,
  options: Pick<ToolCallOptions, 'signal' | 'timeoutMs'>,
  maxOutputBytes: number,
): Promise<ToolCallOutcome> {
  if (!conn?.resources) {
    return {
      ok: false,
      error: stepError('unknown_tool', `MCP server "${server}" offers no resources Steward can read.`),
    };
  }
  const started = performance.now();
  const left = () => Math.max(1, Math.round(options.timeoutMs - (performance.now() - started)));
  for (let sends = 0; ; sends++) {
    if (!conn.isUp) {
      const readiness = await conn.ready(options.signal, left());
      if (readiness === 'aborted') return { ok: false, error: stepError('cancelled', `Reading ${uri} was cancelled.`) };
      if (readiness !== 'up') return { ok: false, error: serverUnavailable(server, conn.goneReason ?? 'it is down') };
    }
    const result = await conn.read(uri, { signal: options.signal, timeoutMs: left() });
    if (result.notDelivered && sends === 0 && left() > 1) {
      await conn.settle(left());
      continue;
    }
    if (!result.outcome.ok) return result.outcome;
    return { ok: true, value: boundOutput(result.outcome.value, maxOutputBytes) };
  }
}
