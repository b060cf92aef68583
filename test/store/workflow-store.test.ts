/**
 * The workflow store (issue 15): names unique among workflows not deleted, versions added only after the one
 * expected, schedules due with what a fire needs, and fires claimed once in the database, each starting a normal run
 * leased to its claimer, whatever the number of processes and however often a claim is repeated.
 */
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import type { DueSchedule, FireClaim, NewSchedule, NewVersion, NewWorkflow } from '../../src/engine/workflows.ts';
import { NO_SCHEDULE_CAPS } from '../../src/engine/workflows.ts';
import { openDatabase, type StoreDatabase } from '../../src/store/database.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { PgWorkflowStore } from '../../src/store/pg-workflow-store.ts';
import type { DatabaseSchema } from '../../src/store/schema.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun, createRevisionPlan } from './builders.ts';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 30, 9, minute));
const LONG = 60_000;
const ada: Actor = { id: 'U42', name: 'Ada', channel: 'slack' };
const conversation = { channel: 'slack', key: 'C123:1700000000.000100' };

function newVersion(overrides: Partial<NewVersion> = {}): NewVersion {
  return {
    plan: createRevisionPlan(),
    pins: [{ tool: 'fs.list_directory', fingerprint: 'f1', definition: { name: 'list_directory', inputSchema: {} } }],
    risk: 'low',
    note: 'saved from a run',
    sourceRunId: null,
    createdBy: ada,
    ...overrides,
  };
}

/** A workflow to create; each call gets a new id and name. */
function newWorkflow(overrides: Partial<NewWorkflow> = {}): NewWorkflow {
  const id = randomUUID();
  return {
    id: `wf_${id}`,
    name: `digest-${id.slice(0, 8)}`,
    owner: ada,
    conversation,
    review: 'saved',
    first: newVersion(),
    ...overrides,
  };
}

function newSchedule(workflowId: string, nextFireAt: Date | null, overrides: Partial<NewSchedule> = {}): NewSchedule {
  return {
    id: `sch_${randomUUID()}`,
    workflowId,
    cron: '0 9 * * *',
    timeZone: 'Europe/Berlin',
    catchUp: 'once',
    overlap: 'skip',
    nextFireAt,
    createdBy: { id: 'U7', channel: 'slack' },
    ...overrides,
  };
}

/** The claim a scheduler makes of a due schedule: its fire starts a run of the current version, with fresh ids. */
function claimOf(due: DueSchedule, nextFireAt: Date | null, overrides: Partial<FireClaim['fire']> = {}): FireClaim {
  const scheduledAt = due.schedule.nextFireAt ?? at(0);
  return {
    scheduleId: due.schedule.id,
    expectedNext: scheduledAt,
    nextFireAt,
    fire: {
      id: `fire_${randomUUID()}`,
      workflowId: due.workflow.id,
      version: due.workflow.version,
      scheduledAt,
      outcome: 'started',
      note: '',
      run: {
        id: `run_${randomUUID()}`,
        conversation: due.workflow.conversation,
        requester: due.workflow.owner,
        request: `workflow ${due.workflow.name}`,
        plan: due.version.plan,
      },
      ...overrides,
    },
  };
}

describe.each(['postgres', 'pglite'] as const)('PgWorkflowStore on %s', (kind) => {
  let database: TestDatabase;
  let runs: PgRunStore;
  let store: PgWorkflowStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    runs = new PgRunStore(database.db);
    store = new PgWorkflowStore(database.db, { owner: runs.owner });
  });
  afterAll(() => database?.close());

  /** A workflow with one schedule due at `next`, as the scheduler would find it. */
  async function dueWorkflow(next = at(0)): Promise<DueSchedule> {
    const w = newWorkflow();
    expect(await store.createWorkflow(w, at(0))).toBe(true);
    const s = newSchedule(w.id, next);
    await store.addSchedule(s, at(0), NO_SCHEDULE_CAPS);
    const due = (await store.dueSchedules(next, 10_000)).find((d) => d.schedule.id === s.id);
    if (!due) throw new Error(`schedule ${s.id} is not due at ${next.toISOString()}`);
    return due;
  }

  it('stores a workflow with its first version, and reads it back by name', async () => {
    const source = createNewRun();
    await runs.createRun(source);
    const w = newWorkflow({ owner: { id: 'U9', channel: 'discord' }, first: newVersion({ sourceRunId: source.id }) });
    expect(await store.createWorkflow(w, at(1))).toBe(true);
    const stored = {
      id: w.id,
      name: w.name,
      owner: { id: 'U9', channel: 'discord' },
      conversation,
      review: 'saved',
      version: 1,
      createdAt: at(1),
    };
    expect(await store.getWorkflow(w.name)).toEqual(stored);
    expect(await store.listWorkflows()).toContainEqual(stored);
    const first = { ...w.first, workflowId: w.id, version: 1, createdAt: at(1) };
    expect(await store.getVersion(w.id, 1)).toEqual(first);
    expect(await store.listVersions(w.id)).toEqual([first]);
    expect(await store.getVersion(w.id, 2)).toBeNull();
    expect(await store.getWorkflow('nothing-by-this-name')).toBeNull();
  });

  it('refuses a name taken by a workflow not deleted, and frees it when that workflow is deleted', async () => {
    const first = newWorkflow();
    expect(await store.createWorkflow(first, at(1))).toBe(true);
    const second = newWorkflow({ name: first.name });
    expect(await store.createWorkflow(second, at(2))).toBe(false);
    // The same create repeated (its answer lost) is not a taken name.
    expect(await store.createWorkflow(first, at(1))).toBe(true);
    await expect(store.createWorkflow({ ...first, name: `${first.name}-x` }, at(3))).rejects.toMatchObject({
      code: 'store_failed',
    });

    await store.deleteWorkflow(first.id, at(4));
    expect(await store.getWorkflow(first.name)).toBeNull();
    expect((await store.listWorkflows()).map((w) => w.id)).not.toContain(first.id);
    expect(await store.createWorkflow(second, at(5))).toBe(true);
    expect((await store.getWorkflow(first.name))?.id).toBe(second.id);
    // The deleted workflow's versions stay readable.
    expect((await store.listVersions(first.id)).map((v) => v.version)).toEqual([1]);
  });

  it('of two creates of one name at the same moment, exactly one wins', async () => {
    const name = newWorkflow().name;
    const results = await Promise.all(
      Array.from({ length: 5 }, () => store.createWorkflow(newWorkflow({ name }), at(1))),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('adds versions only after the version expected, and makes the new one current', async () => {
    const w = newWorkflow();
    await store.createWorkflow(w, at(1));
    const edited = newVersion({ note: 'edited by Ada', risk: 'medium', plan: createRevisionPlan({ summary: 'v2' }) });
    expect(await store.addVersion(w.id, 1, edited, at(2))).toBe(2);
    expect(await store.addVersion(w.id, 1, newVersion({ note: 'stale edit' }), at(3))).toBeNull();
    expect((await store.getWorkflow(w.name))?.version).toBe(2);
    expect(await store.getVersion(w.id, 2)).toEqual({ ...edited, workflowId: w.id, version: 2, createdAt: at(2) });
    expect((await store.listVersions(w.id)).map((v) => [v.version, v.note])).toEqual([
      [1, 'saved from a run'],
      [2, 'edited by Ada'],
    ]);
    await store.deleteWorkflow(w.id, at(4));
    expect(await store.addVersion(w.id, 2, newVersion(), at(5))).toBeNull();
    expect(await store.addVersion('wf_missing', 1, newVersion(), at(5))).toBeNull();
  });

  it('of two versions added after the same one at the same moment, exactly one is stored', async () => {
    const w = newWorkflow();
    await store.createWorkflow(w, at(1));
    const results = await Promise.all([
      store.addVersion(w.id, 1, newVersion({ note: 'amended: one' }), at(2)),
      store.addVersion(w.id, 1, newVersion({ note: 'amended: two' }), at(2)),
    ]);
    expect(results.filter((r) => r !== null)).toEqual([2]);
    const notes = (await store.listVersions(w.id)).map((v) => v.note);
    expect(notes).toHaveLength(2);
    expect(notes[1]).toBe(results[0] === 2 ? 'amended: one' : 'amended: two');
  });

  it('keeps the review setting, and lists, pauses, resumes and deletes schedules', async () => {
    const w = newWorkflow();
    await store.createWorkflow(w, at(1));
    await store.setReview(w.id, 'every_fire', at(2));
    expect((await store.getWorkflow(w.name))?.review).toBe('every_fire');

    const s = newSchedule(w.id, at(30), { catchUp: 'skip', overlap: 'queue' });
    await store.addSchedule(s, at(3), NO_SCHEDULE_CAPS);
    await store.addSchedule({ ...s, cron: '* * * * *' }, at(4), NO_SCHEDULE_CAPS);
    const listed = {
      id: s.id,
      workflowId: w.id,
      cron: '0 9 * * *',
      timeZone: 'Europe/Berlin',
      catchUp: 'skip',
      overlap: 'queue',
      paused: false,
      nextFireAt: at(30),
      createdAt: at(3),
    };
    expect(await store.listSchedules(w.id)).toEqual([listed]);
    await store.pauseSchedule(s.id, at(5));
    expect(await store.listSchedules(w.id)).toEqual([{ ...listed, paused: true }]);
    await store.resumeSchedule(s.id, at(45), at(40), NO_SCHEDULE_CAPS);
    expect(await store.listSchedules(w.id)).toEqual([{ ...listed, nextFireAt: at(45) }]);
    await store.deleteSchedule(s.id, at(41));
    expect(await store.listSchedules(w.id)).toEqual([]);
  });

  it('lists as due only the schedules that can fire now, earliest first, with their workflow and current version', async () => {
    const now = new Date(Date.UTC(2030, 0, 1, 9, 0));
    const before = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
    const w = newWorkflow();
    await store.createWorkflow(w, at(1));
    const v2 = newVersion({ note: 'edited', plan: createRevisionPlan({ summary: 'second' }) });
    await store.addVersion(w.id, 1, v2, at(2));
    const late = newSchedule(w.id, before(10));
    const onTime = newSchedule(w.id, now);
    const paused = newSchedule(w.id, before(20));
    const deleted = newSchedule(w.id, before(20));
    const future = newSchedule(w.id, new Date(now.getTime() + 60_000));
    const never = newSchedule(w.id, null);
    for (const s of [onTime, late, paused, deleted, future, never]) await store.addSchedule(s, at(3), NO_SCHEDULE_CAPS);
    await store.pauseSchedule(paused.id, at(4));
    await store.deleteSchedule(deleted.id, at(4));
    const gone = newWorkflow();
    await store.createWorkflow(gone, at(1));
    await store.addSchedule(newSchedule(gone.id, before(5)), at(3), NO_SCHEDULE_CAPS);
    await store.deleteWorkflow(gone.id, at(4));

    const mine = (due: DueSchedule[]) => due.filter((d) => [w.id, gone.id].includes(d.workflow.id));
    const due = mine(await store.dueSchedules(now, 10_000));
    expect(due.map((d) => d.schedule.id)).toEqual([late.id, onTime.id]);
    expect(due[0]?.workflow).toEqual(await store.getWorkflow(w.name));
    expect(due[0]?.version).toEqual(await store.getVersion(w.id, 2));
    expect(due[0]?.active).toBe(false);
    expect((await store.dueSchedules(now, 1)).length).toBe(1);
    expect(await store.nextDue()).toEqual((await store.dueSchedules(now, 1))[0]?.schedule.nextFireAt);
  });

  it('marks a due schedule active while a run one of its workflow’s fires started is not finished', async () => {
    const due = await dueWorkflow(at(10));
    const claim = claimOf(due, at(11));
    expect(await store.claimFires([claim], at(10), LONG)).toEqual([claim.fire.id]);
    const again = (await store.dueSchedules(at(11), 10_000)).find((d) => d.schedule.id === due.schedule.id);
    expect(again?.active).toBe(true);
    const runId = claim.fire.run?.id ?? '';
    await runs.transition(runId, ['planning'], 'running', { at: at(11) });
    await runs.transition(runId, ['running'], 'completed', { at: at(11) });
    const after = (await store.dueSchedules(at(11), 10_000)).find((d) => d.schedule.id === due.schedule.id);
    expect(after?.active).toBe(false);
  });

  it('a fire starts a normal run: planning, the plan at revision 0, its events, leased to the claimer', async () => {
    const due = await dueWorkflow(at(10));
    const claim = claimOf(due, at(40));
    const run = claim.fire.run;
    if (!run) throw new Error('the claim starts a run');
    expect(await store.claimFires([claim], at(12), LONG)).toEqual([claim.fire.id]);

    expect(await runs.getRun(run.id)).toMatchObject({
      status: 'planning',
      conversation,
      requester: ada,
      request: run.request,
      revision: 0,
      plan: due.version.plan,
      createdAt: at(12),
    });
    expect((await runs.listRevisions(run.id)).map((r) => [r.revision, r.reason])).toEqual([
      [0, `workflow ${due.workflow.name} v1`],
    ]);
    const events = await runs.listEvents(run.id);
    expect(events.map((e) => [e.type, e.payload])).toEqual([
      ['requested', { actor: ada.id, channel: ada.channel }],
      [
        'workflowFired',
        { workflowId: due.workflow.id, version: 1, fireId: claim.fire.id, scheduledAt: at(10).toISOString() },
      ],
    ]);
    const fire = {
      id: claim.fire.id,
      workflowId: due.workflow.id,
      scheduleId: due.schedule.id,
      version: 1,
      scheduledAt: at(10),
      startedAt: at(12),
      outcome: 'started',
      note: '',
      runId: run.id,
      runStatus: 'planning',
    };
    expect(await store.fireOfRun(run.id)).toEqual(fire);
    expect(await store.listFires(due.workflow.id, 10)).toEqual([fire]);
    expect((await store.listSchedules(due.workflow.id))[0]?.nextFireAt).toEqual(at(40));

    // Leased to this process: another one does not take it until the lease lapses.
    const other = new PgRunStore(database.db);
    expect((await other.claimOrphanedRuns(LONG, 1000, [])).map((c) => c.run.id)).not.toContain(run.id);
    expect(await runs.renewLeases([run.id], LONG)).toEqual([run.id]);
    await database.db
      .updateTable('runs')
      .set({ lease_expires_at: new Date(Date.now() - LONG) })
      .where('id', '=', run.id)
      .execute();
    expect((await other.claimOrphanedRuns(LONG, 1000, [])).map((c) => c.run.id)).toContain(run.id);
  });

  it('a fire its saved approval covers starts running in the claim: approved risk, pins and autoApproved stored with it', async () => {
    const due = await dueWorkflow(at(14));
    const pins = [{ tool: 'fs.read', fingerprint: 'fp-read', definition: { name: 'read' } }];
    const base = claimOf(due, at(44));
    const claim = {
      ...base,
      fire: { ...base.fire, run: { ...base.fire.run!, approved: { risk: 'low' as const, pins } } },
    };
    expect(await store.claimFires([claim], at(15), LONG)).toEqual([claim.fire.id]);
    const runId = claim.fire.run.id;
    expect(await runs.getRun(runId)).toMatchObject({ status: 'running', approvedRisk: 'low', revision: 0 });
    expect(await runs.listPins(runId)).toEqual(pins);
    expect((await runs.listEvents(runId)).map((e) => [e.type, e.payload])).toEqual([
      ['requested', { actor: ada.id, channel: ada.channel }],
      ['workflowFired', expect.objectContaining({ fireId: claim.fire.id })],
      ['autoApproved', { revision: 0, risk: 'low', preference: 'saved', fireId: claim.fire.id }],
    ]);
  });

  it("a started fire's claim stores the estimate its card shows with its autoApproved event, as the dashboard reads it", async () => {
    const due = await dueWorkflow(at(16));
    const estimate = {
      durationMs: { low: 1_000, high: 2_000 },
      tokens: null,
      costMicroUsd: null,
      noHistory: [],
      basis: [{ step: 'list', from: 'args' as const }],
    };
    const base = claimOf(due, at(46));
    const approved = { risk: 'low' as const, pins: [], estimate };
    const claim = { ...base, fire: { ...base.fire, run: { ...base.fire.run!, approved } } };
    expect(await store.claimFires([claim], at(17), LONG)).toEqual([claim.fire.id]);
    const events = await runs.listEvents(claim.fire.run.id);
    expect(events.find((e) => e.type === 'autoApproved')?.payload).toEqual({
      revision: 0,
      risk: 'low',
      preference: 'saved',
      fireId: claim.fire.id,
      estimate,
    });
  });

  it('a claim whose schedule moved on (another process won it) writes nothing', async () => {
    const due = await dueWorkflow(at(10));
    const winner = claimOf(due, at(20));
    const loser = claimOf(due, at(30));
    // A process that read the schedule even earlier claims a time already passed over.
    const stale = { ...claimOf(due, at(10), { scheduledAt: at(5) }), expectedNext: at(5) };
    expect(await store.claimFires([winner], at(10), LONG)).toEqual([winner.fire.id]);
    expect(await store.claimFires([loser], at(10), LONG)).toEqual([]);
    expect(await store.claimFires([stale], at(10), LONG)).toEqual([]);
    expect((await store.listFires(due.workflow.id, 10)).map((f) => f.id)).toEqual([winner.fire.id]);
    expect(await runs.getRun(loser.fire.run?.id ?? '')).toBeNull();
    expect(await runs.getRun(stale.fire.run?.id ?? '')).toBeNull();
    expect((await store.listSchedules(due.workflow.id))[0]?.nextFireAt).toEqual(at(20));
  });

  it('a repeat of the same claim returns the same fires and writes nothing more', async () => {
    const a = await dueWorkflow(at(10));
    const b = await dueWorkflow(at(10));
    const claims = [claimOf(a, at(20)), claimOf(b, at(20))];
    const ids = claims.map((c) => c.fire.id);
    expect(await store.claimFires(claims, at(10), LONG)).toEqual(ids);
    expect(await store.claimFires(claims, at(10), LONG)).toEqual(ids);
    for (const [claim, due] of [
      [claims[0], a],
      [claims[1], b],
    ] as const) {
      expect((await store.listFires(due.workflow.id, 10)).map((f) => f.id)).toEqual([claim?.fire.id]);
      const runId = claim?.fire.run?.id ?? '';
      expect((await runs.listEvents(runId)).map((e) => e.type)).toEqual(['requested', 'workflowFired']);
      expect(await runs.listRevisions(runId)).toHaveLength(1);
    }
    // Another process with the same fire ids did not win them: they are this one's.
    const other = new PgWorkflowStore(database.db, { owner: new PgRunStore(database.db).owner });
    expect(await other.claimFires(claims, at(10), LONG)).toEqual([]);
  });

  it('records fires that start no run, a paused schedule loses its claim, and a "run now" needs no schedule', async () => {
    const due = await dueWorkflow(at(10));
    const skipped = claimOf(due, at(20), { outcome: 'skipped_overlap', note: 'the 09:00 fire still runs', run: null });
    expect(await store.claimFires([skipped], at(10), LONG)).toEqual([skipped.fire.id]);
    expect(await store.listFires(due.workflow.id, 10)).toMatchObject([
      { id: skipped.fire.id, outcome: 'skipped_overlap', note: 'the 09:00 fire still runs', runId: null },
    ]);

    await store.pauseSchedule(due.schedule.id, at(15));
    expect(await store.claimFires([{ ...claimOf(due, at(30)), expectedNext: at(20) }], at(20), LONG)).toEqual([]);

    const now1 = { ...claimOf(due, null), scheduleId: null, expectedNext: null };
    const now2 = { ...claimOf(due, null), scheduleId: null, expectedNext: null };
    now2.fire.scheduledAt = now1.fire.scheduledAt;
    expect(await store.claimFires([now1, now2], at(21), LONG)).toEqual([now1.fire.id, now2.fire.id]);
    expect((await store.fireOfRun(now2.fire.run?.id ?? ''))?.scheduleId).toBeNull();
  });

  it('two schedules of one workflow firing at the same time make one fire and one run', async () => {
    const due = await dueWorkflow(at(10));
    const second = newSchedule(due.workflow.id, at(10), { cron: '0 9 * * MON' });
    await store.addSchedule(second, at(0), NO_SCHEDULE_CAPS);
    const dues = (await store.dueSchedules(at(10), 10_000)).filter((d) => d.workflow.id === due.workflow.id);
    const claims = dues.map((d) => claimOf(d, at(50)));
    const won = await store.claimFires(claims, at(10), LONG);
    expect(won).toHaveLength(1);
    expect((await store.listFires(due.workflow.id, 10)).map((f) => f.id)).toEqual(won);
    const lost = claims.find((c) => c.fire.id !== won[0]);
    expect(await runs.getRun(lost?.fire.run?.id ?? '')).toBeNull();
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

describe('PgWorkflowStore, three processes on one PostgreSQL database', () => {
  let database: TestDatabase;
  const processes: { db: StoreDatabase; runs: PgRunStore; store: PgWorkflowStore }[] = [];
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    for (let i = 0; i < 3; i++) {
      const db = await openDatabase({ databaseUrl: testDatabaseUrlFor(database.name), dataDir: tmpdir() });
      const runs = new PgRunStore(db.db);
      processes.push({ db, runs, store: new PgWorkflowStore(db.db, { owner: runs.owner }) });
    }
  });
  afterAll(async () => {
    for (const p of processes) await p.db.close();
    await database?.close();
  });

  it('claiming the same 50 fires at once, each fire and each run exists once, and each claimer won its own', async () => {
    const [first] = processes;
    if (!first) throw new Error('three processes');
    const fireAt = at(0);
    for (let i = 0; i < 50; i++) {
      const w = newWorkflow({ name: `report-${i}` });
      await first.store.createWorkflow(w, at(0));
      await first.store.addSchedule(newSchedule(w.id, fireAt), at(0), NO_SCHEDULE_CAPS);
    }
    const claimsOf = await Promise.all(
      processes.map(async (p) => (await p.store.dueSchedules(fireAt, 1000)).map((d) => claimOf(d, at(60)))),
    );
    const won = await Promise.all(processes.map((p, i) => p.store.claimFires(claimsOf[i] ?? [], fireAt, LONG)));

    const all = won.flat();
    expect(new Set(all).size).toBe(all.length);
    const fires = await database.db.selectFrom('workflow_fires').selectAll().execute();
    expect(fires).toHaveLength(50);
    expect(all.sort()).toEqual(fires.map((f) => f.id).sort());
    expect(new Set(fires.map((f) => f.workflow_id)).size).toBe(50);
    const created = await database.db.selectFrom('runs').select(['id', 'owner']).execute();
    expect(created.map((r) => r.id).sort()).toEqual(fires.map((f) => f.run_id).sort());
    // Each run is leased to the process whose fire created it.
    processes.forEach((p, i) => {
      const mine = new Set(won[i]);
      const runIds = fires.filter((f) => mine.has(f.id)).map((f) => f.run_id);
      expect(created.filter((r) => runIds.includes(r.id)).every((r) => r.owner === p.runs.owner)).toBe(true);
    });
  });

  it('a claim whose commit went through but whose answer was lost is retried, wins the same fires, writes them once', async () => {
    const [first] = processes;
    if (!first) throw new Error('three processes');
    const w = newWorkflow();
    await first.store.createWorkflow(w, at(0));
    const schedule = newSchedule(w.id, at(30));
    await first.store.addSchedule(schedule, at(0), NO_SCHEDULE_CAPS);
    const due = (await first.store.dueSchedules(at(30), 1000)).find((d) => d.schedule.id === schedule.id);
    if (!due) throw new Error('the schedule is due');
    const claims = [claimOf(due, at(45)), { ...claimOf(due, null), scheduleId: null, expectedNext: null }];

    const lossy = loseFirstCommitAnswer(database.name);
    try {
      const store = new PgWorkflowStore(lossy.db, { owner: first.runs.owner, retry: { firstDelayMs: 1 } });
      expect(await store.claimFires(claims, at(30), LONG)).toEqual(claims.map((c) => c.fire.id));
      expect(lossy.lost()).toBe(true);
    } finally {
      await lossy.db.destroy();
    }
    expect((await first.store.listFires(w.id, 10)).map((f) => f.id).sort()).toEqual(
      claims.map((c) => c.fire.id).sort(),
    );
    for (const c of claims) {
      const runId = c.fire.run?.id ?? '';
      expect((await first.runs.listEvents(runId)).map((e) => e.type)).toEqual(['requested', 'workflowFired']);
      expect(await first.runs.listRevisions(runId)).toHaveLength(1);
    }
    expect((await first.store.listSchedules(w.id))[0]?.nextFireAt).toEqual(at(45));
  });

  it('schedules added at once from three processes never pass a cap: the live count stops at it exactly', async () => {
    const [first] = processes;
    if (!first) throw new Error('three processes');
    const maker = { id: 'U0CAP', channel: 'slack' as const };
    const workflows = Array.from({ length: 6 }, (_, i) => newWorkflow({ name: `capped-${i}` }));
    for (const w of workflows) await first.store.createWorkflow(w, at(0));
    const caps = { perPerson: 4, perChannel: 1000 };
    // Each process adds one schedule to each workflow, all at once: 18 adds racing for 4 places.
    const results = await Promise.all(
      processes.flatMap((p) =>
        workflows.map((w) => p.store.addSchedule(newSchedule(w.id, at(60), { createdBy: maker }), at(0), caps)),
      ),
    );
    expect(results.filter((r) => r === null)).toHaveLength(4);
    expect(results.filter((r) => r !== null).every((r) => r?.over === 'person' && r.live === 4)).toBe(true);
    const live = await database.db
      .selectFrom('workflow_schedules')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('created_by_id', '=', maker.id)
      .executeTakeFirstOrThrow();
    expect(Number(live.n)).toBe(4);
  });
});
