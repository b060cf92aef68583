import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.ts';
import { migrateToLatest } from '../../src/store/database.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { storeReport as storeReportRow } from '../../src/store/run-reports.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun, createRevisionPlan } from './builders.ts';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 30, 10, minute));

describe.each(['postgres', 'pglite'] as const)('reports owed and stored, on %s', (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  /** A run that was driven: planned, running, with the report noted as owed, then ended as `status`. */
  async function endedRun(status: 'completed' | 'failed' | 'stopped' | null, options: { due?: boolean } = {}) {
    const run = createNewRun();
    await store.createRun(run);
    await store.saveRevision(run.id, 0, createRevisionPlan(), 'first plan', at(1));
    await store.transition(run.id, ['planning'], 'running', { at: at(2) });
    if (options.due !== false) await store.markReportDue(run.id, at(3));
    if (status) await store.transition(run.id, ['running'], status, { at: at(4) });
    return run.id;
  }

  const unreported = async () => (await store.listUnreportedRuns()).map((r) => [r.id, r.status, r.report]);
  const reportedEvents = async (runId: string) =>
    (await store.listEvents(runId)).filter((e) => e.type === 'reported').map((e) => e.payload);

  it('lists a run that ended owing its report until the report is sent, with the report once stored', async () => {
    const runId = await endedRun('completed');
    expect(await unreported()).toContainEqual([runId, 'completed', null]);
    expect(await store.storeReport(runId, 'All done.', 'completed', at(5))).toBe('All done.');
    expect(await unreported()).toContainEqual([runId, 'completed', 'All done.']);
    const [listed] = (await store.listUnreportedRuns()).filter((r) => r.id === runId);
    expect(listed).toMatchObject({ plan: createRevisionPlan(), requester: createNewRun().requester });
    await store.markReportSent(runId, at(6));
    expect((await unreported()).map(([id]) => id)).not.toContain(runId);
  });

  it('does not list runs that have not ended (recovery resumes those), nor runs that never owed a report', async () => {
    const active = await endedRun(null);
    const neverOwed = await endedRun('failed', { due: false });
    const ids = (await unreported()).map(([id]) => id);
    expect(ids).not.toContain(active);
    expect(ids).not.toContain(neverOwed);
    expect((await store.listUnfinishedRuns()).map((r) => r.id)).toContain(active);
  });

  it('never rewrites a stored report: a second one is refused and the first is returned, with one event', async () => {
    const runId = await endedRun('stopped');
    expect(await store.storeReport(runId, 'First report.', 'stopped', at(5))).toBe('First report.');
    expect(await store.storeReport(runId, 'Second report.', 'stopped', at(6))).toBe('First report.');
    const row = await database.db.selectFrom('runs').select('report').where('id', '=', runId).executeTakeFirst();
    expect(row?.report).toBe('First report.');
    expect(await reportedEvents(runId)).toEqual([{ status: 'stopped' }]);
  });

  it('of two reports stored at the same time exactly one stands, and both callers are given it', async () => {
    const runId = await endedRun('completed');
    const answers = await Promise.all([
      store.storeReport(runId, 'Report A.', 'completed', at(5)),
      store.storeReport(runId, 'Report B.', 'completed', at(5)),
    ]);
    expect(new Set(answers).size).toBe(1);
    expect(['Report A.', 'Report B.']).toContain(answers[0]);
    expect(await reportedEvents(runId)).toHaveLength(1);
  });

  it('a report stored with the settlement of the call that wrote it settles that call once, whichever report stands', async () => {
    const runId = await endedRun('completed');
    // Its own person, so the day's counter is this test's alone.
    const actor = { id: `U-${runId}`, channel: 'slack' };
    const day = '2026-11-30';
    const caps = { perRun: 10_000, perUserPerDay: 10_000 };
    const want = { prompt: 100, output: 400, minOutput: 1 };
    const counters = async () => {
      const r = await sql<{ n: number }>`select tokens_used as n from runs where id = ${runId}`.execute(database.db);
      const u = await sql<{ n: number }>`
        select tokens as n from user_daily_tokens where user_id = ${actor.id} and day = ${day}`.execute(database.db);
      return [r.rows[0]?.n, u.rows[0]?.n];
    };
    const usage = { role: 'synthesizer' as const, model: 'm', inputTokens: 150, outputTokens: 50, at: at(5) };
    const settle = (delta: number) => ({ op: crypto.randomUUID(), runId, actor, day, delta, usage });

    expect(await store.reserveTokens(runId, actor, want, caps, day)).toEqual({ ok: true, cap: 400 });
    expect(await counters()).toEqual([500, 500]);
    const first = settle(-300);
    expect(await store.storeReport(runId, 'Report.', 'completed', at(5), undefined, first)).toBe('Report.');
    expect(await counters()).toEqual([200, 200]);
    // The same write repeated (its answer lost) settles nothing twice, and announces the report once.
    expect(await store.storeReport(runId, 'Report.', 'completed', at(5), undefined, first)).toBe('Report.');
    expect(await counters()).toEqual([200, 200]);
    // A report that does not stand (another was stored first) still settles the call that wrote it.
    expect(await store.reserveTokens(runId, actor, want, caps, day)).toEqual({ ok: true, cap: 400 });
    expect(await store.storeReport(runId, 'Other.', 'completed', at(6), undefined, settle(-450))).toBe('Report.');
    expect(await counters()).toEqual([250, 250]);
    expect(await store.llmUsageForRun(runId)).toMatchObject({ calls: 2, inputTokens: 300, outputTokens: 100 });
    expect(await reportedEvents(runId)).toEqual([{ status: 'completed' }]);
    const row = await database.db.selectFrom('runs').select('report').where('id', '=', runId).executeTakeFirst();
    expect(row?.report).toBe('Report.');
  });

  // PostgreSQL only: PGlite serves one connection at a time, so no second writer can wait on the row's lock there.
  if (kind === 'postgres') {
    it('a report stored while another writer holds the row gets the one that stands once it commits (not an error)', async () => {
      const runId = await endedRun('completed');
      let second: Promise<string> | undefined;
      await database.db.transaction().execute(async (trx) => {
        await storeReportRow(trx, runId, 'Report A.', 'completed', at(5));
        second = store.storeReport(runId, 'Report B.', 'completed', at(5));
        // The second writer's UPDATE waits for this transaction's row lock before this one commits.
        await waitUntil('the second writer to wait for the row', async () => {
          const { rows } = await sql<{ n: number }>`
            SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE runs SET report%'`.execute(
            database.db,
          );
          return rows[0]!.n > 0;
        });
      });
      expect(await second).toBe('Report A.');
      expect(await reportedEvents(runId)).toHaveLength(1);
    });
  }

  it('has a partial index for owed reports, which holds only the runs that owe one', async () => {
    const { rows } = await sql<{ indexdef: string }>`
      select indexdef from pg_indexes where indexname = 'runs_report_due_idx'
    `.execute(database.db);
    expect(rows[0]?.indexdef).toMatch(/\(created_at, id\) WHERE \(?report_due = true\)?/);
  });
});

describe.each(['postgres', 'pglite'] as const)('migration 0006 on %s', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
  });
  afterAll(() => database?.close());

  it('notes the reports lost before it: runs that ended through the driver with no report', async () => {
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: () => Promise.resolve(migrations) } });
    const down = await migrator.migrateTo('0005-repeat-safe-writes');
    expect(down.error).toBeUndefined();
    await sql`
      insert into runs (id, channel, conversation_key, requester_id, request, status, report) values
        ('lost', 'console', 'k1', 'ada', 'r', 'completed', null),
        ('reported', 'console', 'k2', 'ada', 'r', 'completed', 'Done.'),
        ('planning-failed', 'console', 'k3', 'ada', 'r', 'failed', null),
        ('cancelled', 'console', 'k4', 'ada', 'r', 'cancelled', null),
        ('running', 'console', 'k5', 'ada', 'r', 'running', null)
    `.execute(database.db);
    await sql`
      insert into run_events (run_id, type, payload) values
        ('lost', 'dispatchFinished', '{"outcome": "completed"}'::jsonb),
        ('reported', 'dispatchFinished', '{"outcome": "completed"}'::jsonb),
        ('running', 'dispatchFinished', '{"outcome": "completed"}'::jsonb)
    `.execute(database.db);
    expect(await migrateToLatest(database.db)).toContain('0006-report-due');
    const due = await database.db.selectFrom('runs').select('id').where('report_due', '=', true).execute();
    expect(due.map((r) => r.id)).toEqual(['lost']);
    const store = new PgRunStore(database.db);
    expect((await store.listUnreportedRuns()).map((r) => r.id)).toEqual(['lost']);
  });
});
