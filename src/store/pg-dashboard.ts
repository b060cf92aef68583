/**
 * The dashboard over the database: `DashboardLinks` for the engine, and the reads the web pages make (all their SQL is
 * in `dashboard-queries.ts`). A link carries 32 random bytes; the table keeps only their SHA-256, so the link is the
 * one place the token exists. It signs in the person it was issued to, once, within `ttlMs`, starting a session
 * kept in the database (`dashboard-sessions.ts`) under another random id, of which the table keeps only the hash too.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DashboardLinks } from '../engine/ports.ts';
import type { Actor } from '../engine/types.ts';
import {
  consumeDashboardLink,
  insertDashboardLink,
  listEstimatedRuns,
  listVisibleRuns,
  runDetail,
  runFingerprint,
  type EstimatedRun,
  type LinkPerson,
  type RunDetail,
  type RunFilters,
  type RunSummary,
  type Viewer,
} from './dashboard-queries.ts';
import { endSessions, endSessionsBeyondRoles, readSession, startSessionByLink } from './dashboard-sessions.ts';
import type { DatabaseSchema } from './schema.ts';
import type { SpendWindows } from '../engine/spend.ts';
import { dashboardSpend, type DashboardSpend } from './spend-view.ts';

/** How long a sign-in link stays usable. */
export const DASHBOARD_LINK_TTL_MS = 15 * 60_000;

/** The stored form of a link's token. */
export function hashLinkToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Sign-in links to the dashboard at `baseUrl` (its public address), path `/signin/<token>`. */
export class PgDashboard implements DashboardLinks {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly baseUrl: string;
  private readonly ttlMs: number;

  constructor(db: Kysely<DatabaseSchema>, options: { baseUrl: string; ttlMs?: number }) {
    this.db = db;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.ttlMs = options.ttlMs ?? DASHBOARD_LINK_TTL_MS;
  }

  async issue(actor: Actor, at: Date, access?: { approverRoles: readonly string[] }): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    // The person's roles, as the platform told them with this action: a role they no longer hold ends the sessions
    // it gave more sight to.
    if (access) await endSessionsBeyondRoles(this.db, actor, access.approverRoles, at);
    await insertDashboardLink(this.db, {
      tokenHash: hashLinkToken(token),
      channel: actor.channel,
      id: actor.id,
      name: actor.name ?? null,
      approverRoles: [...(access?.approverRoles ?? [])],
      expiresAt: new Date(at.getTime() + this.ttlMs),
    });
    return `${this.baseUrl}/signin/${token}`;
  }

  /** The person a link signs in, using it up; null when it is unknown, used or expired. */
  consumeLink(token: string, at: Date): Promise<LinkPerson | null> {
    return consumeDashboardLink(this.db, hashLinkToken(token), at);
  }

  /**
   * Uses a sign-in link and starts a session until `expiresAt`: its id (for the cookie) and the person, or null when
   * the link is used, expired or unknown.
   */
  async signIn(token: string, at: Date, expiresAt: Date): Promise<{ sessionId: string; person: LinkPerson } | null> {
    const sessionId = randomBytes(32).toString('base64url');
    const tokenHash = hashLinkToken(token);
    const person = await startSessionByLink(this.db, {
      tokenHash,
      sessionHash: hashLinkToken(sessionId),
      at,
      expiresAt,
    });
    return person && { sessionId, person };
  }

  /** The person of a live session; null once it is ended, expired or unknown. */
  session(sessionId: string, at: Date): Promise<LinkPerson | null> {
    return readSession(this.db, hashLinkToken(sessionId), at);
  }

  /** Ends a session, or with `everywhere` every live session of its person; how many ended. */
  signOut(sessionId: string, at: Date, everywhere: boolean): Promise<number> {
    return endSessions(this.db, hashLinkToken(sessionId), at, everywhere);
  }

  listRuns(viewer: Viewer, filters: RunFilters, pageSize: number): Promise<{ runs: RunSummary[]; more: boolean }> {
    return listVisibleRuns(this.db, viewer, filters, pageSize);
  }

  spendView(viewer: Viewer, windows: SpendWindows, limit: number): Promise<DashboardSpend> {
    return dashboardSpend(this.db, viewer, windows, limit);
  }

  estimatedRuns(viewer: Viewer, limit: number): Promise<EstimatedRun[]> {
    return listEstimatedRuns(this.db, viewer, limit);
  }

  runDetail(viewer: Viewer, runId: string): Promise<RunDetail | null> {
    return runDetail(this.db, viewer, runId);
  }

  fingerprint(runId: string): Promise<string | null> {
    return runFingerprint(this.db, runId);
  }
}
