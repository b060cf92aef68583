/**
 * Run ownership in the store (issue 10): leases judged by the database's clock, fences that shut a process out once
 * another took its run, takeover of orphans (a lease that lapsed, or a holder on this machine whose process is gone),
 * and decisions queued for the holder with a notification that reaches a listening connection.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StewardError } from '../../src/engine/errors.ts';
import { RunLeases } from '../../src/engine/flows/run-leases.ts';
import type { RunSignal } from '../../src/engine/ports.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { newOwnerId } from '../../src/store/process-identity.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createNewRun, createRevisionPlan } from './builders.ts';

const at = new Date('2026-11-30T10:00:00.000Z');
const LONG = 60_000;

/** What a rejected promise was rejected with, as [code, message]. */
async function failure(p: Promise<unknown>): Promise<[string, string]> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StewardError) return [err.code, err.message];
    throw err;
  }
  throw new Error('expected a rejection');
}

describe.each(['postgres', 'pglite'] as const)('run leases and fences, on %s', (kind) => {
  let database: TestDatabase;
  let a: PgRunStore;
  let b: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    a = new PgRunStore(database.db);
    b = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  /** A running run held by `holder` (fence 0), with a plan. */
  async function heldRun(holder: PgRunStore, leaseMs = LONG): Promise<string> {
    const run = createNewRun({ leaseMs });
    await holder.createRun(run);
    await holder.saveRevision(run.id, 0, createRevisionPlan(), 'planned', at);
    await holder.transition(run.id, ['planning'], 'running', { at });
    return run.id;
  }

  const lapse = (runId: string) =>
    database.db
      .updateTable('runs')
      .set({ lease_expires_at: new Date(Date.now() - 60_000) })
      .where('id', '=', runId)
      .execute();

  const start = (store: PgRunStore, runId: string, fence: number, attempt = 1) =>
    store.recordStepStarted({ runId, stepId: 'list', attempt, revision: 0, args: {}, at, fence });

  it('a run held by a live lease is not claimed by another process; once the lease lapses it is, under a higher fence', async () => {
    const runId = await heldRun(a);
    expect(await b.claimRun(runId, LONG)).toBeNull();
    expect((await b.claimOrphanedRuns(LONG, 100, [])).map((c) => c.run.id)).not.toContain(runId);

    await lapse(runId);
    const claimed = (await b.claimOrphanedRuns(LONG, 100, [])).filter((c) => c.run.id === runId);
    expect(claimed.map((c) => [c.run.id, c.run.status, c.fence])).toEqual([[runId, 'running', 1]]);
    // The first holder's renewal no longer finds it: it has lost the run.
    expect(await a.renewLeases([runId], LONG)).not.toContain(runId);
    expect(await b.renewLeases([runId], LONG)).toContain(runId);
  });

  it('a process that lost its run can neither start nor end a step, nor end the run; the new holder can', async () => {
    const runId = await heldRun(a);
    await start(a, runId, 0);
    await lapse(runId);
    const fence = await b.claimRun(runId, LONG);
    expect(fence).toBe(1);

    const fencedOut = `run ${runId} is now driven by another process; this one let it go`;
    expect(await failure(start(a, runId, 0, 2))).toEqual(['fenced', fencedOut]);
    const end = { runId, stepId: 'list', attempt: 1, output: null, at, durationMs: 1 };
    expect(await failure(a.recordStepEnded({ ...end, status: 'succeeded', error: null, fence: 0 }))).toEqual([
      'fenced',
      fencedOut,
    ]);
    expect(await failure(a.transition(runId, ['running'], 'completed', { at, fence: 0 }))).toEqual([
      'fenced',
      fencedOut,
    ]);
    // Nothing the old holder tried was written.
    expect((await b.listStepAttempts(runId)).map((x) => [x.attempt, x.status])).toEqual([[1, 'running']]);
    expect((await b.getRun(runId))?.status).toBe('running');

    const interrupted = { code: 'interrupted' as const, message: 'holder died', retryable: false };
    await b.recordStepEnded({ ...end, status: 'failed', error: interrupted, fence: 1 });
    await start(b, runId, 1, 2);
    expect((await b.listStepAttempts(runId)).map((x) => [x.attempt, x.status])).toEqual([
      [1, 'failed'],
      [2, 'running'],
    ]);
    expect(await b.transition(runId, ['running'], 'completed', { at, fence: 1 })).toBe(true);
  });

  it("a step's end and the starts that waited for it are written together, and by a process fenced out not at all", async () => {
    const runId = await heldRun(a);
    await start(a, runId, 0);
    const end = { stepId: 'list', attempt: 1, status: 'succeeded' as const, output: { n: 1 }, error: null, at };
    const next = (stepId: string) => ({ stepId, attempt: 1, revision: 0, args: {}, at });
    await a.recordSteps({ runId, fence: 0, ended: [{ ...end, durationMs: 5 }], started: [next('say'), next('again')] });
    const attempts = async () => (await b.listStepAttempts(runId)).map((x) => [x.stepId, x.status]);
    expect(await attempts()).toEqual([
      ['list', 'succeeded'],
      ['say', 'running'],
      ['again', 'running'],
    ]);

    await lapse(runId);
    expect(await b.claimRun(runId, LONG)).toBe(1);
    const sayEnded = { ...end, stepId: 'say', durationMs: 5 };
    expect(await failure(a.recordSteps({ runId, fence: 0, ended: [sayEnded], started: [next('last')] }))).toEqual([
      'fenced',
      `run ${runId} is now driven by another process; this one let it go`,
    ]);
    // An end that brings its own start row (a step stopped before it was sent) never ends another holder's attempt.
    const stopped = { ...sayEnded, status: 'cancelled' as const, output: null, unstarted: { revision: 0 } };
    expect(await failure(b.recordSteps({ runId, fence: 1, ended: [stopped], started: [] }))).toEqual([
      'fenced',
      `attempt 1 of step say of run ${runId} was started by another process`,
    ]);
    expect(await attempts()).toEqual([
      ['list', 'succeeded'],
      ['say', 'running'],
      ['again', 'running'],
    ]);
  });

  it('an attempt started under one fence is never taken over by a start under another', async () => {
    const runId = await heldRun(a);
    await start(a, runId, 0);
    // Repeated by the same holder (its answer lost): fine, written once.
    await start(a, runId, 0);
    await lapse(runId);
    expect(await b.claimRun(runId, LONG)).toBe(1);
    expect(await failure(start(b, runId, 1))).toEqual([
      'fenced',
      `attempt 1 of step list of run ${runId} was started by another process`,
    ]);
    const events = (await a.listEvents(runId)).filter((e) => e.type === 'stepStarted');
    expect(events).toHaveLength(1);
  });

  it('two processes claiming orphans at once take each run exactly once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const runId = await heldRun(a);
      await lapse(runId);
      ids.push(runId);
    }
    const c = new PgRunStore(database.db);
    const [byB, byC] = await Promise.all([b.claimOrphanedRuns(LONG, 100, []), c.claimOrphanedRuns(LONG, 100, [])]);
    const taken = [...byB, ...byC].map((x) => x.run.id).filter((id) => ids.includes(id));
    expect(taken.sort()).toEqual([...ids].sort());
  });

  it('a takeover claim whose answer was lost after it committed is tried again and finds the runs it took', async () => {
    const runId = await heldRun(a);
    await lapse(runId);
    // The claim's statement commits, then its answer is lost (as a connection reset after the commit would).
    const claims = new WeakSet<object>();
    let lost = 0;
    const losing = new PgRunStore(
      database.db.withPlugin({
        transformQuery: ({ node, queryId }) => {
          if (node.kind === 'UpdateQueryNode' && node.with) claims.add(queryId);
          return node;
        },
        transformResult: async ({ queryId, result }) => {
          if (!claims.has(queryId) || lost > 0) return result;
          lost += 1;
          throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
        },
      }),
    );
    const claimed = await losing.claimOrphanedRuns(LONG, 100, []);
    expect(lost).toBe(1);
    expect(claimed.map((c) => c.run.id)).toContain(runId);
    const row = await database.db
      .selectFrom('runs')
      .select(['owner', 'fence'])
      .where('id', '=', runId)
      .executeTakeFirst();
    // Taken once, by the claimer, under the fence it was given.
    expect(row).toEqual({ owner: losing.owner, fence: claimed.find((c) => c.run.id === runId)?.fence });
    expect(row?.fence).toBe(1);
  });

  it('the runs of a holder on this machine whose process is gone are taken at once, without waiting for the lease', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    const [host, , machine] = newOwnerId().split(':');
    const dead = new PgRunStore(database.db, { owner: `${host}:${child.pid}:${machine}:dead` });
    const alive = new PgRunStore(database.db, { owner: `${host}:${process.pid}:${machine}:alive` });
    const deadRun = await heldRun(dead);
    const aliveRun = await heldRun(alive);
    const claimed = (await b.claimOrphanedRuns(LONG, 100, [])).map((x) => x.run.id);
    expect(claimed).toContain(deadRun);
    expect(claimed).not.toContain(aliveRun);
  });

  it('a finished run still owing its report is an orphan when its holder lets go; one that reported is not', async () => {
    const owing = await heldRun(a);
    await a.markReportDue(owing, at);
    await a.transition(owing, ['running'], 'completed', { at, fence: 0 });
    const reported = await heldRun(a);
    await a.markReportDue(reported, at);
    await a.transition(reported, ['running'], 'completed', { at, fence: 0 });
    await a.markReportSent(reported, at);
    await a.releaseRun(owing);
    const claimed = (await b.claimOrphanedRuns(LONG, 100, [])).map((x) => [x.run.id, x.run.status]);
    expect(claimed).toContainEqual([owing, 'completed']);
    expect(claimed.map(([id]) => id)).not.toContain(reported);
    expect(await a.renewLeases([reported], LONG)).not.toContain(reported);
  });

  it('a run its own process forgot is not renewed, and once lapsed is taken back; one it still drives is left alone', async () => {
    const driven = await heldRun(a);
    const forgotten = await heldRun(a);
    expect(await a.renewLeases([driven], LONG)).toEqual([driven]);
    await lapse(driven);
    await lapse(forgotten);
    const claimed = (await a.claimOrphanedRuns(LONG, 100, [driven])).map((c) => [c.run.id, c.fence]);
    expect(claimed).toContainEqual([forgotten, 1]);
    expect(claimed.map(([id]) => id)).not.toContain(driven);
    // Lapsed during an outage, nobody took it: its driver renews it and carries on under the same fence.
    expect(await a.renewLeases([driven], LONG)).toEqual([driven]);
    await start(a, driven, 0);
  });

  it('a run created while a renewal is under way is not taken for lost (its row committed after the renewal read)', async () => {
    const store = new PgRunStore(database.db);
    const older = await heldRun(store);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // The renewal's answer comes back only after the new run was created and noted.
    const slow = Object.assign(Object.create(store) as PgRunStore, {
      renewLeases: async (ids: readonly string[], ttlMs: number) => {
        const kept = await store.renewLeases(ids, ttlMs);
        await gate;
        return kept;
      },
    });
    const leases = new RunLeases(slow, LONG);
    leases.hold(older, 0);
    const renewing = leases.renew();
    const newer = await heldRun(store);
    leases.hold(newer, 0);
    open();
    expect(await renewing).toEqual([]);
    expect([leases.fenceOf(older), leases.fenceOf(newer)]).toEqual([0, 0]);
    // The next renewal sees it.
    expect(await leases.renew()).toEqual([]);
  });

  it('decisions queued for a run are taken once, only by its holder, oldest first, and wake a listener', async () => {
    const runId = await heldRun(a);
    const signals: RunSignal[] = [];
    const unlisten = await database.signals.listen((s) => signals.push(s));
    try {
      await b.forwardDecision(runId, { action: 'pause', n: 1 });
      await b.forwardDecision(runId, { action: 'stop', n: 2 });
      await waitUntil('both notifications', () => signals.filter((s) => 'runId' in s && s.runId === runId).length >= 2);
      expect(signals.filter((s) => 'runId' in s && s.runId === runId)).toEqual([
        { kind: 'decision', runId },
        { kind: 'decision', runId },
      ]);
      expect((await b.takeDecisions(runId)).decisions).toEqual([]);
      expect(await a.runsWithDecisions()).toContain(runId);
      expect((await a.takeDecisions(runId)).decisions).toEqual([
        { action: 'pause', n: 1 },
        { action: 'stop', n: 2 },
      ]);
      expect((await a.takeDecisions(runId)).decisions).toEqual([]);
      expect(await a.runsWithDecisions()).not.toContain(runId);

      await a.releaseRun(runId);
      await waitUntil('the release', () => signals.some((s) => s.kind === 'released' && s.runId === runId));
    } finally {
      await unlisten();
    }
  });

  it('with unlessHeld, no start is written after a Pause or Stop is stored or queued for the run; the ends are', async () => {
    const runId = await heldRun(a);
    await start(a, runId, 0);
    const end = { stepId: 'list', attempt: 1, status: 'succeeded' as const, output: { n: 1 }, error: null, at };
    const next = (stepId: string) => ({ stepId, attempt: 1, revision: 0, args: {}, at });
    const attempts = async () => (await b.listStepAttempts(runId)).map((x) => [x.stepId, x.status]);

    // Another process queued a Pause: the end is stored, the start is not, and the writer hears why.
    await b.forwardDecision(runId, { runId, revision: 0, action: 'pause', actor: { id: 'ada', channel: 'console' } });
    const wave = { runId, fence: 0, ended: [{ ...end, durationMs: 5 }], started: [next('say')], unlessHeld: true };
    expect(await a.recordSteps(wave)).toEqual({ startsHeld: true });
    expect(await attempts()).toEqual([['list', 'succeeded']]);
    // Taken, it still holds until it is applied and settled (its stored status decides from then on); a queued
    // Resume or an amendment holds nothing.
    const { op } = await a.takeDecisions(runId);
    const say = { runId, fence: 0, ended: [], started: [next('say')], unlessHeld: true };
    expect(await a.recordSteps(say)).toEqual({ startsHeld: true });
    await a.settleDecisions(runId, op);
    await b.forwardDecision(runId, { runId, revision: 0, action: 'resume', actor: { id: 'ada', channel: 'console' } });
    expect(await a.recordSteps(say)).toEqual({ startsHeld: false });
    // Stored as paused (or stopping): held. Without unlessHeld (a quick answer's call, a replay) it is written.
    expect(await a.transition(runId, ['running'], 'paused', { at })).toBe(true);
    expect(await a.recordSteps({ ...say, started: [next('again')] })).toEqual({ startsHeld: true });
    expect(await a.transition(runId, ['paused'], 'stopping', { at })).toBe(true);
    expect(await a.recordSteps({ ...say, started: [next('again')] })).toEqual({ startsHeld: true });
    expect(await a.recordSteps({ runId, fence: 0, ended: [], started: [next('again')] })).toEqual({
      startsHeld: false,
    });
    expect(await attempts()).toEqual([
      ['list', 'succeeded'],
      ['say', 'running'],
      ['again', 'running'],
    ]);
  });
});
