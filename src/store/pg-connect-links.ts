/**
 * Connect links over Kysely (migrations 0023, 0024, 0026): issued for one person, server and waiting run, in a conversation;
 * opened once (the OAuth `state` and the browser's binding noted, as hashes, and whether that browser was signed in to
 * the dashboard as the link's person); completed once, by the browser that opened it, before it expires. A connection
 * made without that sign-in is pending until its person answers in chat (once), for a day at most. Connecting signals every process
 * (`connected:<run>`), so the process that holds the run goes on.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql, type ColumnType, type Generated, type Kysely } from 'kysely';
import type { Conversation } from '../engine/ports.ts';
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
  conversation_channel: string | null;
  conversation_key: string | null;
  signed_in: Generated<boolean>;
  pending_at: Date | null;
  decided_at: Date | null;
  decision: string | null;
  pending_hash: string | null;
}

type Db = Kysely<DatabaseSchema & { mcp_connect_links: McpConnectLinksTable }>;

/** How long a connect link works after it is sent. */
export const CONNECT_LINK_TTL_MS = 15 * 60_000;

/**
 * How long a connection made through a link waits for its person to confirm it in chat. They are asked at once, as
 * the browser comes back; a day lets someone who authorized and walked away answer when back (overnight, another time
 * zone), after which the tokens of an account no one confirmed are revoked at its server instead of kept sealed, and
 * the "Use this connection" button in the thread's history no longer does anything.
 */
export const PENDING_CONNECTION_TTL_MS = 24 * 60 * 60_000;

/** What a link connects: whose connection, to which server, for which waiting run; where it was sent. */
export interface ConnectLinkTarget {
  server: string;
  person: Actor;
  runId: string | null;
  conversation?: Conversation;
}

/** A link whose authorization came back: its id, and whether the browser was signed in as its person. */
export interface CompletedLink extends ConnectLinkTarget {
  link: string;
  signedIn: boolean;
}

/** A person's answer about a pending connection: use it, or not theirs. */
export type LinkDecision = 'used' | 'refused';

/** A connection that waited too long for its person: its link, and the fingerprint of the tokens it brought. */
export interface ExpiredConnection extends CompletedLink {
  fingerprint: string | undefined;
}

function hash(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

const TARGET = [
  'id',
  'server',
  'channel',
  'user_id',
  'user_name',
  'run_id',
  'conversation_channel',
  'conversation_key',
  'signed_in',
] as const;

interface TargetRow {
  id: number | string;
  server: string;
  channel: string;
  user_id: string;
  user_name: string | null;
  run_id: string | null;
  conversation_channel: string | null;
  conversation_key: string | null;
  signed_in: boolean;
}

function toTarget(row: TargetRow): ConnectLinkTarget {
  const person: Actor = { channel: row.channel, id: row.user_id, ...(row.user_name ? { name: row.user_name } : {}) };
  const conversation =
    row.conversation_channel !== null && row.conversation_key !== null
      ? { conversation: { channel: row.conversation_channel, key: row.conversation_key } }
      : {};
  return { server: row.server, person, runId: row.run_id, ...conversation };
}

function toCompleted(row: TargetRow): CompletedLink {
  return { ...toTarget(row), link: String(row.id), signedIn: row.signed_in };
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
        conversation_channel: target.conversation?.channel ?? null,
        conversation_key: target.conversation?.key ?? null,
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
   * Uses the link (once): notes the OAuth `state` and the browser's `binding` it goes on with, as hashes, and whether
   * that browser was signed in to the dashboard as the link's person. Null when the link is unknown, used or expired:
   * one statement decides, so two browsers never both open it.
   */
  async open(
    token: string,
    state: string,
    binding: string,
    at: Date,
    signedIn = false,
  ): Promise<ConnectLinkTarget | null> {
    const row = await this.db
      .updateTable('mcp_connect_links')
      .set({ opened_at: at, state_hash: hash(state), binding_hash: hash(binding), signed_in: signedIn })
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
  async complete(state: string, binding: string, at: Date): Promise<CompletedLink | null> {
    const row = await this.db
      .updateTable('mcp_connect_links')
      .set({ completed_at: at })
      .where('state_hash', '=', hash(state))
      .where('binding_hash', '=', hash(binding))
      .where('completed_at', 'is', null)
      .where('expires_at', '>', at)
      .returning(TARGET)
      .executeTakeFirst();
    return row ? toCompleted(row) : null;
  }

  /**
   * The connection made through `link` waits for its person to confirm it (`fingerprint`: that of the tokens it
   * brought, `secretFingerprint`); an older one of theirs for the same server that still waited is replaced by it (its
   * tokens were overwritten).
   */
  async markPending(link: string, at: Date, fingerprint?: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const row = await tx
        .updateTable('mcp_connect_links')
        .set({ pending_at: at, pending_hash: fingerprint ?? null })
        .where('id', '=', link)
        .returning(['server', 'channel', 'user_id'])
        .executeTakeFirst();
      if (!row) return;
      await tx
        .updateTable('mcp_connect_links')
        .set({ decided_at: at, decision: 'replaced' })
        .where('server', '=', row.server)
        .where('channel', '=', row.channel)
        .where('user_id', '=', row.user_id)
        .where('id', '!=', link)
        .where('pending_at', 'is not', null)
        .where('decided_at', 'is', null)
        .execute();
    });
  }

  /**
   * Records the person's answer about their pending connection to `server` (the one made through `link`, when named):
   * once, only by that person, only while it waits. Null when nothing of theirs waits (answered, or replaced).
   */
  async decide(
    server: string,
    person: Actor,
    decision: LinkDecision,
    at: Date,
    link?: string,
  ): Promise<CompletedLink | null> {
    let query = this.db
      .updateTable('mcp_connect_links')
      .set({ decided_at: at, decision })
      .where('server', '=', server)
      .where('channel', '=', person.channel)
      .where('user_id', '=', person.id)
      .where('pending_at', 'is not', null)
      .where('decided_at', 'is', null);
    // A link id is digits (bigserial); anything else names no link of theirs.
    if (link !== undefined) query = query.where('id', '=', /^\d{1,18}$/.test(link) ? link : '0');
    const row = await query.returning(TARGET).executeTakeFirst();
    return row ? toCompleted(row) : null;
  }

  /**
   * Ends the wait of every connection pending since `cutoff` or before (decided `expired`, once: the process whose
   * statement claims a row forgets its tokens), and returns them.
   */
  async expirePending(cutoff: Date, at: Date): Promise<ExpiredConnection[]> {
    const rows = await this.db
      .updateTable('mcp_connect_links')
      .set({ decided_at: at, decision: 'expired' })
      .where('pending_at', 'is not', null)
      .where('decided_at', 'is', null)
      .where('pending_at', '<=', cutoff)
      .returning([...TARGET, 'pending_hash'])
      .execute();
    return rows.map((row) => ({ ...toCompleted(row), fingerprint: row.pending_hash ?? undefined }));
  }

  /** Tells every process (this one too) that someone connected, for the run that waited (if any). */
  async signalConnected(runId: string | null): Promise<void> {
    await sql`select pg_notify(${SIGNAL_CHANNEL}, ${`connected:${runId ?? '-'}`})`.execute(this.db);
  }
}
