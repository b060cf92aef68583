/**
 * Queries over a conversation's earlier turns: what was asked and answered before a run, and an earlier step's
 * output read on demand. Only runs of the asking run's own conversation are ever seen.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { EarlierOutput, EarlierTurn } from '../engine/ports.ts';
import type { Json, RunStatus } from '../engine/types.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/** The runs of `runId`'s conversation created before it, newest first, at most `limit`. */
function earlierRuns(db: Db, runId: string, limit: number) {
  return db
    .selectFrom('runs as me')
    .innerJoin('runs as r', (join) =>
      join
        .onRef('r.channel', '=', 'me.channel')
        .onRef('r.conversation_key', '=', 'me.conversation_key')
        .on((eb) =>
          eb.or([
            eb('r.created_at', '<', eb.ref('me.created_at')),
            eb.and([eb('r.created_at', '=', eb.ref('me.created_at')), eb('r.id', '<', eb.ref('me.id'))]),
          ]),
        ),
    )
    .where('me.id', '=', runId)
    .orderBy('r.created_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(limit);
}

/** One statement: the earlier runs with, per step that succeeded, the size of its latest output (measured here). */
export async function earlierTurns(db: Db, runId: string, limit: number): Promise<EarlierTurn[]> {
  const runs = await withTurnColumns(earlierRuns(db, runId, limit)).execute();
  return runs.map(toEarlierTurn);
}

/**
 * The turns a new run at `at` (not stored yet) would find before it in `conversation`, as a query (for the statement
 * that creates the run); rows as `toEarlierTurn` takes them.
 */
export function earlierTurnsBefore(
  db: Db,
  run: { id: string; conversation: { channel: string; key: string }; at: Date },
  limit: number,
) {
  const runs = db
    .selectFrom('runs as r')
    .where('r.channel', '=', run.conversation.channel)
    .where('r.conversation_key', '=', run.conversation.key)
    .where((eb) =>
      eb.or([eb('r.created_at', '<', run.at), eb.and([eb('r.created_at', '=', run.at), eb('r.id', '<', run.id)])]),
    )
    .orderBy('r.created_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(limit);
  return withTurnColumns(runs);
}

/** What a turn is read as: the run's words and reply, and per step that succeeded the size of its latest output. */
function withTurnColumns<QB extends SelectQueryBuilder<DatabaseSchema & { r: DatabaseSchema['runs'] }, 'r', object>>(
  qb: QB,
) {
  return qb.select((eb) => [
    'r.id',
    'r.request',
    'r.status',
    'r.report',
    'r.created_at',
    jsonArrayFrom(
      eb
        .selectFrom('step_attempts as a')
        .select(['a.step_id as stepId', sql<number>`max(octet_length(a.output::text))`.as('bytes')])
        .whereRef('a.run_id', '=', 'r.id')
        .where('a.status', '=', 'succeeded')
        .groupBy('a.step_id')
        .orderBy('a.step_id'),
    ).as('outputs'),
  ]);
}

/** A turn from its row (its time as a `Date` or, read back from JSON, as text). */
export function toEarlierTurn(r: {
  id: string;
  request: string;
  status: string;
  report: string | null;
  created_at: Date | string;
  outputs: { stepId: string; bytes: number | string }[];
}): EarlierTurn {
  return {
    runId: r.id,
    request: r.request,
    status: r.status as RunStatus,
    reply: r.report,
    outputs: r.outputs.map((o) => ({ stepId: o.stepId, bytes: Number(o.bytes) })),
    createdAt: new Date(r.created_at),
  };
}

export async function earlierOutput(
  db: Db,
  runId: string,
  turn: number,
  stepId: string,
): Promise<EarlierOutput | null> {
  if (!Number.isInteger(turn) || turn < 1) return null;
  const run = await earlierRuns(db, runId, 1)
    .offset(turn - 1)
    .select('r.id')
    .executeTakeFirst();
  if (!run) return null;
  const row = await db
    .selectFrom('step_attempts')
    .select('output')
    .where('run_id', '=', run.id)
    .where('step_id', '=', stepId)
    .where('status', '=', 'succeeded')
    .orderBy('attempt', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.output == null ? null : { runId: run.id, stepId, output: row.output as Json };
}
