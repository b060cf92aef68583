/** How many runs there are in each status, for the operator's `/metrics` (one grouped read over `runs_status_idx`). */
import type { Kysely } from 'kysely';
import { RUN_STATUSES, type RunStatus } from '../engine/types.ts';
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
