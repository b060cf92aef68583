/**
 * Connect links over Kysely (migration 0023): issued for one person, server and waiting run; opened once (the OAuth
 * `state` and the browser's binding noted, as hashes); completed once, by the browser that opened it, before it
 * expires. Completing signals every process (`connected:<run>`), so the process that holds the run goes on.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql, type ColumnType, type Generated, type Kysely } from 'kysely';
import type { Actor } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';
import { SIGNAL_CHANNEL } from './run-leases.ts';

/** One connect link (migration 0023). */
export interface McpConnectLinksTable {
  id: Generated<number | string>;
  token_hash: string;
  server: string;
  channel: string;
  user_id: string;
  user_name: string | null;
  run_id: string | null;
  expires_at: Date;
  state_hash: string | null;
  binding_hash: string | null;
  opened_at: Date | null;
  completed_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

type Db = Kysely<DatabaseSchema & { mcp_connect_links: McpConnectLinksTable }>;

/** How long a connect link works after it is sent. */
export const CONNECT_LINK_TTL_MS = 15 * 60_000;

/** What a link connects: whose connection, to which server, for which waiting run. */
export interface ConnectLinkTarget {
  server: string;
  person: Actor;
  runId: string | null;
}

function hash(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

const TARGET = ['server', 'channel', 'user_id', 'user_name', 'run_id'] as const;

function toTarget(row: {
  server: string;
  channel: string;
  user_id: string;
  user_name: string | null;
  run_id: string | null;
}): ConnectLinkTarget {
  const person: Actor = { channel: row.channel, id: row.user_id, ...(row.user_name ? { name: row.user_name } : {}) };
  return { server: row.server, person, runId: row.run_id };
}

/** Connect links in `mcp_connect_links`; only hashes of the token, the state and the browser binding are stored. */
export class PgConnectLinks {
  private readonly db: Db;

  constructor(
    db: Kysely<DatabaseSchema>,
    private readonly ttlMs = CONNECT_LINK_TTL_MS,
  ) {
    this.db = db.withTables<{ mcp_connect_links: McpConnectLinksTable }>();
  }

  /** A new link's token (the only copy), valid for `ttlMs` from `at`. */
  async issue(target: ConnectLinkTarget, at: Date): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.db
      .insertInto('mcp_connect_links')
      .values({
        token_hash: hash(token),
        server: target.server,
        channel: target.person.channel,
        user_id: target.person.id,
        user_name: target.person.name ?? null,
        run_id: target.runId,
        expires_at: new Date(at.getTime() + this.ttlMs),
      })
      .execute();
    return token;
  }

  /** What an unused, unexpired link connects, without using it (for the page that asks to go on). */
  async peek(token: string, at: Date): Promise<ConnectLinkTarget | null> {
    const row = await this.db
      .selectFrom('mcp_connect_links')
      .select(TARGET)
      .where('token_hash', '=', hash(token))
      .where('opened_at', 'is', null)
      .where('expires_at', '>', at)
      .executeTakeFirst();
    return row ? toTarget(row) : null;
  }

  /**
   * Uses the link (once): notes the OAuth `state` and the browser's `binding` it goes on with, as hashes. Null when
   * the link is unknown, used or expired: one statement decides, so two browsers never both open it.
   */
  async open(token: string, state: string, binding: string, at: Date): Promise<ConnectLinkTarget | null> {
    const row = await this.db
      .updateTable('mcp_connect_links')
      .set({ opened_at: at, state_hash: hash(state), binding_hash: hash(binding) })
      .where('token_hash', '=', hash(token))
      .where('opened_at', 'is', null)
      .where('expires_at', '>', at)
      .returning(TARGET)
      .executeTakeFirst();
    return row ? toTarget(row) : null;
  }

  /**
   * Completes the authorization that came back with `state` (once), only in the browser that opened the link (its
   * `binding`) and before the link expires; null otherwise.
   */
  async complete(state: string, binding: string, at: Date): Promise<ConnectLinkTarget | null> {
    const row = await this.db
      .updateTable('mcp_connect_links')
      .set({ completed_at: at })
      .where('state_hash', '=', hash(state))
      .where('binding_hash', '=', hash(binding))
      .where('completed_at', 'is', null)
      .where('expires_at', '>', at)
      .returning(TARGET)
      .executeTakeFirst();
    return row ? toTarget(row) : null;
  }

  /** Tells every process (this one too) that someone connected, for the run that waited (if any). */
  async signalConnected(runId: string | null): Promise<void> {
    await sql`select pg_notify(${SIGNAL_CHANNEL}, ${`connected:${runId ?? '-'}`})`.execute(this.db);
  }
}
