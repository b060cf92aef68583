/**
 * The host's side of MCP resources: which servers offer them (and how their reads are scored), and one read sent to a
 * server (on its connection, or on the requester's own session of a server that connects per person) as a call is sent
 * (waiting for a server that is down within the read's time, once more only when provably never delivered, the output
 * bounded as a tool's is).
 */
import { stepError } from '../engine/errors.ts';
import type { ResourceListing, ToolCallOptions, ToolCallOutcome } from '../engine/ports.ts';
import { notConnected, serverUnavailable } from './call-errors.ts';
import { personOwner } from './connection-store.ts';
import type { ToolInfo } from '../engine/types.ts';
import type { McpConnection } from './mcp-connection.ts';
import { connectsInBrowser, type McpServerConfig } from './mcp-config.ts';
import type { PersonSessions } from './person-sessions.ts';
import { boundOutput } from './tool-mapping.ts';

/**
 * A server's resources as the engine is told of them, with what its reads are scored as: open-world when mcp.json says
 * so for the server or any of its tools (as mapped, overrides applied) says so, at the server's `risk`, and run per
 * person or as the workspace as its calls are.
 */
export function resourceListing(
  listed: ResourceListing,
  config: McpServerConfig,
  tools: readonly ToolInfo[],
): ResourceListing {
  const owner = connectsInBrowser(config);
  return {
    ...listed,
    ...((config.openWorld === true || tools.some((t) => t.annotations.openWorldHint === true)) && {
      openWorld: true as const,
    }),
    ...(config.risk && { risk: config.risk }),
    ...(owner === 'person' && { perPerson: true as const }),
    ...(owner === 'workspace' && { asWorkspace: true as const }),
  };
}

/**
 * Reads `uri` from a server that connects per person, on `options.as`'s own session only (a read that names no one is
 * not made), as a call is made there: a person with no working connection is told to connect, nothing sent.
 */
export async function readResourceAs(
  pool: PersonSessions,
  server: string,
  uri: string,
  options: ToolCallOptions,
  maxOutputBytes: number,
): Promise<ToolCallOutcome> {
  if (!options.as) {
    const why = `MCP server "${server}" connects per person, and this read names no person; it was not made.`;
    return { ok: false, error: stepError('not_connected', why) };
  }
  const person = personOwner(options.as);
  const found = await pool.session(person);
  if (found.kind === 'connect') return { ok: false, error: notConnected(server) };
  if (found.kind === 'failed') return { ok: false, error: serverUnavailable(server, found.message) };
  try {
    const outcome = await readResourceOn(found.connection, server, uri, options, maxOutputBytes);
    // Refused and not refreshed: this session is of no more use; the person connects again.
    if (!outcome.ok && outcome.error.code === 'not_connected') await pool.forget(person.personId);
    return outcome;
  } finally {
    found.release();
  }
}

/** Reads `uri` on one connection of a server that offers resources: the server's, or a person's own session. */
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
