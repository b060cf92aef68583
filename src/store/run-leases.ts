/**
 * Queries for run ownership: a run is driven by the process named in `runs.owner` until `lease_expires_at`, by the
 * database's clock so no two machines need to agree on the time. Each claim raises `runs.fence`; the driver's writes
 * carry the fence they were given and lock the run's row (FOR SHARE) while they check it, so a claim and a fenced
 * write are ordered: the write sees the claim, or the claimer sees the write. `PgRunStore` exposes these as methods.
 */
import { sql, type Kysely } from 'kysely';
import { ACTIVE_STATUSES, TERMINAL_STATUSES } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/** Channel of the notifications the owner of a run listens to. */
export const SIGNAL_CHANNEL = 'steward_runs';

const expiresIn = (ttlMs: number) => sql<Date>`now() + ${Math.max(1, Math.round(ttlMs))} * interval '1 millisecond'`;

/** Takes the run's lease if nobody holds it or it lapsed; returns the new fence, or null. */
export async function claimRun(db: Db, owner: string, runId: string, ttlMs: number): Promise<number | null> {
  const row = await db
    .updateTable('runs')
    .set((eb) => ({ owner, lease_expires_at: expiresIn(ttlMs), fence: eb('fence', '+', 1) }))
    .where('id', '=', runId)
    .where((eb) => eb.or([eb('owner', 'is', null), eb('lease_expires_at', '<', sql<Date>`now()`)]))
    .returning('fence')
    .executeTakeFirst();
  return row?.fence ?? null;
}

/** Extends the leases of `runIds` that `owner` holds, lapsed or not (nobody took them); returns those. */
export async function renewLeases(db: Db, owner: string, runIds: readonly string[], ttlMs: number): Promise<string[]> {
  const rows = await db
    .updateTable('runs')
    .set({ lease_expires_at: expiresIn(ttlMs) })
    .where('owner', '=', owner)
    .where('id', 'in', runIds)
    // A run that ended and reported needs no owner; its last holder's name stays for the record.
    .where((eb) =>
      eb.or([
        eb('status', 'in', ACTIVE_STATUSES),
        eb.and([eb('report_due', '=', true), eb('status', 'in', TERMINAL_STATUSES)]),
      ]),
    )
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Lets go of the run's lease (if `owner` holds it) and tells listeners, so another process may take it at once. */
export async function releaseRun(db: Db, owner: string, runId: string): Promise<void> {
  await db
    .with('released', (q) =>
      q
        .updateTable('runs')
        .set({ owner: null, lease_expires_at: null })
        .where('id', '=', runId)
        .where('owner', '=', owner)
        .returning(['id', 'status']),
    )
    .selectFrom('released')
    .select(sql`pg_notify(${SIGNAL_CHANNEL}, 'released:' || released.id)`.as('n'))
    // Only a run that still wants an owner is worth waking anyone for.
    .where('released.status', 'in', ACTIVE_STATUSES)
    .execute();
}

/** Holders of runs that need an owner, other than `owner` (for the caller to judge which died). */
export async function listHolders(db: Db, owner: string): Promise<string[]> {
  const rows = await db
    .selectFrom('runs')
    .select('owner')
    .distinct()
    .where('owner', 'is not', null)
    .where('owner', '<>', owner)
    .execute();
  return rows.flatMap((r) => (r.owner === null ? [] : [r.owner]));
}

/**
 * Claims up to `limit` runs that need an owner and have none: unfinished, or finished and still owing their report;
 * never held, released, lapsed (this owner's own lapsed lease too, unless the run is in `held`), or held by one of
 * `deadOwners`. Runs another claimer has locked are skipped. Returns the claimed ids with their new fences, oldest
 * run first. The claim is marked with `op`, so that a repeat after a lost answer finds its runs (`claimedBy`).
 */
export async function claimOrphans(
  db: Db,
  owner: string,
  ttlMs: number,
  limit: number,
  deadOwners: readonly string[],
  held: readonly string[],
  op: string,
): Promise<{ id: string; fence: number }[]> {
  const rows = await db
    .with('orphans', (q) =>
      q
        .selectFrom('runs')
        .select('id')
        .where((eb) =>
          eb.and([
            eb.or([
              eb('status', 'in', ACTIVE_STATUSES),
              eb.and([eb('report_due', '=', true), eb('status', 'in', TERMINAL_STATUSES)]),
            ]),
            eb.or([
              eb('owner', 'is', null),
              eb.and([
                eb('lease_expires_at', '<', sql<Date>`now()`),
                ...(held.length > 0 ? [eb.or([eb('owner', '<>', owner), eb('id', 'not in', held)])] : []),
              ]),
              ...(deadOwners.length > 0 ? [eb('owner', 'in', deadOwners)] : []),
            ]),
          ]),
        )
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .updateTable('runs')
    .set((eb) => ({ owner, lease_expires_at: expiresIn(ttlMs), fence: eb('runs.fence', '+', 1), claim_op: op }))
    .from('orphans')
    .whereRef('runs.id', '=', 'orphans.id')
    .returning(['runs.id', 'runs.fence', 'runs.created_at'])
    .execute();
  return oldestFirst(rows);
}

/** The runs the claim `op` took that `owner` still holds under that claim's lease (none if it took none). */
export async function claimedBy(db: Db, owner: string, op: string): Promise<{ id: string; fence: number }[]> {
  const rows = await db
    .selectFrom('runs')
    .select(['id', 'fence', 'created_at'])
    .where('claim_op', '=', op)
    .where('owner', '=', owner)
    .execute();
  return oldestFirst(rows);
}

function oldestFirst(rows: Array<{ id: string; fence: number; created_at: Date }>): { id: string; fence: number }[] {
  return rows
    .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id))
    .map((r) => ({ id: r.id, fence: r.fence }));
}

/** Queues a decision for the run's owner and wakes it. */
export async function forwardCommand(db: Db, runId: string, command: string): Promise<void> {
  await db
    .with('queued', (q) => q.insertInto('run_commands').values({ run_id: runId, command }).returning('run_id'))
    .selectFrom('queued')
    .select(sql`pg_notify(${SIGNAL_CHANNEL}, 'decision:' || queued.run_id)`.as('n'))
    .execute();
}

/**
 * Takes the decisions queued for a run this owner holds, oldest first. Each is taken once: a repeat of this take
 * (same `op`, after its answer was lost) returns what it took.
 */
export async function takeCommands(db: Db, owner: string, runId: string, op: string): Promise<unknown[]> {
  const rows = await db
    .updateTable('run_commands')
    .set({ taken_op: op })
    .where('run_id', '=', runId)
    .where((eb) => eb.or([eb('taken_op', 'is', null), eb('taken_op', '=', op)]))
    .where((eb) => eb.exists(eb.selectFrom('runs').select('id').where('id', '=', runId).where('owner', '=', owner)))
    .returning(['id', 'command'])
    .execute();
  return rows.sort((a, b) => Number(a.id) - Number(b.id)).map((r) => r.command);
}

/** Forgets the decisions taken by `op`, once applied: a Pause or Stop among them no longer holds step starts. */
export async function settleCommands(db: Db, runId: string, op: string): Promise<void> {
  await db.deleteFrom('run_commands').where('run_id', '=', runId).where('taken_op', '=', op).execute();
}

/** Runs held by `owner` that have decisions waiting. */
export async function runsWithCommands(db: Db, owner: string): Promise<string[]> {
  const rows = await db
    .selectFrom('run_commands')
    .innerJoin('runs', 'runs.id', 'run_commands.run_id')
    .select('run_commands.run_id')
    .distinct()
    .where('runs.owner', '=', owner)
    .where('run_commands.taken_op', 'is', null)
    .execute();
  return rows.map((r) => r.run_id);
}
