/**
 * Translates what the MCP SDK throws into the engine's closed set of step errors.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { stepError } from '../engine/errors.ts';
import type { StepError } from '../engine/types.ts';
import { brokenOutput } from './output-check.ts';
import { OUTPUT_TOO_LARGE } from './oversized-message.ts';

/** What the translation needs to know about the call that failed. */
export interface FailedCall {
  /** Qualified tool name, `<server>.<tool>`. */
  name: string;
  server: string;
  timeoutMs: number;
  /** True when the caller's own signal was aborted (as opposed to a timeout or a closed connection). */
  cancelledByCaller: boolean;
  /** Why the server is gone, when the host already saw it die. */
  serverGone?: string;
  /** The session's connection is made in a browser: one person's own (`"auth": "person"`), or the workspace's. */
  connects?: 'person' | 'workspace' | undefined;
}

/**
 * Maps an error thrown by an SDK request to a step error; never throws. A request that was sent and then lost with
 * its server (the connection closed, the process exited, the HTTP exchange broke) is `interrupted`: the tool may
 * have acted, and only the engine knows whether it is safe to send again.
 */
export function toStepError(err: unknown, call: FailedCall): StepError {
  // Checked first: an abort rejects with the signal's reason, which can be any value.
  if (call.cancelledByCaller) return stepError('cancelled', `${call.name} was cancelled.`);
  // The SDK prefixes "MCP error <code>: " on each side of the wire, so a server's own McpError arrives doubled.
  const detail = err instanceof Error ? err.message.replace(/^(MCP error -?\d+: )+/, '') : '';
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return timeoutError(err, call);
    if (err.code === ErrorCode.ConnectionClosed) return lostMidCall(call, call.serverGone ?? 'the connection closed');
    // Made by the host's bounded reading (or claimed by the server): sending it again would bring the same flood.
    if (err.code === OUTPUT_TOO_LARGE) {
      return stepError('tool_error', `${call.name} answered with an ${detail}; the answer was refused unread.`);
    }
    // The SDK's client checks `structuredContent` against the tool's `outputSchema` once the answer has come: the
    // tool ran, and its answer is not used.
    if (err.code === ErrorCode.InvalidParams && detail.startsWith(SCHEMA_BROKEN)) {
      const why = `its structuredContent breaks the tool's output schema: ${detail.slice(SCHEMA_BROKEN.length)}`;
      return brokenOutput(call.name, why);
    }
    if (err.code === ErrorCode.InvalidRequest && detail.endsWith(SCHEMA_MISSING)) {
      return brokenOutput(call.name, 'the tool declares an output schema and its answer has no structuredContent');
    }
    return stepError('tool_error', `${call.name} failed: ${detail} (MCP error ${err.code})`);
  }
  // Refused at the door (401/403): the tool never ran, and the connection needs authorizing again.
  if (
    err instanceof UnauthorizedError ||
    (err instanceof StreamableHTTPError && (err.code === 401 || err.code === 403))
  ) {
    if (call.connects) return notConnected(call.server, call.connects);
    return unavailable(
      call,
      `it refused Steward's authorization (${describeError(err)}); the connection needs authorizing again`,
    );
  }
  // A result the SDK cannot parse is the server's fault, not the network's.
  if (err instanceof Error && /ZodError/.test(err.name)) {
    return stepError('tool_error', `${call.name} returned a malformed result: ${err.message}`);
  }
  // The SDK's words when the transport was gone before the request could be written: nothing was sent.
  if (neverDelivered(err) || (err instanceof Error && err.message === 'Not connected')) {
    return unavailable(call, call.serverGone ?? describeError(err));
  }
  return lostMidCall(call, call.serverGone ?? describeError(err));
}

// What SDK 1.32.2's `Client.callTool` throws when an answer breaks the tool's output schema (client/index.js).
const SCHEMA_BROKEN = "Structured content does not match the tool's output schema: ";
const SCHEMA_MISSING = 'has an output schema but did not return structured content';

/** A call sent to a server that went away before answering: it may have acted. Retryable for idempotent tools. */
function lostMidCall(call: FailedCall, why: string): StepError {
  return stepError(
    'interrupted',
    `MCP server "${call.server}" went away while ${call.name} was running (${why}); the tool may have acted already.`,
    true,
  );
}

function timeoutError(err: McpError, call: FailedCall): StepError {
  const data = err.data as { maxTotalTimeout?: number } | undefined;
  const message =
    data?.maxTotalTimeout !== undefined
      ? `${call.name} was still running after its hard limit of ${data.maxTotalTimeout} ms, ` +
        'although it kept reporting progress.'
      : `${call.name} did not answer within ${call.timeoutMs} ms.`;
  return stepError('timeout', message, true);
}

function unavailable(call: FailedCall, why: string): StepError {
  return serverUnavailable(call.server, why);
}

/**
 * A connection the server refused (and that did not refresh), or none: the call never ran. The requester connects
 * again (their own), or an approver does (the workspace's).
 */
export function notConnected(server: string, whose: 'person' | 'workspace' = 'person'): StepError {
  const needs =
    whose === 'person'
      ? "needs the requester's own connection, and there is none that works"
      : "runs with the workspace's connection, which an approver must connect (there is none that works)";
  return stepError('not_connected', `MCP server "${server}" ${needs}; the call was not made.`, true);
}

/** The error for a call to a server that is gone; retryable, since an operator may bring it back. */
export function serverUnavailable(server: string, why: string): StepError {
  return stepError('server_unavailable', `MCP server "${server}" is unavailable: ${why}.`, true);
}

/** A short description of a foreign error, with the cause's code (fetch hides ECONNREFUSED there) or the HTTP status. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // The status comes first: the text after it is the server's response body, of any length.
  if (err instanceof StreamableHTTPError && (err.code ?? 0) > 0) return `HTTP ${err.code}: ${err.message}`;
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  return detail && !err.message.includes(detail) ? `${err.message} (${detail})` : err.message;
}

/**
 * True when a request provably never reached the server's tool: the TCP connection was refused, or the HTTP
 * endpoint turned the request away before handling it (400 or 404, what servers answer for a session they do
 * not know, as after a restart). Such a request may be sent again without running anything twice.
 */
export function neverDelivered(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return err.code === 400 || err.code === 404;
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  return cause?.code === 'ECONNREFUSED';
}
