import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GrantedCap } from '../../src/engine/ports.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import * as safety from '../../src/store/run-safety.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun } from './builders.ts';

describe.each(['postgres', 'pglite'] as const)('safety queries on %s', (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  it('pins tool definitions per run; pinning again replaces the pin', async () => {
    const run = createNewRun();
    await store.createRun(run);
    await store.pinTools(
      run.id,
      [{ tool: 'fs.write', fingerprint: 'a', definition: { description: 'old' } }],
      new Date(),
    );
    await store.pinTools(
      run.id,
      [
        { tool: 'fs.write', fingerprint: 'b', definition: { description: 'new' } },
        { tool: 'fs.read', fingerprint: 'c', definition: {} },
      ],
      new Date(),
    );
    expect(await store.listPins(run.id)).toEqual([
      { tool: 'fs.write', fingerprint: 'b', definition: { description: 'new' } },
      { tool: 'fs.read', fingerprint: 'c', definition: {} },
    ]);
  });

  /** A reservation of exactly `tokens`, or none: the cap may not be lowered. */
  const take = (tokens: number) => ({ prompt: 0, output: tokens, minOutput: tokens });
  const verdict = (granted: GrantedCap) => (granted.ok ? 'ok' : granted.refusedBy);

  it('token budgets: concurrent reservations never exceed the run budget; both budgets move together', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const ada = { id: `U-${run.id}`, channel: 'slack' };
    const caps = { perRun: 100, perUserPerDay: 1000 };
    const results = await Promise.all(
      Array.from({ length: 10 }, () => store.reserveTokens(run.id, ada, take(30), caps, '2026-11-30')),
    );
    expect(results.map(verdict).filter((r) => r === 'ok')).toHaveLength(3);
    expect(results.map(verdict).filter((r) => r === 'run')).toHaveLength(7);
    const other = createNewRun();
    await store.createRun(other);
    const roomy = { perRun: 5000, perUserPerDay: 1000 };
    const reserve = async (tokens: number, day = '2026-11-30') =>
      verdict(await store.reserveTokens(other.id, ada, take(tokens), roomy, day));
    expect(await reserve(950)).toBe('user');
    // The refused reservation took nothing from the other run's budget.
    expect(await reserve(900)).toBe('ok');
    expect(await reserve(100)).toBe('user');
    expect(await reserve(100, '2026-12-01')).toBe('ok');
    await store.settleTokens({ runId: other.id, actor: ada, day: '2026-11-30', delta: -150, usage: null });
    expect(await reserve(100)).toBe('ok');
  });

  it('grants the largest cap both budgets hold, names the one that lowered it, and refuses below the least', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const cy = { id: `U-${run.id}`, channel: 'slack' };
    const want = { prompt: 100, output: 16_000, minOutput: 256 };
    const day = '2026-12-02';
    expect(await store.reserveTokens(run.id, cy, want, { perRun: 50_000, perUserPerDay: 90_000 }, day)).toEqual({
      ok: true,
      cap: 16_000,
    });
    // 16,100 used: the run has 3,900 left, the person 73,900.
    expect(await store.reserveTokens(run.id, cy, want, { perRun: 20_000, perUserPerDay: 90_000 }, day)).toEqual({
      ok: true,
      cap: 3_800,
      limitedBy: 'run',
    });
    // 20,000 used by both: the person has 1,000 left on a 21,000 budget.
    expect(await store.reserveTokens(run.id, cy, want, { perRun: 90_000, perUserPerDay: 21_000 }, day)).toEqual({
      ok: true,
      cap: 900,
      limitedBy: 'user',
    });
    expect(await store.reserveTokens(run.id, cy, want, { perRun: 21_300, perUserPerDay: 90_000 }, day)).toEqual({
      ok: false,
      refusedBy: 'run',
    });
    expect(await store.reserveTokens(run.id, cy, want, { perRun: 90_000, perUserPerDay: 21_300 }, day)).toEqual({
      ok: false,
      refusedBy: 'user',
    });
    const { rows } = await sql<{ n: number }>`select tokens_used as n from runs where id = ${run.id}`.execute(
      database.db,
    );
    expect(rows[0]?.n).toBe(21_000);
  });

  it('concurrent reservations with lowered caps share what is left and never pass the budget', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const dee = { id: `U-${run.id}`, channel: 'slack' };
    const caps = { perRun: 10_000, perUserPerDay: 1_000_000 };
    const want = { prompt: 100, output: 4_000, minOutput: 256 };
    const results = await Promise.all(
      Array.from({ length: 6 }, () => store.reserveTokens(run.id, dee, want, caps, '2026-12-03')),
    );
    const granted = results.flatMap((r) => (r.ok ? [r.cap] : []));
    // 4,100 + 4,100 + 1,800 (a cap lowered to the 1,700 left after its prompt): the whole budget, and no more.
    expect(granted.sort((x, y) => y - x)).toEqual([4_000, 4_000, 1_700]);
    const { rows } = await sql<{ n: number }>`select tokens_used as n from runs where id = ${run.id}`.execute(
      database.db,
    );
    expect(rows[0]?.n).toBe(10_000);
  });

  it('a reservation repeated after its answer was lost returns the same grant and charges once', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const eve = { id: `U-${run.id}`, channel: 'slack' };
    const caps = { perRun: 1_000, perUserPerDay: 1_000_000 };
    const want = { prompt: 100, output: 4_000, minOutput: 256 };
    const op = crypto.randomUUID();
    const first = await safety.reserveTokens(database.db, op, run.id, eve, want, caps, '2026-12-04');
    const again = await safety.reserveTokens(database.db, op, run.id, eve, want, caps, '2026-12-04');
    expect(first).toEqual({ ok: true, cap: 900, limitedBy: 'run' });
    expect(again).toEqual(first);
    const { rows } = await sql<{ n: number }>`select tokens_used as n from runs where id = ${run.id}`.execute(
      database.db,
    );
    expect(rows[0]?.n).toBe(1_000);
  });

  it('a settlement moves both counters (never below zero) and records the usage once', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const bo = { id: `U-${run.id}`, channel: 'slack' };
    const caps = { perRun: 5000, perUserPerDay: 5000 };
    const day = '2026-12-01';
    expect(await store.reserveTokens(run.id, bo, take(400), caps, day)).toEqual({ ok: true, cap: 400 });
    const usage = { role: 'planner' as const, model: 'm', inputTokens: 200, outputTokens: 50, at: new Date() };
    await store.settleTokens({ runId: run.id, actor: bo, day, delta: -150, usage });
    const counters = async () => {
      const r = await sql<{ n: number }>`select tokens_used as n from runs where id = ${run.id}`.execute(database.db);
      const u = await sql<{ n: number }>`
        select tokens as n from user_daily_tokens where user_id = ${bo.id} and day = ${day}
      `.execute(database.db);
      return [r.rows[0]?.n, u.rows[0]?.n];
    };
    expect(await counters()).toEqual([250, 250]);
    expect(await store.llmUsageForRun(run.id)).toMatchObject({ calls: 1, inputTokens: 200, outputTokens: 50 });
    // A repeat of the same settlement (its answer lost) changes nothing.
    const op = crypto.randomUUID();
    const refund = { runId: run.id, actor: bo, day, delta: -1000, usage: null };
    await safety.settleTokens(database.db, op, refund);
    await safety.settleTokens(database.db, op, { ...refund, delta: -1 });
    expect(await counters()).toEqual([0, 0]);
    expect(await store.llmUsageForRun(run.id)).toMatchObject({ calls: 1 });
  });

  const WEEK_MS = 7 * 24 * 3_600_000;

  it('forgets token ledger notes, handled event ids and spent decisions older than the cutoff; keeps the rest', async () => {
    const active = createNewRun();
    const ended = createNewRun();
    await store.createRun(active);
    await store.createRun(ended);
    await sql`UPDATE runs SET status = 'completed' WHERE id = ${ended.id}`.execute(database.db);
    const tag = active.id;
    // Old and new notes of each kind; "old" is eight days back by the database's clock.
    const old = sql`now() - interval '8 days'`;
    for (const [suffix, at] of [
      ['old', old],
      ['new', sql`now()`],
    ] as const) {
      await sql`INSERT INTO token_operations (op, created_at) VALUES (${`${tag}-${suffix}`}, ${at})`.execute(
        database.db,
      );
      await sql`INSERT INTO inbound_events (key, created_at) VALUES (${`${tag}-${suffix}`}, ${at})`.execute(
        database.db,
      );
      for (const [run, taken] of [
        [active.id, `${tag}-${suffix}-taken`],
        [active.id, null],
        [ended.id, null],
      ] as const) {
        await sql`INSERT INTO run_commands (run_id, command, taken_op, created_at)
                  VALUES (${run}, ${JSON.stringify({ suffix, taken })}::jsonb, ${taken}, ${at})`.execute(database.db);
      }
    }

    const pruned = await store.pruneLedgers(WEEK_MS);

    expect(pruned).toEqual({ tokenOperations: 1, inboundEvents: 1, runCommands: 2 });
    const left = async (table: 'token_operations' | 'inbound_events', column: 'op' | 'key') =>
      (
        await sql<{
          v: string;
        }>`SELECT ${sql.ref(column)} AS v FROM ${sql.table(table)} WHERE ${sql.ref(column)} LIKE ${`${tag}-%`}`.execute(
          database.db,
        )
      ).rows.map((r) => r.v);
    expect(await left('token_operations', 'op')).toEqual([`${tag}-new`]);
    expect(await left('inbound_events', 'key')).toEqual([`${tag}-new`]);
    const commands = await sql<{ command: { suffix: string; taken: string | null }; run_id: string }>`
      SELECT run_id, command FROM run_commands WHERE run_id IN (${active.id}, ${ended.id}) ORDER BY id`.execute(
      database.db,
    );
    expect(
      commands.rows.map((r) => [r.run_id === active.id ? 'active' : 'ended', r.command.suffix, r.command.taken]),
    ).toEqual([
      // An old decision nobody took yet, on a run still going: its owner will take it.
      ['active', 'old', null],
      ['active', 'new', `${tag}-new-taken`],
      ['active', 'new', null],
      ['ended', 'new', null],
    ]);
    // A repeat finds nothing more to forget.
    expect(await store.pruneLedgers(WEEK_MS)).toEqual({ tokenOperations: 0, inboundEvents: 0, runCommands: 0 });
  });
});

describe.each(['postgres', 'pglite'] as const)('inbound deliveries on %s', (kind) => {
  it('a delivery id is claimed once, even by concurrent claims', async () => {
    const database = await createTestDatabase(kind);
    try {
      const store = new PgRunStore(database.db);
      const claims = await Promise.all(Array.from({ length: 5 }, () => store.claimInbound('slack:Ev1', new Date())));
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await store.claimInbound('slack:Ev2', new Date())).toBe(true);
    } finally {
      await database.close();
    }
  });

  it('a mention and its run are stored together: one run per delivery, and a run that cannot be stored leaves the mention unclaimed', async () => {
    const database = await createTestDatabase(kind);
    try {
      const store = new PgRunStore(database.db);
      const at = new Date();
      const run = (id: string, request = 'do it') => ({
        id,
        conversation: { channel: 'slack', key: 'C1:1.0' },
        requester: { id: 'U1', channel: 'slack' },
        request,
        at,
        deliveryId: 'slack:EvMention',
      });
      // Two processes given the same mention: one run.
      const made = await Promise.all([store.createRun(run('r-1')), store.createRun(run('r-2'))]);
      expect(made.filter(Boolean)).toHaveLength(1);
      const stored = await database.db.selectFrom('runs').select('id').execute();
      expect(stored).toHaveLength(1);
      // The same write repeated (its answer lost) stands.
      expect(await store.createRun(run(stored[0]!.id))).toBe(true);
      // A run that fails to be stored takes its mention's claim down with it, so a redelivery can make the run.
      const failing = { ...run(stored[0]!.id, 'something else'), deliveryId: 'slack:EvOther' };
      await expect(store.createRun(failing)).rejects.toThrow(/already exists/);
      expect(await store.claimInbound('slack:EvOther', at)).toBe(true);
    } finally {
      await database.close();
    }
  });
});
