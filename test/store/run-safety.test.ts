import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
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

  it('token budgets: concurrent reservations never exceed the run budget; both budgets move together', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const ada = { id: `U-${run.id}`, channel: 'slack' };
    const caps = { perRun: 100, perUserPerDay: 1000 };
    const results = await Promise.all(
      Array.from({ length: 10 }, () => store.reserveTokens(run.id, ada, 30, caps, '2026-11-30')),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(3);
    expect(results.filter((r) => r === 'run')).toHaveLength(7);
    const other = createNewRun();
    await store.createRun(other);
    const roomy = { perRun: 5000, perUserPerDay: 1000 };
    expect(await store.reserveTokens(other.id, ada, 950, roomy, '2026-11-30')).toBe('user');
    // The refused reservation took nothing from the other run's budget.
    expect(await store.reserveTokens(other.id, ada, 900, roomy, '2026-11-30')).toBe('ok');
    expect(await store.reserveTokens(other.id, ada, 100, roomy, '2026-11-30')).toBe('user');
    expect(await store.reserveTokens(other.id, ada, 100, roomy, '2026-12-01')).toBe('ok');
    await store.adjustTokens(other.id, ada, -150, '2026-11-30');
    expect(await store.reserveTokens(other.id, ada, 100, roomy, '2026-11-30')).toBe('ok');
  });

  it('a token correction moves both counters, and never below zero', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const bo = { id: `U-${run.id}`, channel: 'slack' };
    const caps = { perRun: 5000, perUserPerDay: 5000 };
    expect(await store.reserveTokens(run.id, bo, 400, caps, '2026-12-01')).toBe('ok');
    await store.adjustTokens(run.id, bo, -150, '2026-12-01');
    const counters = async () => {
      const r = await sql<{ n: number }>`select tokens_used as n from runs where id = ${run.id}`.execute(database.db);
      const u = await sql<{ n: number }>`
        select tokens as n from user_daily_tokens where user_id = ${bo.id} and day = '2026-12-01'
      `.execute(database.db);
      return [r.rows[0]?.n, u.rows[0]?.n];
    };
    expect(await counters()).toEqual([250, 250]);
    await store.adjustTokens(run.id, bo, -1000, '2026-12-01');
    expect(await counters()).toEqual([0, 0]);
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
});
