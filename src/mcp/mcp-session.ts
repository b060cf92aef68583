/**
 * One session with one MCP server: its transport (a stdio child or a Streamable HTTP client), initialize, and the
 * first listing of its tools. A connection opens a new session each time the server comes back.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ElicitRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ownerKey, type ConnectionOwner, type ConnectionStore } from './connection-store.ts';
import type { McpServerConfig } from './mcp-config.ts';
import {
  createTransport,
  type AuthChallenge,
  describeStartFailure,
  stopProcess,
  TrackedStdioTransport,
  type McpLogger,
} from './mcp-transport.ts';
import { McpOAuthProvider, type Authorizer } from './oauth-provider.ts';
import { describeOversized, type OversizedSummary } from './oversized-message.ts';
import { sessionKey, type QuestionCalls } from './question-calls.ts';
import { StderrTail } from './stderr-tail.ts';
import { listAllTools } from './tool-listing.ts';
import { clientCapabilitiesFor, handleClientFeatures, setServerLogLevel } from './client-features.ts';
import { listResourceCatalog } from './resource-reads.ts';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ResourceListing } from '../engine/ports.ts';

/** What opening a session needs besides the server's config. */
export interface OpenOptions {
  clientName: string;
  clientVersion: string;
  connectTimeoutMs: number;
  /** A message from the server larger than this is refused (counted and hashed, never held) and the session kept. */
  maxMessageBytes: number;
  logger: McpLogger;
  /** For servers with `auth`: where their connections are kept, and who can authorize one. */
  oauth: OAuthOptions;
  /**
   * Where a server's questions (`elicitation/create`) go. With it, sessions declare the elicitation capability (form
   * mode only); without it they declare none and a question is refused as the SDK refuses an unknown method.
   */
  questions?: QuestionCalls;
}

/** What OAuth connections need from the host. */
export interface OAuthOptions {
  store: ConnectionStore;
  /** Where authorization servers send a person back to, unless a server's config names its own. */
  redirectUrl: string;
  authorize?: Authorizer;
  /** Whose connection the session uses: the workspace's unless a person's is named. */
  owner?: ConnectionOwner;
}

// Authorizations one start-up may need: the first, and one scope step-up; more than that is a server in a loop.
const MAX_AUTHORIZATIONS = 3;

/** What a session reports to its owner once it is open. */
export interface SessionEvents {
  /** The transport closed: a stdio child exited, or the session was closed. */
  onClose(session: McpSession): void;
  onError(session: McpSession, err: Error): void;
  /** The server announced that its tool list changed (debounced). */
  onToolsChanged(session: McpSession): void;
  /** The server announced that its resource list changed (debounced). */
  onResourcesChanged?(session: McpSession): void;
}

/** Thrown by `McpSession.open`: `message` is a sentence for the operator, `reason` what follows "could not start". */
export class StartFailure extends Error {
  constructor(
    message: string,
    readonly reason: string,
    options?: { cause?: unknown; unauthorized?: boolean },
  ) {
    super(message, options);
    this.name = 'StartFailure';
    this.unauthorized = options?.unauthorized ?? false;
  }

  /** The server wants an authorization that no one gave (no tokens, or ones it refused and that did not refresh). */
  readonly unauthorized: boolean;
}

/** An initialized session and the tools it listed at start. */
export class McpSession {
  tools: Tool[] = [];
  /** A few of its resources and templates, listed at start; undefined when it does not offer resources. */
  resources: ResourceListing | undefined;
  /** Why this session ended, once its owner saw it end. */
  lost: string | undefined;
  /** The last message refused for its size: if the session ends anyway, that is the likely cause. */
  oversized: OversizedSummary | undefined;

  private constructor(
    readonly config: McpServerConfig,
    public client: Client,
    private transport: TrackedStdioTransport | StreamableHTTPClientTransport,
    readonly stderr: StderrTail,
    /** The OAuth provider of a server with `auth` (the workspace's connection). */
    readonly auth: McpOAuthProvider | undefined,
  ) {}

  /**
   * Starts the server (or reaches it), initializes, and lists every page of its tools, within
   * `connectTimeoutMs`. `cancel` aborting (the host closing) stops the attempt and its child.
   * Throws a `StartFailure`.
   */
  static async open(
    config: McpServerConfig,
    options: OpenOptions,
    events: SessionEvents,
    cancel: AbortSignal,
  ): Promise<McpSession> {
    const stderr = new StderrTail();
    const onOversized = (summary: OversizedSummary) => {
      session.oversized = summary;
      const what = summary.hasMethod ? 'a request or notification' : 'a message';
      options.logger(
        'warn',
        `MCP server "${config.name}" sent ${what} refused for its size: ${describeOversized(summary)}`,
      );
    };
    const t = config.transport;
    const auth =
      t.kind === 'http' && t.auth
        ? new McpOAuthProvider({
            server: config.name,
            auth: t.auth,
            owner: options.oauth.owner ?? { kind: 'workspace' },
            store: options.oauth.store,
            redirectUrl: options.oauth.redirectUrl,
            clientName: options.clientName,
            ...(options.oauth.authorize ? { authorize: options.oauth.authorize } : {}),
          })
        : undefined;
    const challenge: AuthChallenge = {};
    const connectPair = () => {
      const transport = createTransport(
        config,
        stderr,
        options.logger,
        { maxBytes: options.maxMessageBytes, onOversized },
        { challenge, ...(auth ? { authProvider: auth, guard: (f) => auth.refreshGuard.wrap(f) } : {}) },
      );
      // Debounced because a server registering tools one by one sends one notification per tool.
      const onChanged = () => events.onToolsChanged(session);
      // Form mode only: URL mode would send a person to a server's page from a shared thread (see docs/mcp-servers.md, "When a server asks a question").
      // `applyDefaults`: fields the person left as the form showed them go back with the schema's defaults (SEP-1034).
      const capabilities = {
        ...(options.questions ? { elicitation: { form: { applyDefaults: true } } } : {}),
        ...clientCapabilitiesFor(config),
      };
      const client = new Client(
        { name: options.clientName, version: options.clientVersion },
        {
          capabilities,
          listChanged: {
            tools: { autoRefresh: false, debounceMs: 100, onChanged },
            resources: { autoRefresh: false, debounceMs: 100, onChanged: () => events.onResourcesChanged?.(session) },
          },
        },
      );
      handleClientFeatures(client, config, options.logger);
      if (options.questions) {
        const owner = ownerKey(options.oauth.owner ?? { kind: 'workspace' });
        const ask = options.questions.handlerFor(config.name, sessionKey(config.name, owner));
        // The SDK's wrapper checks the request against ElicitRequestSchema and the result against ElicitResultSchema.
        client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
          if (request.params.mode === 'url') return { action: 'decline' };
          const { message, requestedSchema } = request.params;
          return ask({ message, requestedSchema: requestedSchema }, extra.signal);
        });
      }
      return { transport, client };
    };
    const first = connectPair();
    const session = new McpSession(config, first.client, first.transport, stderr, auth);
    // A deadline for the whole start-up, cleared after: the SDK never drops its abort listener, and a
    // late abort would send `notifications/cancelled` for requests that finished long ago.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), options.connectTimeoutMs);
    const onCancel = () => deadline.abort();
    cancel.addEventListener('abort', onCancel, { once: true });
    try {
      if (cancel.aborted) throw new Error('the MCP host was shut down');
      const requestOptions = { signal: deadline.signal, timeout: options.connectTimeoutMs };
      let connected = false;
      for (let round = 1; ; round++) {
        try {
          if (!connected) await session.client.connect(session.transport, requestOptions);
          connected = true;
          session.tools = await listAllTools(session.client, requestOptions);
          await session.afterListing(requestOptions, options.logger);
          break;
        } catch (err) {
          // An authorization came back during the attempt (at the first request, or a scope step-up at a later
          // one): exchange its code, then open the session again or repeat the listing.
          const code = err instanceof UnauthorizedError && round < MAX_AUTHORIZATIONS ? auth?.takeCode() : undefined;
          if (code === undefined) throw err;
          await (session.transport as StreamableHTTPClientTransport).finishAuth(code);
          if (connected) continue;
          await session.client.close().catch(() => {});
          const next = connectPair();
          session.client = next.client;
          session.transport = next.transport;
        }
      }
    } catch (err) {
      await session.close();
      const timedOut =
        (deadline.signal.aborted && !cancel.aborted) ||
        (err instanceof McpError && err.code === ErrorCode.RequestTimeout);
      // The child's last stderr chunk can land a tick after the close that failed the request.
      if (!cancel.aborted) await delay(20);
      const text = describeStartFailure(
        config,
        timedOut ? 'timeout' : err,
        stderr.lastLine(),
        options.connectTimeoutMs,
        {
          challenge,
          ...(auth?.unauthorized ? { unauthorized: auth.unauthorized } : {}),
        },
      );
      throw new StartFailure(text.message, text.reason, { cause: err, unauthorized: err instanceof UnauthorizedError });
    } finally {
      clearTimeout(timer);
      cancel.removeEventListener('abort', onCancel);
    }
    session.client.onclose = () => events.onClose(session);
    session.client.onerror = (err) => events.onError(session, err);
    return session;
  }

  /** Asks for the server's log level, and lists its resources. */
  private async afterListing(requestOptions: RequestOptions, logger: McpLogger): Promise<void> {
    await setServerLogLevel(this.client, this.config, logger, requestOptions);
    await this.listResources(requestOptions, logger);
  }

  /** Lists the server's resources again; a failed listing is logged and keeps the last one. */
  async listResources(requestOptions: RequestOptions, logger: McpLogger): Promise<void> {
    try {
      this.resources = await listResourceCatalog(this.client, this.config.name, requestOptions);
    } catch (err) {
      if (err instanceof UnauthorizedError) throw err;
      logger('warn', `MCP server "${this.config.name}": listing its resources failed: ${(err as Error).message}`);
    }
  }

  /**
   * After a request failed for want of authorization (a scope step-up, a revoked token): exchanges the code of an
   * authorization that came back meanwhile. True when the request may be sent again.
   */
  async finishAuthorization(err: unknown): Promise<boolean> {
    if (!(err instanceof UnauthorizedError) || this.transport instanceof TrackedStdioTransport) return false;
    const code = this.auth?.takeCode();
    if (code === undefined) return false;
    await this.transport.finishAuth(code);
    return true;
  }

  get isHttp(): boolean {
    return !(this.transport instanceof TrackedStdioTransport);
  }

  /** Name and version the server reported at initialize. */
  serverInfo(): { name: string; version: string } | undefined {
    const info = this.client.getServerVersion();
    return info ? { name: info.name, version: info.version } : undefined;
  }

  /** The child's process id for a stdio server while it runs. */
  get pid(): number | undefined {
    return this.transport instanceof TrackedStdioTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  /**
   * Ends the session: over HTTP, asks the server to drop it (unless the server is already gone); over stdio,
   * closes the child's stdin, then SIGTERM, then SIGKILL. Never throws.
   */
  async close(): Promise<void> {
    if (!(this.transport instanceof TrackedStdioTransport)) {
      // A hung server must not hold up shutdown.
      if (this.lost === undefined && this.transport.sessionId) {
        await Promise.race([this.transport.terminateSession().catch(() => {}), delay(1000)]);
      }
      await this.client.close().catch(() => {});
      return;
    }
    await this.client.close().catch(() => {});
    if (this.transport.spawnedPid !== undefined) await stopProcess(this.transport.spawnedPid);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
