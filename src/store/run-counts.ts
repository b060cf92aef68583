/** How many runs there are in each status, for the operator's `/metrics` (one grouped read over `runs_status_idx`). */
import { sql, type Kysely } from 'kysely';
import { ACTIVE_STATUSES, RUN_STATUSES, TERMINAL_STATUSES, type RunStatus } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';

/** Runs by status, every status present (0 when none), so a scrape never loses a series. */
export async function countRunsByStatus(db: Kysely<DatabaseSchema>): Promise<Record<RunStatus, number>> {
  const rows = await db
    .selectFrom('runs')
    .select((eb) => ['status', eb.fn.countAll<string>().as('n')])
    .groupBy('status')
    .execute();
  const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  for (const row of rows) if (row.status in counts) counts[row.status as RunStatus] = Number(row.n);
  return counts;
}

/**
 * Runs waiting for a process: those that need an owner (unfinished, or finished still owing their report) and have
 * none (never held, released, or their lease lapsed, by the database's clock). The runs `claimOrphans` would take,
 * leaving out only a dead owner's runs whose lease still runs.
 */
export async function countRunsAwaitingOwner(db: Kysely<DatabaseSchema>): Promise<number> {
  const row = await db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where((eb) =>
      eb.and([
        eb.or([
          eb('status', 'in', ACTIVE_STATUSES),
          eb.and([eb('report_due', '=', true), eb('status', 'in', TERMINAL_STATUSES)]),
        ]),
        eb.or([eb('owner', 'is', null), eb('lease_expires_at', '<', sql<Date>`now()`)]),
      ]),
    )
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
