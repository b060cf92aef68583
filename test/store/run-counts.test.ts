/**
 * The figures `/metrics` reads from the database: runs awaiting an owner are exactly those a process would take over
 * (`claimOrphanedRuns`): unfinished or owing a report, with no live lease; not a held run, nor one that ended and
 * owes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun, createRevisionPlan } from './builders.ts';

const at = new Date('2026-11-30T10:00:00.000Z');
const LONG = 60_000;

describe.each(['postgres', 'pglite'] as const)('runs awaiting an owner, on %s', (kind) => {
  let database: TestDatabase;
  let a: PgRunStore;
  let b: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    a = new PgRunStore(database.db);
    b = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  async function heldRun(): Promise<string> {
    const run = createNewRun({ leaseMs: LONG });
    await a.createRun(run);
    await a.saveRevision(run.id, 0, createRevisionPlan(), 'planned', at);
    await a.transition(run.id, ['planning'], 'running', { at });
    return run.id;
  }
  const lapse = (runId: string) =>
    database.db
      .updateTable('runs')
      .set({ lease_expires_at: new Date(Date.now() - 60_000) })
      .where('id', '=', runId)
      .execute();

  it('counts the runs a process would take over, and none that are held or owe nothing', async () => {
    expect(await a.runsAwaitingOwner()).toBe(0);
    const lapsed = await heldRun();
    const released = await heldRun();
    const owing = await heldRun();
    const done = await heldRun();
    expect(await a.runsAwaitingOwner()).toBe(0);

    await lapse(lapsed);
    await a.releaseRun(released);
    // Ended owing its report (a crash before it was sent), and ended with its report sent.
    await a.transition(owing, ['running'], 'completed', { at, reportDue: true });
    await lapse(owing);
    await a.transition(done, ['running'], 'completed', { at });
    await lapse(done);
    expect(await a.runsAwaitingOwner()).toBe(3);

    const claimed = await b.claimOrphanedRuns(LONG, 100, []);
    expect(claimed.map((c) => c.run.id).sort()).toEqual([lapsed, released, owing].sort());
    expect(await a.runsAwaitingOwner()).toBe(0);
  });
});
