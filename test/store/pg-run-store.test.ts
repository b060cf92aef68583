import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StewardError } from '../../src/engine/errors.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun, createRevisionPlan } from './builders.ts';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 30, 10, minute));

describe.each(['postgres', 'pglite'] as const)('PgRunStore on %s', (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  it('returns a created run, with no plan until one is saved', async () => {
    const run = createNewRun({ requester: { id: 'U1', channel: 'slack' } });
    await store.createRun(run);
    const stored = await store.getRun(run.id);
    expect(stored).toEqual({
      id: run.id,
      status: 'planning',
      conversation: run.conversation,
      requester: { id: 'U1', channel: 'slack' },
      request: run.request,
      revision: 0,
      amendmentRounds: 0,
      plan: null,
      approvedRisk: null,
      breakpoints: [],
      reviewDueAt: null,
      // The route a run takes unless quick answers answer it (migration 0011).
      route: 'plan',
      createdAt: run.at,
      // Read with the run, so early start and review need no statement of their own for it.
      reviewPreference: null,
    });
    expect(stored?.createdAt).toBeInstanceOf(Date);
    expect(await store.getRun('run_missing')).toBeNull();
    // Another person's preference, or this one's on another platform, is not theirs.
    await store.setReviewPreference({ id: 'U1', channel: 'discord' }, 'none', run.at);
    await store.setReviewPreference({ id: 'U2', channel: 'slack' }, 'none', run.at);
    expect((await store.getRun(run.id))?.reviewPreference).toBeNull();
    await store.setReviewPreference({ id: 'U1', channel: 'slack' }, 'all', run.at);
    expect((await store.getRun(run.id))?.reviewPreference).toBe('all');
  });

  it('round-trips the plan of the current revision as JSON', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const plan = createRevisionPlan();
    await store.saveRevision(run.id, 0, plan, 'first plan', at(1));
    const stored = await store.getRun(run.id);
    expect(stored?.plan).toEqual(plan);
    expect(stored?.requester).toEqual(run.requester);
  });

  it('keeps earlier revisions when a new one is saved, and refuses to overwrite one', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const first = createRevisionPlan({ summary: 'first' });
    const second = createRevisionPlan({ summary: 'second', steps: [] });
    await store.saveRevision(run.id, 0, first, 'first plan', at(1));
    await store.saveRevision(run.id, 1, second, 'amended: skip the listing', at(2));
    await expect(store.saveRevision(run.id, 1, first, 'again', at(3))).rejects.toMatchObject({
      code: 'store_failed',
    });
    expect((await store.getRun(run.id))?.plan?.summary).toBe('second');
    const revisions = await store.listRevisions(run.id);
    expect(revisions.map((r) => [r.revision, r.plan.summary, r.reason])).toEqual([
      [0, 'first', 'first plan'],
      [1, 'second', 'amended: skip the listing'],
    ]);
    expect((await store.getRun(run.id))?.revision).toBe(1);
  });

  it('a revision returns the run as its write left it, and settles the planner call that wrote it once, whatever becomes of the revision', async () => {
    const run = createNewRun({ requester: { id: `U-${crypto.randomUUID()}`, channel: 'slack' } });
    await store.createRun(run);
    await store.setReviewPreference(run.requester, 'none', run.at);
    const actor = run.requester;
    const day = '2026-11-30';
    const counters = async () => {
      const r = await sql<{ n: number }>`select tokens_used as n from runs where id = ${run.id}`.execute(database.db);
      const u = await sql<{ n: number }>`
        select tokens as n from user_daily_tokens where user_id = ${actor.id} and day = ${day}`.execute(database.db);
      return [r.rows[0]?.n, u.rows[0]?.n];
    };
    const want = { prompt: 100, output: 400, minOutput: 1 };
    const caps = { perRun: 10_000, perUserPerDay: 10_000 };
    const usage = { role: 'planner' as const, model: 'm', inputTokens: 150, outputTokens: 50, at: at(1) };
    const settle = (delta: number) => ({ op: crypto.randomUUID(), runId: run.id, actor, day, delta, usage });
    expect(await store.reserveTokens(run.id, actor, want, caps, day)).toEqual({ ok: true, cap: 400 });
    const plan = createRevisionPlan({ summary: 'first' });
    const first = settle(-300);

    const saved = await store.saveRevision(run.id, 0, plan, 'planned', at(1), first);
    expect(saved).toMatchObject({ id: run.id, status: 'planning', revision: 0, plan, reviewPreference: 'none' });
    expect(await counters()).toEqual([200, 200]);
    // The same write repeated (its answer lost) saves and settles nothing twice.
    expect((await store.saveRevision(run.id, 0, plan, 'planned', at(1), first)).plan).toEqual(plan);
    expect(await counters()).toEqual([200, 200]);
    // A revision refused (its number holds another plan) still settles the call that wrote it.
    expect(await store.reserveTokens(run.id, actor, want, caps, day)).toEqual({ ok: true, cap: 400 });
    const other = createRevisionPlan({ summary: 'other', steps: [] });
    await expect(store.saveRevision(run.id, 0, other, 'again', at(2), settle(-450))).rejects.toMatchObject({
      code: 'store_failed',
    });
    expect(await counters()).toEqual([250, 250]);
    expect(await store.llmUsageForRun(run.id)).toMatchObject({ calls: 2, inputTokens: 300, outputTokens: 100 });
    expect((await store.getRun(run.id))?.plan?.summary).toBe('first');
  });

  it('saves a revision with the starts of its attempts in one write, and refuses both when another revision holds its number', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const round = createRevisionPlan({ summary: 'round 1' });
    const start = (stepId: string) => ({ stepId, attempt: 1, revision: -1, args: { q: stepId }, at: at(1) });
    const write = {
      runId: run.id,
      ended: [],
      started: [start('quick:1'), start('quick:2')],
      revision: { revision: -1, plan: round, reason: 'round 1', at: at(1) },
    };
    await store.recordSteps(write);
    // Repeated after its answer was lost: nothing changes.
    await store.recordSteps(write);
    const attempts = async () => (await store.listStepAttempts(run.id)).map((a) => [a.stepId, a.revision, a.status]);
    expect(await attempts()).toEqual([
      ['quick:1', -1, 'running'],
      ['quick:2', -1, 'running'],
    ]);
    expect(await store.getRun(run.id)).toMatchObject({ revision: -1, plan: round });
    const other = {
      ...write,
      started: [start('quick:3')],
      revision: { ...write.revision, plan: createRevisionPlan() },
    };
    await expect(store.recordSteps(other)).rejects.toMatchObject({ code: 'store_failed' });
    expect(await attempts()).toHaveLength(2);
    expect((await store.listRevisions(run.id)).map((r) => [r.revision, r.reason])).toEqual([[-1, 'round 1']]);
  });

  it("ends a run with its last steps' ends in one write, owing its report even when the move lost its race", async () => {
    const endedRun = async (status: 'running' | 'cancelled') => {
      const run = createNewRun();
      await store.createRun(run);
      await store.saveRevision(run.id, 0, createRevisionPlan(), 'first plan', at(1));
      await store.transition(run.id, ['planning'], status, { at: at(2) });
      const start = { stepId: 'list', attempt: 1, revision: 0, args: {}, at: at(3) };
      await store.recordSteps({ runId: run.id, ended: [], started: [start] });
      const end = {
        stepId: 'list',
        attempt: 1,
        status: 'succeeded' as const,
        output: null,
        error: null,
        at: at(4),
        durationMs: 1,
      };
      const event = { type: 'dispatchFinished', payload: { outcome: 'completed' } };
      const endRun = { status: 'completed' as const, from: ['running' as const], event, at: at(4) };
      const { runEnded } = await store.recordSteps({ runId: run.id, ended: [end], started: [], endRun });
      const row = await database.db
        .selectFrom('runs')
        .select(['status', 'report_due'])
        .where('id', '=', run.id)
        .executeTakeFirstOrThrow();
      const events = (await store.listEvents(run.id, ['stepEnded', 'dispatchFinished'])).map((e) => e.type);
      return { ...row, runEnded, events, attempt: (await store.listStepAttempts(run.id))[0]?.status };
    };
    expect(await endedRun('running')).toEqual({
      status: 'completed',
      report_due: true,
      runEnded: true,
      events: ['stepEnded', 'dispatchFinished'],
      attempt: 'succeeded',
    });
    expect(await endedRun('cancelled')).toEqual({
      status: 'cancelled',
      report_due: true,
      runEnded: false,
      events: ['stepEnded'],
      attempt: 'succeeded',
    });
  });

  it('lets exactly one of ten concurrent transitions win', async () => {
    const run = createNewRun();
    await store.createRun(run);
    await store.saveRevision(run.id, 0, createRevisionPlan(), 'first plan', at(1));
    expect(await store.transition(run.id, ['planning'], 'awaiting_review')).toBe(true);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => store.transition(run.id, ['awaiting_review'], 'running', { revision: 0 })),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await store.getRun(run.id))?.status).toBe('running');
  });

  it('refuses a transition from the wrong status or for a stale revision', async () => {
    const run = createNewRun();
    await store.createRun(run);
    await store.saveRevision(run.id, 0, createRevisionPlan(), 'first plan', at(1));
    await store.saveRevision(run.id, 1, createRevisionPlan(), 'edited', at(2));
    await store.transition(run.id, ['planning'], 'awaiting_review');
    expect(await store.transition(run.id, ['running'], 'paused')).toBe(false);
    expect(await store.transition(run.id, ['awaiting_review'], 'running', { revision: 0 })).toBe(false);
    expect(await store.transition(run.id, [], 'running')).toBe(false);
    expect(await store.transition('run_missing', ['awaiting_review'], 'running')).toBe(false);
    expect(await store.transition(run.id, ['awaiting_review'], 'running', { revision: 1, at: at(3) })).toBe(true);
  });

  it('hands out amendment rounds up to the cap, even to concurrent callers', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const rounds = await Promise.all(Array.from({ length: 10 }, () => store.takeAmendmentRound(run.id, 3)));
    expect(rounds.filter((r) => r !== null).sort()).toEqual([1, 2, 3]);
    expect((await store.getRun(run.id))?.amendmentRounds).toBe(3);
    expect(await store.takeAmendmentRound('run_missing', 3)).toBeNull();
  });

  it('records step attempts from start to end, with JSON outputs and errors', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const args = { path: '/tmp', flags: ['-a', '-l'], nested: { n: 1.5, ok: true, none: null } };
    await store.recordStepStarted({ runId: run.id, stepId: 'list', attempt: 1, revision: 0, args, at: at(1) });
    // A replayed start after a crash must not add a row or change the first one.
    await store.recordStepStarted({ runId: run.id, stepId: 'list', attempt: 1, revision: 0, args: {}, at: at(9) });
    await store.recordStepStarted({ runId: run.id, stepId: 'echo', attempt: 1, revision: 0, args: 'hi', at: at(2) });
    const running = { attempt: 1, revision: 0, status: 'running', output: null, error: null, endedAt: null };
    expect(await store.listStepAttempts(run.id)).toEqual([
      { ...running, stepId: 'list', args, startedAt: at(1) },
      { ...running, stepId: 'echo', args: 'hi', startedAt: at(2) },
    ]);

    const output = { content: [{ type: 'text', text: 'a.txt\nb.md' }], structuredContent: ['a.txt', 'b.md'] };
    const ended = { runId: run.id, stepId: 'list', attempt: 1, at: at(3), durationMs: 12.4 };
    await store.recordStepEnded({ ...ended, status: 'succeeded', output, error: null });
    const error = { code: 'timeout' as const, message: 'echo took longer than 5 s', retryable: true };
    await store.recordStepEnded({ ...ended, stepId: 'echo', status: 'failed', output: null, error });
    // A late "interrupted" for an attempt that already ended must not rewrite its result.
    await store.recordStepEnded({ ...ended, status: 'failed', output: null, error: { ...error, code: 'interrupted' } });

    const [list, echo] = await store.listStepAttempts(run.id);
    expect(list).toMatchObject({ status: 'succeeded', output, error: null, endedAt: at(3) });
    expect(echo).toMatchObject({ status: 'failed', output: null, error, endedAt: at(3) });
  });

  it('refuses to end an attempt that never started', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const end = store.recordStepEnded({
      runId: run.id,
      stepId: 'ghost',
      attempt: 1,
      status: 'succeeded',
      output: null,
      error: null,
      at: at(1),
      durationMs: 1,
    });
    await expect(end).rejects.toBeInstanceOf(StewardError);
  });

  it('stores tool output holding NUL and lone surrogates instead of failing the step record', async () => {
    const run = createNewRun();
    await store.createRun(run);
    await store.recordStepStarted({ runId: run.id, stepId: 'bin', attempt: 1, revision: 0, args: {}, at: at(1) });
    const output = { content: [{ type: 'text', text: 'a\u0000b\ud800c' }], ['k\u0000']: 'v' };
    await store.recordStepEnded({
      runId: run.id,
      stepId: 'bin',
      attempt: 1,
      status: 'succeeded',
      output,
      error: null,
      at: at(2),
      durationMs: 1,
    });
    const [attempt] = await store.listStepAttempts(run.id);
    expect(attempt?.output).toEqual({ content: [{ type: 'text', text: 'a\ufffdb\ufffdc' }], 'k\ufffd': 'v' });
  });

  it('lists only runs a restart must pick up', async () => {
    const statuses = [
      ...['planning', 'awaiting_review', 'running', 'paused', 'stopping'],
      ...['completed', 'failed', 'cancelled', 'stopped'],
    ] as const;
    const ids = new Map<string, string>();
    for (const [i, status] of statuses.entries()) {
      // Distinct creation times, since recovery picks runs up oldest first.
      const run = createNewRun({ request: `status ${status}`, at: at(i) });
      await store.createRun(run);
      await store.transition(run.id, ['planning'], status);
      ids.set(run.id, status);
    }
    const unfinished = (await store.listUnfinishedRuns()).filter((r) => ids.has(r.id));
    expect(unfinished.map((r) => r.status)).toEqual(['planning', 'awaiting_review', 'running', 'paused', 'stopping']);
  });

  it('keeps decisions, events, usage and the report of a run', async () => {
    const run = createNewRun();
    await store.createRun(run);
    const actor = { id: 'U7', name: 'Grace', channel: 'slack' };
    await store.recordDecision({ runId: run.id, revision: 0, actor, action: 'approve', accepted: true, at: at(1) });
    await store.recordDecision({
      runId: run.id,
      revision: 0,
      actor: { id: 'U8', channel: 'slack' },
      action: 'cancel',
      accepted: false,
      note: 'already running',
      at: at(2),
    });
    expect((await store.listDecisions(run.id)).map((d) => [d.actor, d.action, d.accepted, d.note])).toEqual([
      [actor, 'approve', true, null],
      [{ id: 'U8', channel: 'slack' }, 'cancel', false, 'already running'],
    ]);

    await store.appendEvent(run.id, 'planned', { revision: 0 }, at(1));
    await store.appendEvent(run.id, 'approved', ['U7'], at(2));
    await store.appendEvent(run.id, 'note', 'plain string', at(3));
    const events = await store.listEvents(run.id);
    // A run is stored with its request's event, in the same statement.
    expect(events.map((e) => [e.type, e.payload, e.createdAt])).toEqual([
      ['requested', { actor: run.requester.id, channel: run.requester.channel }, run.at],
      ['planned', { revision: 0 }, at(1)],
      ['approved', ['U7'], at(2)],
      ['note', 'plain string', at(3)],
    ]);
    expect(events[1]!.id).toBeLessThan(events[2]!.id);

    const usage = { runId: run.id, model: 'm', at: at(1) };
    // One planner call has a price and one has none: the planner's cost, and so the run's, is unknown, not a part.
    await store.recordLlmUsage({ ...usage, role: 'planner', inputTokens: 1000, outputTokens: 200, costMicroUsd: 3600 });
    await store.recordLlmUsage({
      ...usage,
      role: 'planner',
      inputTokens: 500,
      outputTokens: 100,
      cachedInputTokens: 400,
    });
    await store.recordLlmUsage({ ...usage, role: 'synthesizer', inputTokens: 40, outputTokens: 2, costMicroUsd: 96 });
    await store.recordLlmUsage({ ...usage, role: 'synthesizer', inputTokens: 0, outputTokens: 0, costMicroUsd: 0 });
    await store.recordLlmUsage({ ...usage, runId: null, role: 'classifier', inputTokens: 9, outputTokens: 1 });
    expect(await store.llmUsageForRun(run.id)).toEqual({
      calls: 4,
      inputTokens: 1540,
      cachedInputTokens: 400,
      outputTokens: 302,
      costMicroUsd: null,
      byRole: {
        planner: { calls: 2, inputTokens: 1500, cachedInputTokens: 400, outputTokens: 300, costMicroUsd: null },
        synthesizer: { calls: 2, inputTokens: 40, cachedInputTokens: 0, outputTokens: 2, costMicroUsd: 96 },
      },
    });
    const none = { calls: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, costMicroUsd: 0, byRole: {} };
    expect(await store.llmUsageForRun('run_missing')).toEqual(none);

    await store.setReport(run.id, 'Listed 2 files.', at(4));
    const report = await database.db.selectFrom('runs').select('report').where('id', '=', run.id).executeTakeFirst();
    expect(report?.report).toBe('Listed 2 files.');
  });

  it("a move may carry the run's reply (a quick answer's), set only when the move applies", async () => {
    const report = async (id: string) =>
      (await database.db.selectFrom('runs').select('report').where('id', '=', id).executeTakeFirst())?.report;
    const run = createNewRun();
    await store.createRun(run);
    expect(await store.transition(run.id, ['planning'], 'completed', { at: at(1), report: 'Ada: +44 20' })).toBe(true);
    expect(await report(run.id)).toBe('Ada: +44 20');
    expect((await store.getRun(run.id))?.status).toBe('completed');
    // Cancelled meanwhile: the move loses, and the answer is not stored.
    const cancelled = createNewRun();
    await store.createRun(cancelled);
    await store.transition(cancelled.id, ['planning'], 'cancelled', { at: at(1) });
    expect(await store.transition(cancelled.id, ['planning'], 'completed', { at: at(2), report: 'late' })).toBe(false);
    expect(await report(cancelled.id)).toBeNull();
    // A move without one leaves the reply as it was.
    await store.transition(run.id, ['completed'], 'completed', { at: at(3) });
    expect(await report(run.id)).toBe('Ada: +44 20');
  });

  it('reports a duplicate run id as store_failed, but takes a repeat of the same write (a retry) once', async () => {
    const run = createNewRun();
    await store.createRun(run);
    await store.createRun(run);
    await expect(store.createRun({ ...run, request: 'something else' })).rejects.toMatchObject({
      name: 'StewardError',
      code: 'store_failed',
    });
    const rows = await sql<{ n: number }>`select count(*)::int as n from runs where id = ${run.id}`.execute(
      database.db,
    );
    expect(rows.rows[0]?.n).toBe(1);
  });
});
