/**
 * Live schedules held to the operator's caps (per person, per channel), decided in the database: a schedule is
 * added, or resumed, in a transaction that first takes one advisory lock shared by every such change, then counts
 * the live schedules (not paused, not deleted, of a workflow not deleted) of the person who added it and of the
 * channel its workflow reports to. Two processes adding at once queue on the lock, so no cap is passed by a race.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { NewSchedule, ScheduleCapHit, ScheduleCaps } from '../engine/workflows.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;
type Tx = Transaction<DatabaseSchema>;

/** The advisory lock every change that makes a schedule live takes (a constant key: such changes are rare). */
const LIVE_SCHEDULES_LOCK = sql`pg_advisory_xact_lock(hashtext('steward:live-schedules'))`;

/** Adds `s` unless a cap would be passed (then nothing is written); a repeat of an add already stored is no hit. */
export function addScheduleWithinCaps(
  db: Db,
  s: NewSchedule,
  at: Date,
  caps: ScheduleCaps,
): Promise<ScheduleCapHit | null> {
  return db.transaction().execute(async (tx) => {
    await sql`SELECT ${LIVE_SCHEDULES_LOCK}`.execute(tx);
    const repeat = await tx.selectFrom('workflow_schedules').select('id').where('id', '=', s.id).executeTakeFirst();
    if (repeat) return null;
    const hit = await capHit(tx, s.workflowId, s.createdBy, caps);
    if (hit) return hit;
    await tx
      .insertInto('workflow_schedules')
      .values({
        id: s.id,
        workflow_id: s.workflowId,
        cron: s.cron,
        time_zone: s.timeZone,
        catch_up: s.catchUp,
        overlap: s.overlap,
        next_fire_at: s.nextFireAt,
        created_by_id: s.createdBy.id,
        created_by_name: s.createdBy.name ?? null,
        created_by_channel: s.createdBy.channel,
        created_at: at,
        updated_at: at,
      })
      .execute();
    return null;
  });
}

/** Resumes a paused schedule from `nextFireAt` unless a cap would be passed (then it stays paused). */
export function resumeScheduleWithinCaps(
  db: Db,
  scheduleId: string,
  nextFireAt: Date | null,
  at: Date,
  caps: ScheduleCaps,
): Promise<ScheduleCapHit | null> {
  return db.transaction().execute(async (tx) => {
    await sql`SELECT ${LIVE_SCHEDULES_LOCK}`.execute(tx);
    const row = await tx
      .selectFrom('workflow_schedules')
      .select(['workflow_id', 'paused', 'created_by_id', 'created_by_channel'])
      .where('id', '=', scheduleId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row?.paused) return null;
    const hit = await capHit(tx, row.workflow_id, { id: row.created_by_id, channel: row.created_by_channel }, caps);
    if (hit) return hit;
    await tx
      .updateTable('workflow_schedules')
      .set({ paused: false, next_fire_at: nextFireAt, updated_at: at })
      .where('id', '=', scheduleId)
      .execute();
    return null;
  });
}

/** The cap one more live schedule of `workflowId` added by `person` would pass, or null. */
async function capHit(
  tx: Tx,
  workflowId: string,
  person: { id: string; channel: string },
  caps: ScheduleCaps,
): Promise<ScheduleCapHit | null> {
  const { rows } = await sql<{ person: number; channel: number }>`
    WITH target AS (SELECT conversation_channel, conversation_key FROM workflows WHERE id = ${workflowId}),
    live AS (
      SELECT s.created_by_id, s.created_by_channel, w.conversation_channel, w.conversation_key
      FROM workflow_schedules s JOIN workflows w ON w.id = s.workflow_id
      WHERE NOT s.paused AND s.deleted_at IS NULL AND w.deleted_at IS NULL
    )
    SELECT
      (SELECT count(*) FROM live WHERE created_by_id = ${person.id} AND created_by_channel = ${person.channel})::int
        AS person,
      (SELECT count(*) FROM live, target WHERE live.conversation_channel = target.conversation_channel
        AND live.conversation_key = target.conversation_key)::int AS channel`.execute(tx);
  const live = rows[0] ?? { person: 0, channel: 0 };
  if (live.person >= caps.perPerson) return { over: 'person', live: live.person, limit: caps.perPerson };
  if (live.channel >= caps.perChannel) return { over: 'channel', live: live.channel, limit: caps.perChannel };
  return null;
}
