/**
 * The brakes on delegation (issue 16): each judged and counted by one conditional statement in the database, so that
 * under real concurrency (several pools on PostgreSQL, one connection on PGlite) exactly the cap gets through, a
 * refusal by a later brake gives back what the earlier ones counted, and every refusal is recorded.
 */
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_DELEGATION_LIMITS,
  type DelegationLimits,
  type NewDelegation,
  type SpawnResult,
} from '../../src/engine/assistant/delegations.ts';
import type { Actor } from '../../src/engine/types.ts';
import { openDatabase, type StoreDatabase } from '../../src/store/database.ts';
import { PgDelegationStore } from '../../src/store/pg-delegation-store.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import type { DatabaseSchema } from '../../src/store/schema.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun } from './builders.ts';

const at = (minute: number) => new Date(Date.UTC(2026, 11, 3, 9, minute));
const limits = DEFAULT_DELEGATION_LIMITS;
/** Limits under which only the brake a test looks at can trip. */
const only = (brake: keyof DelegationLimits, cap: number): DelegationLimits => ({
  depth: 5,
  concurrency: 1_000,
  rounds: 1_000,
  messages: 1_000,
  [brake]: cap,
});

function person(): Actor {
  return { id: `U${randomUUID().slice(0, 8)}`, name: 'Ada', channel: 'slack' };
}

function conversation() {
  return { channel: 'slack', key: `C123:${randomUUID()}` };
}

/** A delegation to spawn; each call gets new ids, a new person and a new conversation unless given. */
function newDelegation(overrides: Partial<NewDelegation> = {}): NewDelegation {
  return {
    id: `del_${randomUUID()}`,
    childRunId: `run_${randomUUID()}`,
    parentRunId: null,
    conversation: conversation(),
    assistant: 'ops',
    requester: person(),
    task: 'Find the failing deploy and say why it failed.',
    ...overrides,
  };
}

const won = (results: SpawnResult[]) => results.filter((r) => r.ok);
const refused = (results: SpawnResult[]) => results.filter((r) => !r.ok);

describe.each(['postgres', 'pglite'] as const)('PgDelegationStore on %s', (kind) => {
  let database: TestDatabase;
  let runs: PgRunStore;
  let store: PgDelegationStore;
  // PostgreSQL: three more pools on the same database, as three processes would hold, so attempts really race.
  const others: StoreDatabase[] = [];
  let stores: PgDelegationStore[] = [];
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    runs = new PgRunStore(database.db);
    store = new PgDelegationStore(database.db);
    if (kind === 'postgres') {
      for (let i = 0; i < 3; i++) {
        const url = testDatabaseUrlFor(database.name);
        others.push(await openDatabase({ databaseUrl: url, dataDir: tmpdir(), maxConnections: 8 }));
      }
    }
    stores = [store, ...others.map((o) => new PgDelegationStore(o.db))];
  });
  afterAll(async () => {
    for (const o of others) await o.close();
    await database?.close();
  });

  /** `n` spawns sent at once, spread over the pools. */
  function spawnAtOnce(n: number, make: (i: number) => NewDelegation, l: DelegationLimits) {
    return Promise.all(
      Array.from({ length: n }, (_, i) => (stores[i % stores.length] ?? store).spawn(make(i), l, at(1))),
    );
  }

  /** The trips recorded about `subject`. */
  async function tripsOf(subject: string) {
    return (await store.trips(10_000)).filter((t) => t.subject === subject);
  }

  it('100 spawns by one person at once: exactly 10 run; ending one lets exactly one more in, once', async () => {
    const ada = person();
    const asked = Array.from({ length: 100 }, () => newDelegation({ requester: ada }));
    const first = await spawnAtOnce(100, (i) => asked[i] ?? newDelegation(), limits);
    expect(won(first)).toHaveLength(10);
    expect(refused(first)).toHaveLength(90);
    for (const r of refused(first)) expect(r).toEqual({ ok: false, brake: 'concurrency', limit: 10, count: 10 });
    const subject = `slack:${ada.id}`;
    expect(await tripsOf(subject)).toHaveLength(90);
    expect((await tripsOf(subject))[0]).toEqual({ brake: 'concurrency', subject, limit: 10, count: 10, at: at(1) });

    const ended = won(first)[0];
    if (!ended?.ok) throw new Error('a spawn won');
    expect(await store.endChild(ended.delegationId, 'The deploy failed on a missing secret.', at(2))).toBe(true);
    // Ending it again frees nothing more.
    expect(await store.endChild(ended.delegationId, 'a second reply', at(3))).toBe(false);
    const second = await spawnAtOnce(100, () => newDelegation({ requester: ada }), limits);
    expect(won(second)).toHaveLength(1);
    expect(await tripsOf(subject)).toHaveLength(189);
    const where = asked.find((d) => d.id === ended.delegationId)?.conversation ?? conversation();
    expect((await store.rounds(where, 'ops')).map((r) => r.reply)).toEqual(['The deploy failed on a missing secret.']);
  });

  it('100 spawns at once in one conversation to one Assistant: exactly 3 rounds, then the escalation material', async () => {
    const here = conversation();
    const results = await spawnAtOnce(
      100,
      (i) => newDelegation({ conversation: here, task: `Attempt ${i}: restart the stuck worker.` }),
      limits,
    );
    expect(
      won(results)
        .map((r) => (r.ok ? r.round : 0))
        .sort(),
    ).toEqual([1, 2, 3]);
    for (const r of refused(results)) expect(r).toEqual({ ok: false, brake: 'rounds', limit: 3, count: 3 });
    const subject = `slack:${here.key} with ops`;
    expect(await tripsOf(subject)).toHaveLength(97);

    const rounds = await store.rounds(here, 'ops');
    expect(rounds.map((r) => r.round)).toEqual([1, 2, 3]);
    for (const r of rounds) expect(r.instruction).toMatch(/^Attempt \d+: restart the stuck worker\.$/);
    const [one] = rounds;
    if (!one) throw new Error('three rounds');
    await store.endChild(one.delegationId, 'Restarted; it is stuck again.', at(4));
    expect((await store.rounds(here, 'ops')).map((r) => r.reply)).toEqual([
      'Restarted; it is stuck again.',
      null,
      null,
    ]);
    // Another Assistant in the same conversation has its own rounds.
    expect(await store.spawn(newDelegation({ conversation: here, assistant: 'db' }), limits, at(5))).toMatchObject({
      ok: true,
      round: 1,
    });
  });

  it('depth: the setting (5 here) stops a chain asking for 7 at 5, and one asking 7 under a setting of 2 at 2; requested 1 at 1; a child cannot raise it', async () => {
    async function chain(requestedDepth: number | undefined, configured = limits.depth): Promise<SpawnResult[]> {
      const root = createNewRun();
      await runs.createRun(root);
      const results: SpawnResult[] = [];
      let parent = root.id;
      for (let i = 0; i < 7; i++) {
        const d = newDelegation({ parentRunId: parent, requestedDepth });
        const r = await store.spawn(d, { ...limits, depth: configured }, at(6));
        results.push(r);
        if (!r.ok) break;
        await runs.createRun(createNewRun({ id: d.childRunId }));
        parent = d.childRunId;
      }
      return results;
    }
    const depths = (results: SpawnResult[]) => results.map((r) => (r.ok ? r.depth : `refused at ${r.count}`));

    expect(depths(await chain(7, 5))).toEqual([1, 2, 3, 4, 5, 'refused at 6']);
    expect((await chain(7, 9)).at(-1)).toEqual({ ok: false, brake: 'depth', limit: 5, count: 6 });
    expect(depths(await chain(1))).toEqual([1, 'refused at 2']);
    expect(depths(await chain(undefined, 2))).toEqual([1, 2, 'refused at 3']);
    expect(depths(await chain(7, 2))).toEqual([1, 2, 'refused at 3']);
    expect(depths(await chain(undefined, 4))).toEqual([1, 2, 3, 4, 'refused at 5']);

    // A root that asked for 1 level: its child asking for 7 is still refused at 2.
    const root = createNewRun();
    await runs.createRun(root);
    const top = newDelegation({ parentRunId: root.id, requestedDepth: 1 });
    expect(await store.spawn(top, limits, at(7))).toMatchObject({ ok: true, depth: 1, depthLimit: 1 });
    await runs.createRun(createNewRun({ id: top.childRunId }));
    const deeper = newDelegation({ parentRunId: top.childRunId, requestedDepth: 7 });
    expect(await store.spawn(deeper, limits, at(7))).toEqual({ ok: false, brake: 'depth', limit: 1, count: 2 });
    expect(await tripsOf(`run ${top.childRunId}`)).toEqual([
      { brake: 'depth', subject: `run ${top.childRunId}`, limit: 1, count: 2, at: at(7) },
    ]);
    // A depth refusal counts nothing: the person's slots and the conversation's rounds are as they were.
    expect(
      await store.spawn(
        newDelegation({ ...deeper, id: `del_${randomUUID()}`, parentRunId: null }),
        only('rounds', 1),
        at(8),
      ),
    ).toMatchObject({ ok: true, round: 1 });

    // The tree reads back: a child finds its parent's delegation, a parent its children.
    expect(await store.delegationOfRun(top.childRunId)).toMatchObject({
      id: top.id,
      parentRunId: root.id,
      depth: 1,
      depthLimit: 1,
      round: 1,
      messages: 0,
      endedAt: null,
    });
    expect((await store.childrenOf(root.id)).map((c) => c.id)).toEqual([top.id]);
    expect(await store.delegationOfRun(root.id)).toBeNull();
  });

  it('100 messages at once between a child and its parent: exactly 5 pass', async () => {
    const d = newDelegation();
    expect(await store.spawn(d, limits, at(9))).toMatchObject({ ok: true });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (stores[i % stores.length] ?? store).countMessage(d.id, limits, at(9))),
    );
    const passed = results.filter((r) => r.ok);
    expect(passed.map((r) => r.count).sort()).toEqual([1, 2, 3, 4, 5]);
    for (const r of results.filter((x) => !x.ok))
      expect(r).toEqual({ ok: false, brake: 'messages', limit: 5, count: 5 });
    expect(await tripsOf(d.id)).toHaveLength(95);
    await expect(store.countMessage('del_nothing', limits, at(9))).rejects.toMatchObject({ code: 'internal' });
  });

  it('a refusal by concurrency gives back the round it counted first, and records only itself', async () => {
    const ada = person();
    const busy = newDelegation({ requester: ada });
    expect(await store.spawn(busy, only('concurrency', 1), at(10))).toMatchObject({ ok: true });
    const here = conversation();
    const blocked = newDelegation({ requester: ada, conversation: here });
    const strict = { ...only('concurrency', 1), rounds: 1 };
    expect(await store.spawn(blocked, strict, at(10))).toEqual({ ok: false, brake: 'concurrency', limit: 1, count: 1 });
    expect(await store.rounds(here, 'ops')).toEqual([]);
    const counters = await database.db
      .selectFrom('delegation_rounds')
      .selectAll()
      .where('conversation_key', '=', here.key)
      .execute();
    expect(counters).toEqual([]);
    expect(await tripsOf(`slack:${here.key} with ops`)).toEqual([]);

    // Once the slot is free, the same conversation still has its one round.
    await store.endChild(busy.id, 'done', at(11));
    expect(await store.spawn(newDelegation({ requester: ada, conversation: here }), strict, at(11))).toMatchObject({
      ok: true,
      round: 1,
    });
  });

  it('a spawn repeated with the same id (an answer lost) answers as the first did and counts nothing more', async () => {
    const ada = person();
    const d = newDelegation({ requester: ada });
    const l = only('concurrency', 2);
    const first = await store.spawn(d, l, at(12));
    expect(await store.spawn(d, l, at(12))).toEqual(first);
    expect(await store.spawn(newDelegation({ requester: ada }), l, at(12))).toMatchObject({ ok: true });
    const over = newDelegation({ requester: ada });
    const refusal = await store.spawn(over, l, at(12));
    expect(refusal).toEqual({ ok: false, brake: 'concurrency', limit: 2, count: 2 });
    await store.endChild(d.id, 'done', at(13));
    // Even with a slot free now, the repeat of the refused attempt is the same refusal, recorded once.
    expect(await store.spawn(over, l, at(13))).toEqual(refusal);
    expect(await tripsOf(`slack:${ada.id}`)).toHaveLength(1);
  });
});

// The sweep reads every delegation in the database, so it gets a database of its own.
describe.each(['postgres', 'pglite'] as const)('PgDelegationStore.releaseOrphans on %s', (kind) => {
  let database: TestDatabase;
  let runs: PgRunStore;
  let store: PgDelegationStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    runs = new PgRunStore(database.db);
    store = new PgDelegationStore(database.db);
  });
  afterAll(() => database?.close());

  it('frees the slots of children whose end was lost: ended runs (their report kept) and runs never created in time', async () => {
    const ada = person();
    const l = only('concurrency', 5);
    const delegations = Array.from({ length: 5 }, () => newDelegation({ requester: ada }));
    const [finished, unstarted, running, young, reporting] = delegations;
    if (!finished || !unstarted || !running || !young || !reporting) throw new Error('five delegations');
    for (const d of [finished, unstarted, running, reporting])
      expect(await store.spawn(d, l, at(20))).toMatchObject({ ok: true });
    expect(await store.spawn(young, l, at(30))).toMatchObject({ ok: true });
    for (const d of [finished, running, reporting]) await runs.createRun(createNewRun({ id: d.childRunId }));
    await database.db
      .updateTable('runs')
      .set({ status: 'completed', report: 'The deploy is fixed.' })
      .where('id', '=', finished.childRunId)
      .execute();
    // Found by the chaos run: a child that ended and is still writing its report is not done; its report is the reply.
    await database.db
      .updateTable('runs')
      .set({ status: 'completed', report_due: true })
      .where('id', '=', reporting.childRunId)
      .execute();
    expect(await store.spawn(newDelegation({ requester: ada }), l, at(31))).toMatchObject({ brake: 'concurrency' });

    // Delegations older than 09:25 with no run count as never started; the younger one may still get its run.
    expect(await store.releaseOrphans(at(25), at(32))).toBe(2);
    expect(await store.releaseOrphans(at(25), at(32))).toBe(0);
    expect(await store.delegationOfRun(finished.childRunId)).toMatchObject({
      reply: 'The deploy is fixed.',
      endedAt: at(32),
    });
    expect(await store.delegationOfRun(unstarted.childRunId)).toMatchObject({
      reply: 'The delegated run never started.',
    });
    expect(await store.delegationOfRun(running.childRunId)).toMatchObject({ endedAt: null });
    expect(await store.delegationOfRun(young.childRunId)).toMatchObject({ endedAt: null });
    expect(await store.delegationOfRun(reporting.childRunId)).toMatchObject({ endedAt: null });
    await database.db
      .updateTable('runs')
      .set({ report: 'The build is green.', report_due: false })
      .where('id', '=', reporting.childRunId)
      .execute();
    expect(await store.releaseOrphans(at(25), at(33))).toBe(1);
    expect(await store.delegationOfRun(reporting.childRunId)).toMatchObject({ reply: 'The build is green.' });
    // Three slots free again, and ending a released one later frees nothing more.
    expect(await store.endChild(finished.id, 'late', at(34))).toBe(false);
    const again = await Promise.all(
      Array.from({ length: 10 }, () => store.spawn(newDelegation({ requester: ada }), l, at(35))),
    );
    expect(won(again)).toHaveLength(3);
  });
});

/**
 * A handle on PostgreSQL database `name` whose first COMMIT is applied but answered with a lost connection (SQLSTATE
 * 08006), as when the server goes away between the commit and its reply.
 */
function loseFirstCommitAnswer(name: string): { db: Kysely<DatabaseSchema>; lost: () => boolean } {
  let armed = true;
  const pool = new pg.Pool({ connectionString: testDatabaseUrlFor(name), max: 2 });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: typeof query }).query = async (...args: unknown[]) => {
      const result = await query(...args);
      if (armed && typeof args[0] === 'string' && args[0].trim().toLowerCase() === 'commit') {
        armed = false;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
      }
      return result;
    };
  });
  return { db: new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) }), lost: () => !armed };
}

describe('PgDelegationStore when the answer to a commit is lost', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
  });
  afterAll(() => database?.close());

  it.each([
    ['a spawn taken', 2, { ok: true }],
    ['a spawn refused', 1, { ok: false, brake: 'concurrency' }],
  ] as const)('%s and retried is counted once, and answers as it did', async (_name, cap, answer) => {
    const ada = person();
    const l = only('concurrency', cap);
    const plain = new PgDelegationStore(database.db);
    expect(await plain.spawn(newDelegation({ requester: ada }), l, at(40))).toMatchObject({ ok: true });
    const lossy = loseFirstCommitAnswer(database.name);
    try {
      const d = newDelegation({ requester: ada });
      const store = new PgDelegationStore(lossy.db, { retry: { firstDelayMs: 1 } });
      expect(await store.spawn(d, l, at(40))).toMatchObject(answer);
      expect(lossy.lost()).toBe(true);
      const quota = await database.db
        .selectFrom('delegation_quotas')
        .select('active')
        .where('user_id', '=', ada.id)
        .executeTakeFirstOrThrow();
      expect(quota.active).toBe(answer.ok ? 2 : 1);
      const trips = (await plain.trips(10_000)).filter((t) => t.subject === `slack:${ada.id}`);
      expect(trips).toHaveLength(answer.ok ? 0 : 1);
    } finally {
      await lossy.db.destroy();
    }
  });

  it('a message counted and retried is counted once', async () => {
    const d = newDelegation();
    const plain = new PgDelegationStore(database.db);
    await plain.spawn(d, limits, at(41));
    const lossy = loseFirstCommitAnswer(database.name);
    try {
      const store = new PgDelegationStore(lossy.db, { retry: { firstDelayMs: 1 } });
      expect(await store.countMessage(d.id, limits, at(41))).toEqual({ ok: true, count: 1 });
      expect(lossy.lost()).toBe(true);
      expect(await plain.countMessage(d.id, limits, at(41))).toEqual({ ok: true, count: 2 });
    } finally {
      await lossy.db.destroy();
    }
  });
});
