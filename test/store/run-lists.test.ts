import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun, createRevisionPlan } from './builders.ts';

describe.each(['postgres', 'pglite'] as const)("a person's runs on %s", (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  it('lists only their own runs on their platform, newest first, active ones or all, with plans, within the limit', async () => {
    const grace = { id: 'U0GRACE', channel: 'slack' };
    const day = (d: number) => new Date(Date.UTC(2026, 10, d));
    const runs = [1, 2, 3, 4].map((d) => createNewRun({ requester: grace, at: day(d), request: `job ${d}` }));
    for (const run of runs) await store.createRun(run);
    await store.createRun(createNewRun({ requester: { id: 'U0OTHER', channel: 'slack' }, at: day(5) }));
    const terminal = { channel: 'console', key: 'console' };
    await store.createRun(
      createNewRun({ requester: { id: 'U0GRACE', channel: 'console' }, conversation: terminal, at: day(6) }),
    );
    await store.saveRevision(runs[1]!.id, 0, createRevisionPlan({ summary: 'Two' }), 'planned', day(2));
    await store.transition(runs[3]!.id, ['planning'], 'completed');
    await store.transition(runs[0]!.id, ['planning'], 'failed');

    const all = await store.listRunsOf(grace, { activeOnly: false, limit: 10 });
    expect(all.map((r) => [r.request, r.status])).toEqual([
      ['job 4', 'completed'],
      ['job 3', 'planning'],
      ['job 2', 'planning'],
      ['job 1', 'failed'],
    ]);
    expect(all[2]!.plan?.summary).toBe('Two');
    const active = await store.listRunsOf(grace, { activeOnly: true, limit: 10 });
    expect(active.map((r) => r.request)).toEqual(['job 3', 'job 2']);
    expect((await store.listRunsOf(grace, { activeOnly: false, limit: 2 })).map((r) => r.request)).toEqual([
      'job 4',
      'job 3',
    ]);
    expect(await store.listRunsOf({ id: 'U0NOBODY', channel: 'slack' }, { activeOnly: false, limit: 10 })).toEqual([]);
  });
});
