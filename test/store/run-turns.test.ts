import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../src/engine/types.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun } from './builders.ts';

describe.each(['postgres', 'pglite'] as const)("a conversation's earlier turns on %s", (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  const thread = { channel: 'slack', key: 'C1:1700000000.000100' };
  const elsewhere = { channel: 'slack', key: 'C2:1700000000.000200' };
  const minute = (m: number) => new Date(Date.UTC(2026, 11, 3, 9, m));

  async function turn(conversation: typeof thread, m: number, request: string, output?: Json, reply?: string) {
    const run = createNewRun({ conversation, at: minute(m), request });
    await store.createRun(run);
    if (output !== undefined) {
      await store.recordStepStarted({ runId: run.id, stepId: 's1', attempt: 1, revision: 0, args: {}, at: minute(m) });
      const end = { status: 'succeeded' as const, output, error: null, at: minute(m), durationMs: 5 };
      await store.recordStepEnded({ runId: run.id, stepId: 's1', attempt: 1, ...end });
    }
    if (reply !== undefined) {
      await store.transition(run.id, ['planning'], 'completed');
      await store.setReport(run.id, reply, minute(m));
    }
    return run.id;
  }

  it('gives the words, replies and output sizes of earlier runs of the same conversation, newest first', async () => {
    const page = { content: [{ type: 'text', text: 'p'.repeat(10_000) }] };
    const first = await turn(thread, 1, 'read the page', page, 'It is long.');
    await turn(elsewhere, 2, 'something else entirely', { content: [] }, 'Other.');
    const second = await turn(thread, 3, 'and the weather?', undefined, 'Sunny.');
    const now = await turn(thread, 4, 'what was in the middle of that page?');

    const turns = await store.earlierTurns(now, 5);
    expect(turns.map((t) => [t.request, t.reply, t.status])).toEqual([
      ['and the weather?', 'Sunny.', 'completed'],
      ['read the page', 'It is long.', 'completed'],
    ]);
    expect(turns[1]?.runId).toBe(first);
    expect(turns[0]?.runId).toBe(second);
    expect(turns[1]?.outputs).toEqual([{ stepId: 's1', bytes: expect.any(Number) as number }]);
    expect(turns[1]?.outputs[0]?.bytes).toBeGreaterThan(10_000);
    expect(await store.earlierTurns(now, 1)).toHaveLength(1);
    expect(await store.earlierTurns(first, 5)).toEqual([]);
  });

  it("reads an earlier step's output by turn, only within the asking run's conversation", async () => {
    const secret = { content: [{ type: 'text', text: 'the other thread said this' }] };
    await turn(elsewhere, 10, 'private work', secret, 'Done.');
    const mine = await turn(thread, 11, 'look something up', { content: [{ type: 'text', text: 'mine' }] }, 'Found.');
    const now = await turn(thread, 12, 'show me what you found');

    expect(await store.earlierOutput(now, 1, 's1')).toEqual({
      runId: mine,
      stepId: 's1',
      output: { content: [{ type: 'text', text: 'mine' }] },
    });
    // Turn 2 of this thread is older work of this thread, never the other thread's run made in between.
    const second = await store.earlierOutput(now, 2, 's1');
    expect(JSON.stringify(second)).not.toContain('the other thread said this');
    expect(await store.earlierOutput(now, 1, 'nope')).toBeNull();
    expect(await store.earlierOutput(now, 0, 's1')).toBeNull();
    expect(await store.earlierOutput(now, 99, 's1')).toBeNull();
  });
});
