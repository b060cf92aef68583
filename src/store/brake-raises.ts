/**
 * Approvers' raises of a run's brakes (issue 30), one row per run and brake: who raised it, to what, and when. A raise
 * never lowers one already recorded (two approvers pressing at once: the higher stands), in one statement.
 */
import { sql, type Kysely } from 'kysely';
import { DEPTH_CEILING, type DepthRaise } from '../engine/assistant/delegations.ts';
import type { Actor } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';

/** Records the raise of `runId`'s depth brake to `depth` (at most the ceiling); resolves with the raise that stands. */
export async function raiseDepth(
  db: Kysely<DatabaseSchema>,
  runId: string,
  depth: number,
  approver: Actor,
  at: Date,
): Promise<DepthRaise> {
  const value = Math.min(DEPTH_CEILING, Math.floor(depth));
  await db
    .insertInto('brake_raises')
    .values({
      run_id: runId,
      brake: 'depth',
      value,
      approver_id: approver.id,
      approver_name: approver.name ?? null,
      approver_channel: approver.channel,
      created_at: at,
    })
    .onConflict((oc) =>
      oc
        .constraint('brake_raises_run_brake')
        .doUpdateSet({
          value: sql`excluded.value`,
          approver_id: sql`excluded.approver_id`,
          approver_name: sql`excluded.approver_name`,
          approver_channel: sql`excluded.approver_channel`,
          created_at: sql`excluded.created_at`,
        })
        .where('brake_raises.value', '<', value),
    )
    .execute();
  const stands = await depthRaiseOf(db, runId);
  if (!stands) throw new Error(`the raise of run ${runId} was not recorded`);
  return stands;
}

/**
 * The depth raise that holds for a run: its own, else the nearest one up the chain of runs that handed it work (a
 * chain an approver raised keeps that room), or null.
 */
export async function depthRaiseOf(db: Kysely<DatabaseSchema>, runId: string): Promise<DepthRaise | null> {
  const { rows } = await sql<{
    value: number;
    approver_id: string;
    approver_name: string | null;
    approver_channel: string;
    created_at: Date;
  }>`
    WITH RECURSIVE chain (run_id, n) AS (
      SELECT ${runId}::text, 0
      UNION ALL
      SELECT d.parent_run_id, c.n + 1 FROM delegations d JOIN chain c ON d.child_run_id = c.run_id
      WHERE d.parent_run_id IS NOT NULL AND c.n < 10
    )
    SELECT b.value, b.approver_id, b.approver_name, b.approver_channel, b.created_at
    FROM chain c JOIN brake_raises b ON b.run_id = c.run_id AND b.brake = 'depth'
    ORDER BY c.n LIMIT 1`.execute(db);
  const row = rows[0];
  if (!row) return null;
  const approver: Actor = {
    id: row.approver_id,
    channel: row.approver_channel,
    ...(row.approver_name !== null && { name: row.approver_name }),
  };
  return { depth: row.value, approver, at: new Date(row.created_at) };
}

/** Records that the runs `runId` hands out keep their own Assistant's grants (a repeat keeps the first record). */
export async function widenGrants(db: Kysely<DatabaseSchema>, runId: string, approver: Actor, at: Date): Promise<void> {
  await db
    .insertInto('brake_raises')
    .values({
      run_id: runId,
      brake: 'grants',
      value: 1,
      approver_id: approver.id,
      approver_name: approver.name ?? null,
      approver_channel: approver.channel,
      created_at: at,
    })
    .onConflict((oc) => oc.constraint('brake_raises_run_brake').doNothing())
    .execute();
}

/** Who widened the grants of the runs `runId` hands out, and when; null when nobody did. */
export async function grantsWidenedOf(
  db: Kysely<DatabaseSchema>,
  runId: string,
): Promise<{ approver: Actor; at: Date } | null> {
  const row = await db
    .selectFrom('brake_raises')
    .select(['approver_id', 'approver_name', 'approver_channel', 'created_at'])
    .where('run_id', '=', runId)
    .where('brake', '=', 'grants')
    .executeTakeFirst();
  if (!row) return null;
  const approver: Actor = {
    id: row.approver_id,
    channel: row.approver_channel,
    ...(row.approver_name !== null && { name: row.approver_name }),
  };
  return { approver, at: row.created_at };
}
