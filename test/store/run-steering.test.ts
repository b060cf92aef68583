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

  it('creates a run for a message unless its conversation has an active run, which it returns instead (one write)', async () => {
    const conversation = { channel: 'slack', key: 'C1:200.1' };
    const first = createNewRun({ conversation, leaseMs: 60_000, deliveryId: `Ev-${conversation.key}-1` });
    await store.setReviewPreference(first.requester, 'none', first.at);
    // The run as stored comes back with the write (its requester's preference too): no read of it needed after.
    const made = await store.createRunUnlessActive(first);
    expect(made).toEqual({ created: true, run: await store.getRun(first.id) });
    expect(made.run).toMatchObject({ status: 'planning', revision: 0, plan: null, reviewPreference: 'none' });
    // Repeated after its answer was lost: its own run, counted created (not a reply to itself), read again by whoever
    // needs it.
    expect(await store.createRunUnlessActive({ ...first, deliveryId: undefined })).toEqual({ created: true });
    expect(await store.getRun(first.id)).toMatchObject({ status: 'planning', request: first.request });
    expect((await store.listEvents(first.id)).map((e) => e.type)).toEqual(['requested']);

    // A second message while the first is planned: a reply to it, its mention claimed, no run created.
    const second = createNewRun({ conversation, deliveryId: `Ev-${conversation.key}-2` });
    const found = await store.createRunUnlessActive(second);
    expect(found).toMatchObject({ created: false, active: { id: first.id, status: 'planning' } });
    expect(found.active).toEqual(await store.findActiveRun(conversation));
    expect(await store.getRun(second.id)).toBeNull();
    // The same mention again (a redelivery): handled before, neither created nor a reply.
    expect(await store.createRunUnlessActive({ ...second, id: `${second.id}-again` })).toEqual({ created: false });

    await store.transition(first.id, ['planning'], 'completed');
    await store.storeReport(first.id, 'Done.', 'completed', new Date('2026-11-30T10:01:00Z'));
    // Read by the same write: the conversation's earlier turns, as the planner would read them for the new run.
    const third = createNewRun({ conversation, at: new Date('2026-11-30T10:02:00Z') });
    const created = await store.createRunUnlessActive(third, { earlierTurns: 5 });
    expect(created).toEqual({
      created: true,
      run: await store.getRun(third.id),
      earlierTurns: await store.earlierTurns(third.id, 5),
    });
    expect(created.earlierTurns).toMatchObject([{ runId: first.id, reply: 'Done.', status: 'completed' }]);
    expect((await store.findActiveRun(conversation))?.id).toBe(third.id);
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

  it('stores whether a person’s cards suggest breakpoints, beside (and without) a review preference', async () => {
    const bob = { id: 'U8', channel: 'slack' };
    expect(await store.getBreakpointSuggestions(bob)).toBe(true);
    await store.setBreakpointSuggestions(bob, false, new Date());
    expect(await store.getBreakpointSuggestions(bob)).toBe(false);
    expect(await store.getReviewPreference(bob)).toBeNull();
    await store.setReviewPreference(bob, 'all', new Date());
    expect(await store.getBreakpointSuggestions(bob)).toBe(false);
    await store.setBreakpointSuggestions(bob, true, new Date());
    expect([await store.getBreakpointSuggestions(bob), await store.getReviewPreference(bob)]).toEqual([true, 'all']);
  });

  it('reads a person’s latest intervention per tool, and whether a run using the tool completed after it', async () => {
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 30, 10, minute));
    const u1 = { id: 'U1', name: 'Ada', channel: 'slack' };
    const stopped = createNewRun({ requester: u1 });
    await store.createRun(stopped);
    const ev = (actorId: string, action: string, tools: string[], when: Date) =>
      store.appendEvent(stopped.id, 'intervened', { actorId, channel: 'slack', action, tools }, when);
    await ev('U1', 'pause', ['fs.write_file'], at(1));
    await ev('U1', 'stop', ['fs.write_file', 'web.fetch'], at(2));
    await ev('U2', 'edit', ['web.fetch'], at(9));
    await ev('U1', 'stop', ['x.old'], new Date(Date.UTC(2026, 9, 1)));
    // The run stopped on completes later (after a resume): it is not "another run that went fine".
    await store.pinTools(stopped.id, [{ tool: 'fs.write_file', fingerprint: 'f', definition: {} }], at(0));
    await store.transition(stopped.id, ['planning'], 'completed', { at: at(8) });
    const completed = async (tool: string, when: Date, requester = u1) => {
      const run = createNewRun({ requester });
      await store.createRun(run);
      await store.pinTools(run.id, [{ tool, fingerprint: 'f', definition: {} }], when);
      await store.transition(run.id, ['planning'], 'completed', { at: when });
    };
    await completed('web.fetch', at(5));
    await completed('fs.write_file', at(0));
    await completed('fs.write_file', at(6), { id: 'U2', name: 'Bob', channel: 'slack' });
    const tools = ['fs.write_file', 'web.fetch', 'x.old', 'x.never'];
    expect(await store.interventionSignals(u1, tools, at(0))).toEqual({
      'fs.write_file': { action: 'stop', at: at(2), completedSince: false },
      'web.fetch': { action: 'stop', at: at(2), completedSince: true },
    });
    expect(await store.interventionSignals(u1, [], at(0))).toEqual({});
  });
});
