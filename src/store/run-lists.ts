/** Lists of a person's runs, for the channels' "my runs" answers (`/steward status`, `/steward runs`). */
import type { Kysely } from 'kysely';
import type { StoredRun } from '../engine/ports.ts';
import { ACTIVE_STATUSES, type Actor } from '../engine/types.ts';
import { fromRunRow } from './run-rows.ts';
import type { DatabaseSchema } from './schema.ts';

/** The most runs one list returns, whatever is asked: a chat answer, not an export. */
export const MAX_LISTED_RUNS = 50;

/** This person's runs on their platform (only unfinished ones with `activeOnly`), newest first, with their plans. */
export async function listRunsOf(
  db: Kysely<DatabaseSchema>,
  actor: Actor,
  options: { activeOnly: boolean; limit: number },
): Promise<StoredRun[]> {
  let query = db
    .selectFrom('runs')
    .leftJoin('plan_revisions', (join) =>
      join.onRef('plan_revisions.run_id', '=', 'runs.id').onRef('plan_revisions.revision', '=', 'runs.revision'),
    )
    .selectAll('runs')
    .select('plan_revisions.plan')
    .where('runs.channel', '=', actor.channel)
    .where('runs.requester_id', '=', actor.id);
  if (options.activeOnly) query = query.where('runs.status', 'in', ACTIVE_STATUSES);
  const limit = Math.max(1, Math.min(MAX_LISTED_RUNS, Math.floor(options.limit)));
  const rows = await query.orderBy('runs.created_at', 'desc').orderBy('runs.id').limit(limit).execute();
  return rows.map(fromRunRow);
}
