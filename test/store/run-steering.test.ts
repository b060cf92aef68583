import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun } from './builders.ts';

describe.each(['postgres', 'pglite'] as const)('steering queries on %s', (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  it('finds the newest unfinished run of a conversation, and none once it has finished', async () => {
    const conversation = { channel: 'slack', key: 'C1:100.1' };
    const older = createNewRun({ conversation, at: new Date(Date.UTC(2026, 0, 1)) });
    const newer = createNewRun({ conversation, at: new Date(Date.UTC(2026, 0, 2)) });
    await store.createRun(older);
    await store.createRun(newer);
    expect((await store.findActiveRun(conversation))?.id).toBe(newer.id);
    await store.transition(newer.id, ['planning'], 'completed');
    await store.transition(older.id, ['planning'], 'cancelled');
    expect(await store.findActiveRun(conversation)).toBeNull();
    expect(await store.findActiveRun({ channel: 'slack', key: 'other' })).toBeNull();
  });

  it('keeps approved risk and breakpoints on the run', async () => {
    const run = createNewRun();
    await store.createRun(run);
    await store.setApprovedRisk(run.id, 'medium', new Date());
    const breakpoints = [
      { stepId: 's2', when: 'after' as const },
      { stepId: 's3', when: 'before' as const },
    ];
    await store.setBreakpoints(run.id, breakpoints, new Date());
    expect(await store.getRun(run.id)).toMatchObject({ approvedRisk: 'medium', breakpoints });
  });

  it('stores one review preference per person and platform', async () => {
    const ada = { id: 'U7', channel: 'slack' };
    expect(await store.getReviewPreference(ada)).toBeNull();
    await store.setReviewPreference(ada, 'all', new Date());
    await store.setReviewPreference(ada, 'none', new Date());
    expect(await store.getReviewPreference(ada)).toBe('none');
    expect(await store.getReviewPreference({ id: 'U7', channel: 'discord' })).toBeNull();
  });

  it('counts a person’s interventions per tool from the event log', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const ev = (actorId: string, tools: string[]) =>
      store.appendEvent(run.id, 'intervened', { actorId, channel: 'slack', action: 'stop', tools }, new Date());
    await ev('U1', ['fs.write_file']);
    await ev('U1', ['fs.write_file', 'web.fetch']);
    await ev('U2', ['web.fetch']);
    expect(
      await store.countInterventions({ id: 'U1', channel: 'slack' }, ['fs.write_file', 'web.fetch', 'x.y']),
    ).toEqual({ 'fs.write_file': 2, 'web.fetch': 1 });
    expect(await store.countInterventions({ id: 'U1', channel: 'slack' }, [])).toEqual({});
  });
});
