/**
 * Questions MCP servers asked mid-call (`elicitation/create`), one row each, with the step whose call asked: the
 * server's words and form, when it was asked and declined by default, and how it ended (answered, declined, cancelled,
 * timed out, refused for asking a secret, stopped with the run), who answered and what was sent back.
 */
import { sql, type Kysely, type Migration } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Creates server_questions. */
export const serverQuestions: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('server_questions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('step_id', 'text', (c) => c.notNull())
      .addColumn('server', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('requested_schema', 'jsonb', (c) => c.notNull())
      .addColumn('asked_at', 'timestamptz', (c) => c.notNull())
      .addColumn('deadline_at', 'timestamptz', (c) => c.notNull())
      .addColumn('outcome', 'text')
      .addColumn('content', 'jsonb')
      .addColumn('answered_by', 'jsonb')
      .addColumn('reason', 'text')
      .addColumn('closed_at', 'timestamptz')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createIndex('server_questions_run')
      .on('server_questions')
      .columns(['run_id', 'asked_at'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('server_questions').execute();
  },
};
