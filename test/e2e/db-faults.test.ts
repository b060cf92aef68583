/**
 * Runs across PostgreSQL faults, end to end (issue 10): the console harness on a private cluster
 * (test/helpers/private-postgres.ts) that the tests restart and stop while a step's call is in flight, with the audit
 * fixture server, which logs every call and cancellation it really receives. What a person would notice is checked:
 * the console, the audit log (each call made once, none while the database is away) and the stored rows.
 *
 * The shared server at 127.0.0.1:5432 is never touched: each test gets a database of its own on the private cluster.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import type { StoredStepAttempt } from '../../src/engine/ports.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import type { DatabaseSchema } from '../../src/store/schema.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { privatePostgresMissing, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { waitUntil } from '../helpers/wait.ts';
import {
  createAuditServer,
  onlyRun,
  planReply,
  startHarness,
  waitForStoredEnd,
  type AuditServer,
  type Harness,
} from './harness.ts';

const sleepStep = (id: string, ms: number, dependsOn: string[] = []) => ({
  id,
  tool: 'audit.sleep',
  args: { ms },
  dependsOn,
});
const noteStep = (id: string, text: string, dependsOn: string[] = []) => ({
  id,
  tool: 'audit.note',
  args: { text },
  dependsOn,
});
const slept = (ms: number) => ({ content: [{ type: 'text', text: `slept ${ms}` }] });
const noted = (text: string) => ({ content: [{ type: 'text', text: `noted: ${text}` }] });

/** The reports the console printed, by status. */
const reports = (h: Harness) => [...h.output().matchAll(/=== Report \((\w+)\) ===/g)].map((m) => m[1]);

/** What the audit server received, as [type, tool, arguments]. */
const received = (audit: AuditServer) => audit.entries().map((e) => [e.type, e.name, e.args ?? null]);

/** Each step's attempts as stored: status, output and error, in the order they were made. */
async function storedSteps(h: Harness, runId: string) {
  const attempts: StoredStepAttempt[] = await h.store.listStepAttempts(runId);
  return Object.fromEntries(
    [...new Set(attempts.map((a) => a.stepId))].map((stepId) => [
      stepId,
      attempts
        .filter((a) => a.stepId === stepId)
        .map((a) => ({ attempt: a.attempt, status: a.status, output: a.output, error: a.error })),
    ]),
  );
}

describeNeeding(privatePostgresMissing, 'runs across PostgreSQL faults (private cluster)', () => {
  let server: PrivatePostgres;
  let audit: AuditServer;
  let h: Harness | undefined;

  beforeAll(async () => {
    server = await startPrivatePostgres();
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    audit = createAuditServer();
  });
  afterEach(async () => {
    // A test that failed half-way may have left the server down; the harness checks its invariants in the database.
    await server.start();
    await h?.close();
    h = undefined;
    audit.remove();
  });

  /** A fresh database on the private cluster, and the harness on it with the audit server and the given plan. */
  async function start(
    steps: unknown[],
    synthesizer: string,
    store?: (db: Kysely<DatabaseSchema>) => PgRunStore,
  ): Promise<Harness> {
    const name = `steward_fault_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5_000 });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const url = new URL(server.url);
    url.pathname = `/${name}`;
    h = await startHarness({
      db: { url: url.toString() },
      servers: [audit.config()],
      script: byRole({ planner: [planReply(steps)], synthesizer: [synthesizer] }),
      store,
    });
    return h;
  }

  /** A store that gives up on the database after 2 s (the default waits 15 s): an outage outlasts it quickly. */
  const impatient = (db: Kysely<DatabaseSchema>) => new PgRunStore(db, { retry: { budgetMs: 2_000 } });

  /** Types the request, approves its (medium-risk) plan, and waits until the audit server received `count` calls. */
  async function runUntilCalls(harness: Harness, count: number): Promise<void> {
    await harness.type('do the work');
    await harness.waitFor(/risk MEDIUM/);
    await harness.type('approve');
    await waitUntil(`the audit server to receive ${count} call(s)`, () => audit.entries().length >= count, {
      details: () => `console so far:\n${harness.output()}`,
    });
  }

  it('a fast restart while calls are in flight: every tool is called once, every result is stored, one report', async () => {
    // `long` spans the restart; the short ones end around it, so their ends are written while it happens.
    const harness = await start(
      [
        sleepStep('long', 5_000),
        sleepStep('s250', 250),
        sleepStep('s500', 500),
        sleepStep('s750', 750),
        noteStep('after', 'all done', ['long', 's250', 's500', 's750']),
      ],
      'All five steps ran.',
    );
    await runUntilCalls(harness, 4);

    await server.restart({ mode: 'fast' });
    // The restart is over and the long call is still in flight (its end is printed when it comes back).
    expect(harness.output(), 'the restart outlasted the call it was meant to overlap').not.toMatch(/✔ long succeeded/);

    await harness.waitFor(/=== Report \(completed\) ===\nAll five steps ran\./);
    await harness.steward.idle();

    expect(reports(harness)).toEqual(['completed']);
    const calls = received(audit);
    expect(calls).toHaveLength(5);
    expect(calls.at(-1), 'the last step is called last').toEqual(['call', 'note', { text: 'all done' }]);
    expect(calls).toEqual(
      expect.arrayContaining([
        ['call', 'sleep', { ms: 5_000 }],
        ['call', 'sleep', { ms: 250 }],
        ['call', 'sleep', { ms: 500 }],
        ['call', 'sleep', { ms: 750 }],
        ['call', 'note', { text: 'all done' }],
      ]),
    );
    const run = await onlyRun(harness);
    expect(run.status).toBe('completed');
    const ok = (output: unknown) => [{ attempt: 1, status: 'succeeded', output, error: null }];
    expect(await storedSteps(harness, run.id)).toEqual({
      long: ok(slept(5_000)),
      s250: ok(slept(250)),
      s500: ok(slept(500)),
      s750: ok(slept(750)),
      after: ok(noted('all done')),
    });
    expect(harness.logs.filter((l) => l.startsWith('error'))).toEqual([]);
  });

  it(
    'a 20 s outage: no call goes out while it lasts, the result of the call in flight is kept and stored after it, one report',
    { timeout: 90_000 },
    async () => {
      const harness = await start(
        [
          sleepStep('first', 3_000),
          noteStep('second', 'after the outage', ['first']),
          sleepStep('third', 10, ['second']),
        ],
        'Three steps ran.',
      );
      await runUntilCalls(harness, 1);

      // The outage (as `outage(20_000)`, with its window measured): stop, 20 s down, start.
      await server.stop();
      const downAt = Date.now();
      const receivedWhenDown = received(audit);
      expect(harness.output(), 'the call ended before the outage began').not.toMatch(/✔ first succeeded/);
      // The call in flight comes back while the database is away; its result is shown, and kept.
      await harness.waitFor(/✔ first succeeded/, 10_000);
      await sleep(downAt + 20_000 - Date.now()); // the outage's length is what this test is about
      const receivedWhenUp = received(audit);
      const shownWhenUp = harness.output();
      const upAt = Date.now();
      await server.start();

      expect(receivedWhenDown).toEqual([['call', 'sleep', { ms: 3_000 }]]);
      expect(receivedWhenUp, 'calls the audit server received during the outage').toEqual(receivedWhenDown);
      expect(shownWhenUp, 'the next step started during the outage').not.toMatch(/▶ second running/);
      const sentDuringOutage = harness.calls.filter((c) => c.at >= downAt && c.at < upAt);
      expect(sentDuringOutage, 'calls Steward sent during the outage').toEqual([]);

      await harness.waitFor(/=== Report \(completed\) ===\nThree steps ran\./, 30_000);
      await harness.steward.idle();

      expect(reports(harness)).toEqual(['completed']);
      expect(received(audit)).toEqual([
        ['call', 'sleep', { ms: 3_000 }],
        ['call', 'note', { text: 'after the outage' }],
        ['call', 'sleep', { ms: 10 }],
      ]);
      expect(harness.calls.map((c) => [c.name, c.at >= upAt])).toEqual([
        ['audit.sleep', false],
        ['audit.note', true],
        ['audit.sleep', true],
      ]);
      const run = await onlyRun(harness);
      expect(run.status).toBe('completed');
      const ok = (output: unknown) => [{ attempt: 1, status: 'succeeded', output, error: null }];
      expect(await storedSteps(harness, run.id)).toEqual({
        first: ok(slept(3_000)),
        second: ok(noted('after the outage')),
        third: ok(slept(10)),
      });
      // The operator's log says the run was held, and that it went on.
      expect(harness.logs.join('\n')).toMatch(/cannot store the end of step first .*holding and retrying/);
      expect(harness.logs.join('\n')).toMatch(/the database is back; carrying on/);
      expect(harness.logs.filter((l) => l.startsWith('error'))).toEqual([]);
    },
  );

  // Stop aborts a local run's calls before the database is asked, so it works while the database is away, even past
  // the store's retry budget; the run ends stopped once the database is back.
  for (const downMs of [5_000, 20_000]) {
    const budget = downMs > 15_000 ? 'longer than' : 'within';
    it(
      `stop during a ${downMs / 1000} s outage (${budget} the store's retry budget) cancels the call in flight at once; the run ends stopped once the database is back`,
      { timeout: 90_000 },
      async () => {
        const harness = await start(
          [sleepStep('long', 60_000), noteStep('after', 'never', ['long'])],
          'Stopped early.',
        );
        await runUntilCalls(harness, 1);
        await harness.waitFor(/▶ long running/);

        await server.stop();
        const downAt = Date.now();
        // Not awaited: the decision may wait for the database; the cancellation must not.
        const typed = harness.type('stop');
        await waitUntil(
          'the audit server to record the cancellation while the database is down',
          () => audit.entries().some((e) => e.type === 'cancelled'),
          {
            timeoutMs: 5_000,
            details: () => `console:\n${harness.output()}\nlog:\n${harness.logs.join('\n')}`,
          },
        );
        expect(received(audit)).toEqual([
          ['call', 'sleep', { ms: 60_000 }],
          ['cancelled', 'sleep', null],
        ]);
        await sleep(downAt + downMs - Date.now()); // the rest of the outage
        expect(reports(harness), 'a report while the database is down').toEqual([]);
        await server.start();

        await harness.waitFor(/=== Report \(stopped\) ===\nStopped early\./, 30_000);
        await typed;
        await harness.steward.idle();

        expect(reports(harness)).toEqual(['stopped']);
        expect(received(audit), 'the next step must never be called').toEqual([
          ['call', 'sleep', { ms: 60_000 }],
          ['cancelled', 'sleep', null],
        ]);
        const run = await onlyRun(harness);
        expect(run.status).toBe('stopped');
        expect(await storedSteps(harness, run.id)).toMatchObject({
          long: [{ attempt: 1, status: 'cancelled' }],
          after: [{ status: 'skipped' }],
        });
      },
    );
  }
  // Pause and Resume reach the driver of a run this process drives even when the database stays away longer than the
  // store will wait: the person hears at once that it took effect, and it is recorded once the database is back.
  it(
    'pause and resume during outages longer than the store waits: each takes effect here, nothing new starts while paused, both are recorded once the database is back',
    { timeout: 90_000 },
    async () => {
      const harness = await start(
        [
          sleepStep('first', 3_000),
          noteStep('second', 'after the pause', ['first']),
          sleepStep('third', 10, ['second']),
        ],
        'Paused, resumed, done.',
        impatient,
      );
      await runUntilCalls(harness, 1);
      const run = await onlyRun(harness);

      await server.stop();
      const paused = harness.type('pause');
      await harness.waitFor(/Paused: nothing new starts until you resume\. \(.*the database is unreachable/, 20_000);
      // The call in flight ends during the outage; its end is stored with whatever starts next, once the database is back.
      await harness.waitFor(/✔ first succeeded/, 10_000);
      await server.start();
      await paused;
      await waitForStoredEnd(harness.store, run.id, 'first');
      await waitUntil('the pause to be stored', async () => (await harness.store.getRun(run.id))?.status === 'paused');
      expect(received(audit), 'a step started after the pause').toEqual([['call', 'sleep', { ms: 3_000 }]]);
      expect(Object.keys(await storedSteps(harness, run.id))).toEqual(['first']);

      await server.stop();
      const resumed = harness.type('resume');
      await harness.waitFor(/Resumed\. \(.*the database is unreachable/, 20_000);
      expect(received(audit), 'a call went out while the database was away').toEqual([
        ['call', 'sleep', { ms: 3_000 }],
      ]);
      await server.start();
      await resumed;
      await harness.waitFor(/=== Report \(completed\) ===\nPaused, resumed, done\./, 30_000);
      await harness.steward.idle();

      expect(received(audit)).toEqual([
        ['call', 'sleep', { ms: 3_000 }],
        ['call', 'note', { text: 'after the pause' }],
        ['call', 'sleep', { ms: 10 }],
      ]);
      expect((await harness.store.getRun(run.id))?.status).toBe('completed');
      const controls = (await harness.store.listDecisions(run.id)).filter((d) => d.action !== 'approve');
      expect(controls.map((d) => [d.action, d.accepted, d.note])).toEqual([
        ['pause', true, 'applied while the database was unreachable'],
        ['resume', true, 'applied while the database was unreachable'],
      ]);
      expect(reports(harness)).toEqual(['completed']);
    },
  );
});
