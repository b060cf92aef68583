/** Queries for safety: pinned tool definitions and token budgets (judged by conditional updates). */
import { sql, type Kysely } from 'kysely';
import type { PinnedTool } from '../engine/ports.ts';
import type { Actor, Json } from '../engine/types.ts';
import { toJsonText } from './json-text.ts';
import type { DatabaseSchema } from './schema.ts';

type Db = Kysely<DatabaseSchema>;

/** Pins definitions for a run; pinning a tool again (after a person approved its change) replaces the pin. */
export async function pinTools(db: Db, runId: string, pins: readonly PinnedTool[], at: Date): Promise<void> {
  if (pins.length === 0) return;
  await db
    .insertInto('tool_pins')
    .values(
      pins.map((p) => ({
        run_id: runId,
        tool: p.tool,
        fingerprint: p.fingerprint,
        definition: toJsonText(p.definition),
        created_at: at,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['run_id', 'tool']).doUpdateSet((eb) => ({
        fingerprint: eb.ref('excluded.fingerprint'),
        definition: eb.ref('excluded.definition'),
      })),
    )
    .execute();
}

export async function listPins(db: Db, runId: string): Promise<PinnedTool[]> {
  const rows = await db
    .selectFrom('tool_pins')
    .select(['tool', 'fingerprint', 'definition'])
    .where('run_id', '=', runId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ tool: r.tool, fingerprint: r.fingerprint, definition: r.definition as Json }));
}

/**
 * Takes `tokens` from the run's budget and the person's budget for `day`, both or neither, in one transaction
 * of conditional updates: the database judges concurrent calls. Returns which budget said no, if any.
 */
export async function reserveTokens(
  db: Db,
  op: string,
  runId: string,
  actor: Actor,
  tokens: number,
  caps: { perRun: number; perUserPerDay: number },
  day: string,
): Promise<'ok' | 'run' | 'user'> {
  return db
    .transaction()
    .execute(async (tx) => {
      // A refused reservation rolls back, so an operation on the ledger means this one already went through.
      if (!(await recordOperation(tx, op))) return 'ok';
      const run = await tx
        .updateTable('runs')
        .set({ tokens_used: sql`tokens_used + ${tokens}` })
        .where('id', '=', runId)
        .where(sql<boolean>`tokens_used + ${tokens} <= ${caps.perRun}`)
        .returning('id')
        .executeTakeFirst();
      if (!run) return 'run';
      const user = await tx
        .insertInto('user_daily_tokens')
        .values({ channel: actor.channel, user_id: actor.id, day, tokens: sql`${tokens}::integer` as never })
        .onConflict((oc) =>
          oc
            .columns(['channel', 'user_id', 'day'])
            .doUpdateSet({ tokens: sql`user_daily_tokens.tokens + ${tokens}` })
            .where(sql<boolean>`user_daily_tokens.tokens + ${tokens} <= ${caps.perUserPerDay}`),
        )
        .returning('id')
        .executeTakeFirst();
      if (!user || tokens > caps.perUserPerDay) {
        // Undo the run's share: both budgets move together or not at all.
        throw new BudgetRefused();
      }
      return 'ok';
    })
    .catch((err: unknown) => {
      if (err instanceof BudgetRefused) return 'user' as const;
      throw err;
    });
}

/**
 * Corrects both counters once the real usage is known (it may be less or more than reserved), once per `op`: one
 * statement, whose updates run only when its note in the ledger is new.
 */
export async function adjustTokens(
  db: Db,
  op: string,
  runId: string,
  actor: Actor,
  delta: number,
  day: string,
): Promise<void> {
  if (delta === 0) return;
  await sql`
    with noted as (
      insert into token_operations (op) values (${op}) on conflict (op) do nothing returning op
    ), run as (
      update runs set tokens_used = greatest(0, tokens_used + ${delta})
      where id = ${runId} and exists (select 1 from noted)
    )
    update user_daily_tokens set tokens = greatest(0, tokens + ${delta})
    where channel = ${actor.channel} and user_id = ${actor.id} and day = ${day} and exists (select 1 from noted)
  `.execute(db);
}

/** Records a platform event as handled; false when it was handled before (a redelivery), not by this `op`. */
export async function claimInbound(db: Db, op: string, key: string, at: Date): Promise<boolean> {
  const row = await db
    .insertInto('inbound_events')
    .values({ key, op, created_at: at })
    // The no-op update returns the row only when it is this claim's own, repeated after its answer was lost.
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({ key: (eb) => eb.ref('excluded.key') })
        .where('inbound_events.op', '=', op),
    )
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Notes `op` in the token ledger; false when it is already there (the operation was applied before). */
async function recordOperation(tx: Db, op: string): Promise<boolean> {
  const row = await tx
    .insertInto('token_operations')
    .values({ op })
    .onConflict((oc) => oc.column('op').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

class BudgetRefused extends Error {}
