/**
 * A run notes that it owes its report before it ends, and clears the note once the report was sent; a run that ended
 * with the note still set lost its report to a restart, and recovery finds it through a partial index that holds
 * only such runs. Runs that ended through the driver (`dispatchFinished`) but have no report lost theirs before this
 * migration: they are noted as owing it, so the next start reports them.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Adds `runs.report_due` and its partial index, and notes the reports already lost. */
export const reportDue: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('runs')
      .addColumn('report_due', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute();
    await db.schema
      .createIndex('runs_report_due_idx')
      .on('runs')
      .columns(['created_at', 'id'])
      .where(sql.ref('report_due'), '=', true)
      .execute();
    await sql`
      UPDATE runs SET report_due = true
      WHERE status IN ('completed', 'failed', 'stopped') AND report IS NULL
        AND EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = runs.id AND e.type = 'dispatchFinished')`.execute(db);
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('runs_report_due_idx').execute();
    await db.schema.alterTable('runs').dropColumn('report_due').execute();
  },
};
