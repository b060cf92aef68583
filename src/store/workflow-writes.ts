/**
 * Writes of workflows and their versions, each one statement whose outcome the database decides: a name taken by a
 * workflow not deleted refuses the create, and a version is added only right after the one the caller expected.
 */
import { sql, type Kysely } from 'kysely';
import { StewardError } from '../engine/errors.ts';
import type { NewVersion, NewWorkflow } from '../engine/workflows.ts';
import { toJsonText, toStorableText } from './json-text.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/** The columns of a version row, as the SQL below lists them after `workflow_id, version`. */
function versionValues(v: NewVersion, op: string | null, at: Date) {
  return sql`${toJsonText(v.plan)}::jsonb, ${toJsonText(v.pins)}::jsonb, ${v.risk}, ${toStorableText(v.note)},
    ${v.sourceRunId}, ${v.createdBy.id}, ${v.createdBy.name ?? null}, ${v.createdBy.channel}, ${op}, ${at}::timestamptz`;
}

const VERSION_COLUMNS = sql.raw(
  'workflow_id, version, plan, pins, risk, note, source_run_id, created_by_id, created_by_name, created_by_channel, op, created_at',
);

/**
 * Creates `w` with its version 1 in one statement; false when the name is taken by a workflow not deleted. A repeat
 * of this create (the same id, already stored under the same name) is true; an id taken by another workflow throws.
 */
export async function createWorkflow(db: Db, w: NewWorkflow, at: Date): Promise<boolean> {
  const { rows } = await sql<{ created: number }>`
    WITH created AS (
      INSERT INTO workflows (id, name, owner_id, owner_name, owner_channel, conversation_channel, conversation_key,
        review, version, created_at, updated_at)
      VALUES (${w.id}, ${w.name}, ${w.owner.id}, ${w.owner.name ?? null}, ${w.owner.channel},
        ${w.conversation.channel}, ${w.conversation.key}, ${w.review}, 1, ${at}, ${at})
      -- The id, or the name among workflows not deleted (a partial unique index): either way, nothing is written.
      ON CONFLICT DO NOTHING
      RETURNING id
    ), first AS (
      INSERT INTO workflow_versions (${VERSION_COLUMNS})
      SELECT id, 1, ${versionValues(w.first, null, at)} FROM created
    )
    SELECT count(*)::integer AS created FROM created`.execute(db);
  if ((rows[0]?.created ?? 0) > 0) return true;
  const stored = await db.selectFrom('workflows').select('name').where('id', '=', w.id).executeTakeFirst();
  if (stored === undefined) return false;
  if (stored.name === w.name) return true;
  throw new StewardError('store_failed', `a workflow with id ${w.id} already exists`);
}

/**
 * Moves the workflow from `expectedVersion` to the next and stores `v` as that version, in one statement; returns
 * the new number, or null when the workflow moved on or is deleted. `op` lets a repeat find the version it added.
 */
export async function addVersion(
  db: Db,
  op: string,
  workflowId: string,
  expectedVersion: number,
  v: NewVersion,
  at: Date,
): Promise<number | null> {
  const { rows } = await sql<{ version: number }>`
    WITH moved AS (
      UPDATE workflows SET version = version + 1, updated_at = ${at}
      WHERE id = ${workflowId} AND version = ${expectedVersion} AND deleted_at IS NULL
      RETURNING id, version
    ), added AS (
      INSERT INTO workflow_versions (${VERSION_COLUMNS})
      SELECT id, version, ${versionValues(v, op, at)} FROM moved
      RETURNING version
    )
    SELECT version FROM added
    UNION ALL
    SELECT version FROM workflow_versions WHERE workflow_id = ${workflowId} AND op = ${op}`.execute(db);
  return rows[0]?.version ?? null;
}

/** Marks the workflow and its schedules deleted (the first deletion's time stands); its name is free again. */
export async function deleteWorkflow(db: Db, workflowId: string, at: Date): Promise<void> {
  await sql`
    WITH gone AS (
      UPDATE workflows SET deleted_at = ${at}, updated_at = ${at} WHERE id = ${workflowId} AND deleted_at IS NULL
    )
    UPDATE workflow_schedules SET deleted_at = ${at}, updated_at = ${at}
    WHERE workflow_id = ${workflowId} AND deleted_at IS NULL`.execute(db);
}
