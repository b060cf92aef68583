/**
 * The sessions of one server that connects per person (`"auth": "person"`): one `McpConnection` per person who
 * uses it, opened with that person's own tokens when a step of theirs needs it and closed once idle; and the
 * server's tool catalog, as the latest session (of anyone) listed it, for the planner.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ConnectionOwner } from './connection-store.ts';
import { McpConnection, type ConnectionOptions } from './mcp-connection.ts';
import type { McpServerConfig } from './mcp-config.ts';

/** A person's session for a call, or why there is none. */
export type PersonSession =
  | { kind: 'up'; connection: McpConnection; release: () => void }
  /** The person has no working connection: never connected, or their tokens were refused and did not refresh. */
  | { kind: 'connect' }
  | { kind: 'failed'; message: string };

interface Entry {
  connection: McpConnection;
  users: number;
  idle: NodeJS.Timeout | undefined;
}

/** How long a person's session stays open after its last call. */
export const DEFAULT_PERSON_IDLE_MS = 5 * 60_000;
/** Stored connections tried, newest first, to list a server's tools at start. */
const CATALOG_TRIES = 3;

/** The per-person sessions of one server, pooled by person. */
export class PersonSessions {
  /** The tools the latest session (of anyone) listed; empty until someone has connected. */
  tools: Tool[] = [];
  private lastServerInfo: { name: string; version: string } | undefined;
  /** The session whose listing is the catalog (it keeps its resources, relisted on a change, after it closes). */
  private latest: McpConnection | undefined;
  private readonly entries = new Map<string, Entry>();
  private readonly opening = new Map<string, Promise<PersonSession>>();
  private closed = false;

  constructor(
    readonly config: McpServerConfig,
    private readonly options: ConnectionOptions,
    private readonly idleMs = DEFAULT_PERSON_IDLE_MS,
  ) {}

  /**
   * Lists the server's tools under the newest stored connections (a few, newest first) so the planner sees them
   * before anyone asks; each session is kept for its person as any other. A sentence for the log.
   */
  async start(): Promise<string> {
    const stored = await this.options.oauth.store.connections({ server: this.config.name });
    for (const c of stored.filter((s) => s.owner.kind === 'person').slice(0, CATALOG_TRIES)) {
      const found = await this.session(c.owner as Extract<ConnectionOwner, { kind: 'person' }>);
      if (found.kind !== 'up') continue;
      found.release();
      return `MCP server "${this.config.name}" connects per person; ${this.tools.length} tools listed under a stored connection`;
    }
    return `MCP server "${this.config.name}" connects per person; its tools are listed once someone connects`;
  }

  /** The resources the latest session (of anyone) listed; undefined when it offers none, or nobody has connected. */
  get resources(): McpConnection['resources'] {
    return this.latest?.resources;
  }

  serverInfo(): { name: string; version: string } | undefined {
    return this.lastServerInfo;
  }

  /** The sessions open now (for diagnostics and tests). */
  get openCount(): number {
    return this.entries.size;
  }

  /**
   * The person's session, opened with their tokens if none is open (one opening at a time per person); `release` it
   * after the call, so that it closes once idle.
   */
  async session(owner: Extract<ConnectionOwner, { kind: 'person' }>): Promise<PersonSession> {
    if (this.closed) return { kind: 'failed', message: 'the MCP host was shut down' };
    const key = owner.personId;
    const entry = this.entries.get(key);
    if (entry) return this.use(entry);
    let pending = this.opening.get(key);
    if (!pending) {
      pending = this.openFor(owner).finally(() => this.opening.delete(key));
      this.opening.set(key, pending);
    }
    const opened = await pending;
    if (opened.kind !== 'up') return opened;
    const now = this.entries.get(key);
    return now ? this.use(now) : { kind: 'failed', message: 'the session closed as it opened' };
  }

  /** Notes the tools a person's session lists now: the latest listing is the catalog. */
  noteListing(connection: McpConnection): void {
    if (!connection.isUp) return;
    this.tools = connection.tools;
    this.latest = connection;
    this.lastServerInfo = connection.serverInfo() ?? this.lastServerInfo;
  }

  /** Closes the person's session (they disconnected, or connected anew: the next call opens one with new tokens). */
  async forget(personId: string): Promise<void> {
    const entry = this.entries.get(personId);
    if (!entry) return;
    this.entries.delete(personId);
    clearTimeout(entry.idle);
    await entry.connection.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.opening.values()]);
    await Promise.all([...this.entries.keys()].map((k) => this.forget(k)));
  }

  private async openFor(owner: Extract<ConnectionOwner, { kind: 'person' }>): Promise<PersonSession> {
    const { store } = this.options.oauth;
    // No tokens: nothing to send, and nobody to ask from here (the person connects in their browser).
    if ((await store.read(this.config.name, owner, 'tokens')) === undefined) return { kind: 'connect' };
    // A person's session never authorizes by itself: that happens in their browser, through Steward's connect link.
    const { authorize: _none, ...oauth } = this.options.oauth;
    const started = await McpConnection.start(this.config, { ...this.options, oauth: { ...oauth, owner } });
    if (started.failure !== undefined) {
      // Not kept trying in the background: the next step of this person opens a session again.
      await started.connection.close();
      return started.unauthorized ? { kind: 'connect' } : { kind: 'failed', message: started.failure };
    }
    if (this.closed) {
      await started.connection.close();
      return { kind: 'failed', message: 'the MCP host was shut down' };
    }
    this.entries.set(owner.personId, { connection: started.connection, users: 0, idle: undefined });
    this.noteListing(started.connection);
    return { kind: 'up', connection: started.connection, release: () => undefined };
  }

  private use(entry: Entry): PersonSession {
    entry.users += 1;
    clearTimeout(entry.idle);
    entry.idle = undefined;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users > 0 || this.closed) return;
      entry.idle = setTimeout(() => {
        for (const [key, e] of this.entries) if (e === entry && e.users === 0) void this.forget(key);
      }, this.idleMs);
      entry.idle.unref();
    };
    return { kind: 'up', connection: entry.connection, release };
  }
}
