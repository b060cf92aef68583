/**
 * Recurring workflows: a named workflow with frozen, numbered versions, its schedules, and one row per fire. Every
 * race is settled by a row: a name is unique among workflows not deleted, a version is added only after the one
 * expected, a schedule moves past a fire time only from the time expected, and a scheduled fire exists once per
 * (workflow, scheduled time).
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

const now = sql`now()`;

/** Creates workflows, workflow_versions, workflow_schedules, workflow_fires and workflow_amendments. */
export const workflows: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('workflows')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('owner_name', 'text')
      .addColumn('owner_channel', 'text', (c) => c.notNull())
      .addColumn('conversation_channel', 'text', (c) => c.notNull())
      .addColumn('conversation_key', 'text', (c) => c.notNull())
      .addColumn('review', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addColumn('deleted_at', 'timestamptz')
      .execute();
    // A deleted workflow's name is free again; its rows stay so its fires and versions remain readable.
    await db.schema
      .createIndex('workflows_name_key')
      .on('workflows')
      .column('name')
      .unique()
      .where(sql.ref('deleted_at'), 'is', null)
      .execute();

    await db.schema
      .createTable('workflow_versions')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('plan', 'jsonb', (c) => c.notNull())
      .addColumn('pins', 'jsonb', (c) => c.notNull())
      .addColumn('risk', 'text', (c) => c.notNull())
      .addColumn('note', 'text', (c) => c.notNull())
      .addColumn('source_run_id', 'text', (c) => c.references('runs.id').onDelete('set null'))
      .addColumn('created_by_id', 'text', (c) => c.notNull())
      .addColumn('created_by_name', 'text')
      .addColumn('created_by_channel', 'text', (c) => c.notNull())
      // Operation id of the write that added it: a repeat after a lost answer finds its own version, not a race.
      .addColumn('op', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addUniqueConstraint('workflow_versions_workflow_version_key', ['workflow_id', 'version'])
      .execute();

    await db.schema
      .createTable('workflow_schedules')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
      .addColumn('cron', 'text', (c) => c.notNull())
      .addColumn('time_zone', 'text', (c) => c.notNull())
      .addColumn('catch_up', 'text', (c) => c.notNull())
      .addColumn('overlap', 'text', (c) => c.notNull())
      .addColumn('paused', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('next_fire_at', 'timestamptz')
      .addColumn('created_by_id', 'text', (c) => c.notNull())
      .addColumn('created_by_name', 'text')
      .addColumn('created_by_channel', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addColumn('deleted_at', 'timestamptz')
      .execute();
    // The scheduler's tick reads only schedules that can fire, earliest first.
    await db.schema
      .createIndex('workflow_schedules_due_idx')
      .on('workflow_schedules')
      .columns(['next_fire_at', 'id'])
      .where(sql<boolean>`NOT paused AND deleted_at IS NULL`)
      .execute();
    await db.schema
      .createIndex('workflow_schedules_workflow_idx')
      .on('workflow_schedules')
      .column('workflow_id')
      .execute();

    await db.schema
      .createTable('workflow_fires')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
      .addColumn('schedule_id', 'text', (c) => c.references('workflow_schedules.id').onDelete('set null'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('scheduled_at', 'timestamptz', (c) => c.notNull())
      .addColumn('started_at', 'timestamptz', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('note', 'text', (c) => c.notNull())
      .addColumn('run_id', 'text', (c) => c.references('runs.id').onDelete('set null'))
      // The process that claimed it: a repeat of its claim finds its own fire, another process's claim does not.
      .addColumn('claimed_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .addForeignKeyConstraint(
        'workflow_fires_version_fkey',
        ['workflow_id', 'version'],
        'workflow_versions',
        ['workflow_id', 'version'],
        (c) => c.onDelete('cascade'),
      )
      .execute();
    // Exactly one fire per (workflow, scheduled time), whatever else goes wrong; a "run now" has no schedule.
    await db.schema
      .createIndex('workflow_fires_scheduled_key')
      .on('workflow_fires')
      .columns(['workflow_id', 'scheduled_at'])
      .unique()
      .where(sql.ref('schedule_id'), 'is not', null)
      .execute();
    // "Is a fire of this workflow still running" starts from the active runs and finds their fires.
    await db.schema
      .createIndex('workflow_fires_run_idx')
      .on('workflow_fires')
      .column('run_id')
      .where(sql.ref('run_id'), 'is not', null)
      .execute();
    await db.schema
      .createIndex('workflow_fires_workflow_idx')
      .on('workflow_fires')
      .columns(['workflow_id', 'started_at'])
      .execute();

    // A run that amends a workflow in words: approving its plan saves a version instead of running it.
    await db.schema
      .createTable('workflow_amendments')
      .addColumn('run_id', 'text', (c) => c.primaryKey().references('runs.id').onDelete('cascade'))
      .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
      .execute();
  },
  async down(db: AnyDb) {
    for (const table of [
      'workflow_amendments',
      'workflow_fires',
      'workflow_schedules',
      'workflow_versions',
      'workflows',
    ]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
