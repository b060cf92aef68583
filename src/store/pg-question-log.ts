/**
 * Servers' questions over Kysely (migration 0025): one row per question, closed once by a conditional update, so an
 * answer, a deadline and a stop racing each other (in one process or several) end it exactly once.
 */
import type { ColumnType, Kysely } from 'kysely';
import type { QuestionClose, QuestionLog, QuestionOutcome, StoredQuestion } from '../engine/server-questions.ts';
import type { Actor, Json } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';

/** One question (migration 0025). */
export interface ServerQuestionsTable {
  id: string;
  run_id: string;
  step_id: string;
  server: string;
  message: string;
  requested_schema: ColumnType<Json, string, string>;
  asked_at: Date;
  deadline_at: Date;
  outcome: string | null;
  content: ColumnType<Json | null, string | null, string | null>;
  answered_by: ColumnType<Actor | null, string | null, string | null>;
  reason: string | null;
  closed_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

type Db = Kysely<DatabaseSchema & { server_questions: ServerQuestionsTable }>;

/** `QuestionLog` on PostgreSQL or PGlite. */
export class PgQuestionLog implements QuestionLog {
  private readonly db: Db;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db.withTables<{ server_questions: ServerQuestionsTable }>();
  }

  async addQuestion(q: Parameters<QuestionLog['addQuestion']>[0]): Promise<void> {
    await this.db
      .insertInto('server_questions')
      .values({
        id: q.id,
        run_id: q.runId,
        step_id: q.stepId,
        server: q.server,
        message: q.message,
        requested_schema: JSON.stringify(q.requestedSchema),
        asked_at: q.askedAt,
        deadline_at: q.deadlineAt,
        outcome: null,
        content: null,
        answered_by: null,
        reason: null,
        closed_at: null,
      })
      .execute();
  }

  async closeQuestion(id: string, close: QuestionClose, at: Date): Promise<boolean> {
    const done = await this.db
      .updateTable('server_questions')
      .set({
        outcome: close.outcome,
        content: close.content === undefined ? null : JSON.stringify(close.content),
        answered_by: close.by ? JSON.stringify(close.by) : null,
        reason: close.reason ?? null,
        closed_at: at,
      })
      .where('id', '=', id)
      .where('outcome', 'is', null)
      .returning('id')
      .executeTakeFirst();
    return done !== undefined;
  }

  async getQuestion(id: string): Promise<StoredQuestion | null> {
    const row = await this.db.selectFrom('server_questions').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toQuestion(row) : null;
  }

  async questionsOf(runId: string): Promise<StoredQuestion[]> {
    const rows = await this.db
      .selectFrom('server_questions')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('asked_at')
      .execute();
    return rows.map(toQuestion);
  }
}

function toQuestion(row: {
  id: string;
  run_id: string;
  step_id: string;
  server: string;
  message: string;
  requested_schema: Json;
  asked_at: Date;
  deadline_at: Date;
  outcome: string | null;
  content: Json | null;
  answered_by: Actor | null;
  reason: string | null;
  closed_at: Date | null;
}): StoredQuestion {
  return {
    id: row.id,
    runId: row.run_id,
    stepId: row.step_id,
    server: row.server,
    message: row.message,
    requestedSchema: row.requested_schema,
    askedAt: row.asked_at,
    deadlineAt: row.deadline_at,
    outcome: row.outcome as QuestionOutcome | null,
    content: row.content,
    answeredBy: row.answered_by,
    reason: row.reason,
    closedAt: row.closed_at,
  };
}
