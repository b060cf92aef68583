/**
 * Dashboard sessions in the database (all their SQL): started by using a sign-in link, read on every request, ended
 * by signing out (one session, or every session of the person), and ended when the person is seen without an
 * approver role a session holds. Rows hold only a hash of the session id the cookie carries.
 */
import { sql, type Kysely, type SqlBool } from 'kysely';
import { consumeDashboardLink, type LinkPerson } from './dashboard-queries.ts';
import { toJsonText } from './json-text.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/**
 * Uses a sign-in link and starts the session it opens, in one transaction: the person signed in, or null (the link
 * is used, expired or unknown, and no session starts).
 */
export function startSessionByLink(
  db: Db,
  s: { tokenHash: string; sessionHash: string; at: Date; expiresAt: Date },
): Promise<LinkPerson | null> {
  return db.transaction().execute(async (tx) => {
    const person = await consumeDashboardLink(tx, s.tokenHash, s.at);
    if (!person) return null;
    await tx
      .insertInto('dashboard_sessions')
      .values({
        session_hash: s.sessionHash,
        channel: person.channel,
        user_id: person.id,
        user_name: person.name,
        approver_roles: toJsonText(person.approverRoles),
        expires_at: s.expiresAt,
      })
      .execute();
    return person;
  });
}

/** The person of a session that is neither ended nor expired at `at`; null otherwise. */
export async function readSession(db: Db, sessionHash: string, at: Date): Promise<LinkPerson | null> {
  const row = await db
    .selectFrom('dashboard_sessions')
    .select(['channel', 'user_id', 'user_name', 'approver_roles'])
    .where('session_hash', '=', sessionHash)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', at)
    .executeTakeFirst();
  if (!row) return null;
  const roles = Array.isArray(row.approver_roles) ? row.approver_roles.filter((r) => typeof r === 'string') : [];
  return { channel: row.channel, id: row.user_id, name: row.user_name, approverRoles: roles };
}

/**
 * Ends a session; with `everywhere`, every live session of its person too. Returns how many ended (0 when the
 * session was unknown or already over: then nothing else is ended either).
 */
export async function endSessions(db: Db, sessionHash: string, at: Date, everywhere: boolean): Promise<number> {
  const live = db
    .updateTable('dashboard_sessions')
    .set({ ended_at: at })
    .where('ended_at', 'is', null)
    .where('expires_at', '>', at);
  if (!everywhere)
    return Number((await live.where('session_hash', '=', sessionHash).executeTakeFirst()).numUpdatedRows);
  // One statement: the person is the one whose live session this is, so an ended or stolen-and-ended id ends nothing.
  const res = await live
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('dashboard_sessions as mine')
          .select(sql`1`.as('one'))
          .where('mine.session_hash', '=', sessionHash)
          .where('mine.ended_at', 'is', null)
          .where('mine.expires_at', '>', at)
          .whereRef('mine.channel', '=', 'dashboard_sessions.channel')
          .whereRef('mine.user_id', '=', 'dashboard_sessions.user_id'),
      ),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * Ends the person's live sessions that hold an approver role they were just seen without (a platform tells a
 * person's roles only with an action): a role taken away ends the sessions it gave more sight to. Returns how many.
 */
export async function endSessionsBeyondRoles(
  db: Db,
  person: { channel: string; id: string },
  roles: readonly string[],
  at: Date,
): Promise<number> {
  const res = await db
    .updateTable('dashboard_sessions')
    .set({ ended_at: at })
    .where('channel', '=', person.channel)
    .where('user_id', '=', person.id)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', at)
    .where(sql<SqlBool>`not (approver_roles <@ ${toJsonText([...roles])}::jsonb)`)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
