import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun } from './builders.ts';

describe.each(['postgres', 'pglite'] as const)("a running attempt's latest progress on %s", (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());
  const at = (s: number) => new Date(Date.UTC(2026, 11, 6, 9, 0, s));

  it('keeps the newest report while the attempt runs, and ignores one that arrives after it ended', async () => {
    const run = createNewRun({ at: at(0) });
    await store.createRun(run);
    const step = { runId: run.id, stepId: 'slow', attempt: 1 };
    await store.recordStepStarted({ ...step, revision: 0, args: {}, at: at(1) });
    await store.recordProgress({ ...step, progress: { progress: 1, total: 4 }, at: at(2) });
    await store.recordProgress({ ...step, progress: { progress: 2, total: 4, message: 'copying' }, at: at(3) });
    expect((await store.listStepAttempts(run.id))[0]?.progress).toEqual({ progress: 2, total: 4, message: 'copying' });

    await store.recordStepEnded({ ...step, status: 'succeeded', output: {}, error: null, at: at(4), durationMs: 3000 });
    await store.recordProgress({ ...step, progress: { progress: 3, total: 4 }, at: at(5) });
    expect((await store.listStepAttempts(run.id))[0]?.progress).toEqual({ progress: 2, total: 4, message: 'copying' });
  });
});
