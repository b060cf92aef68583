/**
 * The dashboard over the database: `DashboardLinks` for the engine, and the reads the web pages make (all their SQL is
 * in `dashboard-queries.ts`). A link carries 32 random bytes; the table keeps only their SHA-256, so the link is the
 * one place the token exists. It signs in the person it was issued to, once, within `ttlMs`.
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
import type { DatabaseSchema } from './schema.ts';

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
    await insertDashboardLink(this.db, {
      ...{ tokenHash: hashLinkToken(token), channel: actor.channel, id: actor.id, name: actor.name ?? null },
      approverRoles: [...(access?.approverRoles ?? [])],
      expiresAt: new Date(at.getTime() + this.ttlMs),
    });
    return `${this.baseUrl}/signin/${token}`;
  }

  /** The person a link signs in, using it up; null when it is unknown, used or expired. */
  consumeLink(token: string, at: Date): Promise<LinkPerson | null> {
    return consumeDashboardLink(this.db, hashLinkToken(token), at);
  }

  listRuns(viewer: Viewer, filters: RunFilters, pageSize: number): Promise<{ runs: RunSummary[]; more: boolean }> {
    return listVisibleRuns(this.db, viewer, filters, pageSize);
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
