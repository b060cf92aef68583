/**
 * Builds the SDK transport for a configured server and words start-up failures for the operator.
 */
import {
  StdioClientTransport,
  getDefaultEnvironment,
  type StdioServerParameters,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isProcessAlive } from '../process-alive.ts';
import { createBoundedFetch } from './bounded-fetch.ts';
import { BoundedReadBuffer } from './bounded-read-buffer.ts';
import { describeAuthFailure } from './auth-failures.ts';
import { describeError } from './call-errors.ts';
import { isSecureOrLoopback, type McpServerConfig } from './mcp-config.ts';
import type { OversizedSummary } from './oversized-message.ts';
import type { StderrTail } from './stderr-tail.ts';

/** Receives the host's log lines. */
export type McpLogger = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

/** How large one message from a server may be, and who hears of one refused for its size. */
export interface MessageBound {
  maxBytes: number;
  onOversized: (summary: OversizedSummary) => void;
}

/**
 * The SDK's stdio transport, remembering the child's pid after the SDK forgets it on close, and reading with a
 * bounded buffer: the SDK's own closes the connection on a message over 10 MB.
 */
export class TrackedStdioTransport extends StdioClientTransport {
  spawnedPid: number | undefined;

  constructor(server: StdioServerParameters, bound: MessageBound) {
    super(server);
    // The SDK offers no hook for its read buffer, so its private field is replaced; checked, so that an SDK that
    // renames it fails here (and in the tests) instead of silently reading unbounded.
    const sdk = this as unknown as { _readBuffer?: unknown };
    if (typeof sdk._readBuffer !== 'object' || sdk._readBuffer === null) {
      throw new Error('the MCP SDK stdio transport has no _readBuffer to bound');
    }
    sdk._readBuffer = new BoundedReadBuffer(bound.maxBytes, bound.onOversized);
  }

  override async start(): Promise<void> {
    await super.start();
    this.spawnedPid = this.pid ?? undefined;
  }
}

/** What an HTTP server last said when it refused a request for want of authorization (its WWW-Authenticate). */
export interface AuthChallenge {
  last?: { status: number; wwwAuthenticate: string | undefined };
}

/**
 * A stdio child for `command` servers, a Streamable HTTP client for `url` servers. With an OAuth provider, the
 * SDK's own auth flow runs over the same bounded fetch, and nothing is sent over plain HTTP beyond loopback.
 */
export function createTransport(
  config: McpServerConfig,
  stderr: StderrTail,
  logger: McpLogger,
  bound: MessageBound,
  http: {
    authProvider?: OAuthClientProvider;
    challenge?: AuthChallenge;
    /** Wraps the fetch the SDK's auth flow uses (the connection's refresh guard). */
    guard?: (fetch: FetchLike) => FetchLike;
  } = {},
): TrackedStdioTransport | StreamableHTTPClientTransport {
  const t = config.transport;
  if (t.kind === 'http') {
    let fetch = createBoundedFetch(bound.maxBytes, bound.onOversized, noteChallenges(globalThis.fetch, http.challenge));
    // Discovery can point anywhere (the server names its authorization server): tokens go nowhere in clear.
    if (http.authProvider) fetch = secureOnly(fetch);
    if (http.guard) fetch = http.guard(fetch);
    return new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers: t.headers },
      fetch,
      ...(http.authProvider ? { authProvider: http.authProvider } : {}),
    });
  }
  // Only the configured variables on top of the SDK's safe defaults: the bot's own secrets stay home.
  const env = { ...getDefaultEnvironment(), ...t.env };
  const transport = new TrackedStdioTransport(
    { command: t.command, args: t.args, env, stderr: 'pipe', ...(t.cwd ? { cwd: t.cwd } : {}) },
    bound,
  );
  // Reading the pipe also keeps a chatty child from blocking on a full stderr buffer.
  transport.stderr?.on('data', (chunk: Buffer) => {
    for (const line of stderr.push(chunk.toString('utf8'))) {
      logger('debug', `MCP server "${config.name}" stderr: ${line}`);
    }
  });
  return transport;
}

/**
 * The fetch Steward's own OAuth requests use outside a session (a person's authorization started and finished from
 * the browser, a revocation): bounded like a session's, and never to a URL that is neither https nor loopback.
 */
export function createOAuthFetch(maxBytes: number, logger: McpLogger): FetchLike {
  return secureOnly(
    createBoundedFetch(maxBytes, (summary) =>
      logger('warn', `an OAuth answer was refused for its size (${summary.bytes} bytes)`),
    ),
  );
}

/** Refuses every request to a URL that is neither https nor loopback. */
function secureOnly(base: FetchLike): FetchLike {
  return (url, init) => {
    if (!isSecureOrLoopback(url)) {
      return Promise.reject(new Error(`refused to send OAuth traffic to ${new URL(url).origin}: it is not https`));
    }
    return base(url, init);
  };
}

/** Keeps the status and WWW-Authenticate header of the last 401 or 403 answer. */
function noteChallenges(base: FetchLike, challenge: AuthChallenge | undefined): FetchLike {
  if (!challenge) return base;
  return async (url, init) => {
    const response = await base(url, init);
    if (response.status === 401 || response.status === 403) {
      challenge.last = {
        status: response.status,
        wwwAuthenticate: response.headers.get('www-authenticate') ?? undefined,
      };
    }
    return response;
  };
}

/** Why a server did not start: a sentence for the operator, and its reason alone (what follows "could not start"). */
export interface StartFailureText {
  message: string;
  reason: string;
}

/** Words a start-up failure; `'timeout'` stands for the start-up deadline. */
export function describeStartFailure(
  config: McpServerConfig,
  err: unknown,
  lastStderr: string | undefined,
  connectTimeoutMs: number,
  auth: { challenge?: AuthChallenge; unauthorized?: URL } = {},
): StartFailureText {
  const stderr = lastStderr ? ` (last stderr: ${lastStderr})` : '';
  const t = config.transport;
  const say = (reason: string, where = '') => ({
    message: `MCP server "${config.name}" could not start${where}: ${reason}.`,
    reason,
  });
  if (err === 'timeout') return say(`no answer within ${connectTimeoutMs} ms${stderr}`);
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
    return say(`it exited during start-up${stderr}`);
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (t.kind === 'stdio' && code === 'ENOENT') {
    return say(`command "${t.command}" was not found${t.cwd ? ` (or cwd "${t.cwd}" does not exist)` : ''}`);
  }
  if (t.kind === 'stdio' && code === 'EACCES') return say(`command "${t.command}" is not executable`);
  const unauthorized = describeAuthFailure(config, err, auth.challenge, auth.unauthorized);
  if (unauthorized) return say(unauthorized, ` at ${t.kind === 'http' ? t.url : ''}`);
  return say(`${describeError(err)}${stderr}`, t.kind === 'http' ? ` at ${t.url}` : '');
}

/**
 * Makes sure a child is gone: SIGTERM, then SIGKILL after `graceMs`. Needed because when initialize
 * fails the SDK closes the transport in the background, on unref'd timers, and a test runner or a
 * bot exiting first leaves the child orphaned.
 */
export async function stopProcess(pid: number, graceMs = 1000): Promise<void> {
  if (!isProcessAlive(pid)) return;
  signal(pid, 'SIGTERM');
  for (let waited = 0; waited < graceMs && isProcessAlive(pid); waited += 25) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  if (isProcessAlive(pid)) signal(pid, 'SIGKILL');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone between the check and the signal.
  }
}
