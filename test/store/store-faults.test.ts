/**
 * The store against a PostgreSQL server that really goes away: a private cluster (test/helpers/private-postgres.ts)
 * restarted, crashed and stopped under `PgRunStore` writes. A write caught by a short outage must succeed once the
 * server is back and be applied exactly once; one caught by an outage longer than the store's retry budget must
 * fail as a retryable `store_failed` that names no secret.
 *
 * The writes: `transition` (true, the run moved once), `takeAmendmentRound` (round 1, not 2) and `claimInbound`
 * of a new key (true, not false: a repeat must recognise its own claim).
 */
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { StewardError } from '../../src/engine/errors.ts';
import { openDatabase, type StoreDatabase } from '../../src/store/database.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { startLossyProxy, type LossyProxy } from '../helpers/lossy-proxy.ts';
import { describeNeeding } from '../helpers/needs.ts';
import {
  privatePostgresMissing,
  startPrivatePostgres,
  type PrivatePostgres,
  type ShutdownMode,
} from '../helpers/private-postgres.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createNewRun } from './builders.ts';

// In the store's URL; trust authentication never asks for it, so it can only show up where it must not.
const PASSWORD_CANARY = `pw-canary-${randomUUID()}`;
const at = new Date('2026-12-01T10:00:00.000Z');
const modes: ShutdownMode[] = ['fast', 'immediate'];

/** One write under test, set up and ready to send: what it should answer, and its effect as read back. */
interface Write {
  send(store: PgRunStore): Promise<unknown>;
  answer: unknown;
  /** The effect as the database holds it; `applied` once the write went through once. */
  effect(): Promise<unknown>;
  applied: unknown;
  /** A statement that, run in an open transaction, makes the write wait for that transaction. */
  lock: { sql: string; values: unknown[] };
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** A write's outcome as a value, so that one failing while the test awaits something else is not unhandled. */
function settle(promise: Promise<unknown>): Promise<Outcome> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

/** What a test compares: the answer, or the failure as one line (its code, whether retryable, its message). */
function shown(outcome: Outcome): unknown {
  if (outcome.ok) return outcome.value;
  const { error } = outcome;
  if (error instanceof StewardError)
    return `failed: ${error.code}${error.retryable ? ' (retryable)' : ''}: ${error.message}`;
  return `failed: ${error instanceof Error ? error.message : String(error)}`;
}

/** The outcome, or a failed one once `ms` have passed without it. */
async function within(ms: number, outcome: Promise<Outcome>): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, error: `no outcome after ${ms} ms` }), ms);
  });
  try {
    return await Promise.race([outcome, late]);
  } finally {
    clearTimeout(timer);
  }
}

describeNeeding(privatePostgresMissing, 'store writes across PostgreSQL faults', () => {
  let server: PrivatePostgres;
  let proxy: LossyProxy;
  let direct: StoreDatabase;
  let proxied: StoreDatabase;
  let store: PgRunStore;
  let proxiedStore: PgRunStore;
  const poolErrors: Error[] = [];
  // A pg client that loses its connection while the store holds it (mid-query) emits 'error'; with no listener
  // that is an uncaught exception, which would end Steward's process. Each test checks that none happened.
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);

  beforeAll(async () => {
    process.on('uncaughtException', onUncaught);
    server = await startPrivatePostgres();
    proxy = await startLossyProxy(server.port);
    const url = new URL(server.url);
    url.password = PASSWORD_CANARY;
    const onPoolError = (error: Error) => poolErrors.push(error);
    direct = await openDatabase({ databaseUrl: url.toString(), dataDir: tmpdir(), onPoolError });
    url.port = String(proxy.port);
    proxied = await openDatabase({ databaseUrl: url.toString(), dataDir: tmpdir(), onPoolError });
    store = new PgRunStore(direct.db);
    proxiedStore = new PgRunStore(proxied.db);
  });
  afterEach(() => {
    const seen = uncaught.splice(0).map((e) => (e instanceof Error ? e.message : String(e)));
    expect(seen, 'uncaught exceptions: the process would have crashed').toEqual([]);
  });
  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await direct?.close();
    await proxied?.close();
    await proxy?.close();
    await server?.close();
  });

  /** Runs `work` on a new connection straight to the server (not through the proxy, nor the store's pool). */
  async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }
  const one = async (sql: string, values: unknown[]) =>
    admin(async (c) => (await c.query<{ v: unknown }>(sql, values)).rows[0]?.v);

  async function newRun(): Promise<string> {
    const run = createNewRun();
    await store.createRun(run);
    return run.id;
  }

  const writes: Record<string, () => Promise<Write>> = {
    async transition() {
      const id = await newRun();
      return {
        send: (s) => s.transition(id, ['planning'], 'running'),
        answer: true,
        effect: () => one('SELECT status AS v FROM runs WHERE id = $1', [id]),
        applied: 'running',
        lock: { sql: 'SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', values: [id] },
      };
    },
    async takeAmendmentRound() {
      const id = await newRun();
      return {
        send: (s) => s.takeAmendmentRound(id, 3),
        answer: 1,
        effect: () => one('SELECT amendment_rounds AS v FROM runs WHERE id = $1', [id]),
        applied: 1,
        lock: { sql: 'SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', values: [id] },
      };
    },
    async claimInbound() {
      const key = `event-${randomUUID()}`;
      return {
        send: (s) => s.claimInbound(key, at),
        answer: true,
        effect: () => one('SELECT count(*)::int AS v FROM inbound_events WHERE key = $1', [key]),
        applied: 1,
        // The same key inserted by a transaction still open: the store's insert waits to see whether it commits.
        lock: { sql: 'INSERT INTO inbound_events (key, created_at) VALUES ($1, now())', values: [key] },
      };
    },
  };
  const cases = modes.flatMap((mode) => Object.keys(writes).map((name) => [name, mode] as const));

  it.each(cases)(
    '%s waiting on a lock when PostgreSQL restarts (%s) is applied once the server is back',
    async (name, mode) => {
      const write = await writes[name]!();
      const holder = new pg.Client({ connectionString: server.url });
      holder.on('error', () => undefined); // the restart ends its session
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(write.lock.sql, write.lock.values);
        const outcome = settle(write.send(store));
        // In flight for certain: the store's statement is queued behind the holder's lock.
        await waitUntil('the write to wait on the lock', async () => {
          const { rows } = await holder.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()',
          );
          return rows[0]!.n > 0;
        });
        await server.restart({ mode });
        expect(shown(await outcome)).toEqual(write.answer);
        expect(await write.effect()).toEqual(write.applied);
      } finally {
        await holder.end().catch(() => undefined);
      }
    },
  );

  it.each(cases)(
    '%s whose answer is lost when PostgreSQL restarts (%s) is applied once, and answers as if nothing happened',
    async (name, mode) => {
      const write = await writes[name]!();
      // An idle connection in the proxied pool for the write to take; its replies will now be lost.
      await proxiedStore.getRun('warm-up');
      const lostBefore = proxy.lostBytes();
      proxy.loseReplies();
      const outcome = settle(write.send(proxiedStore));
      await waitUntil('the write to commit without its answer arriving', async () => {
        if (proxy.lostBytes() === lostBefore) return false;
        return JSON.stringify(await write.effect()) === JSON.stringify(write.applied);
      });
      await server.restart({ mode });
      expect(shown(await outcome)).toEqual(write.answer);
      expect(await write.effect()).toEqual(write.applied);
    },
  );

  it('writes sent during a 3 s outage succeed after it, each applied once', async () => {
    const names = Object.keys(writes);
    const pending = await Promise.all(names.map((name) => writes[name]!()));
    await server.stop();
    const outcomes = pending.map((w) => settle(w.send(store)));
    await sleep(3_000); // the outage
    await server.start();
    expect((await Promise.all(outcomes)).map(shown)).toEqual(pending.map((w) => w.answer));
    for (const w of pending) expect(await w.effect()).toEqual(w.applied);
  });

  it('a write during an outage longer than the retry budget fails with a retryable store_failed naming no secret', async () => {
    const key = `event-${randomUUID()}`;
    await server.stop();
    let outcome: Outcome;
    let elapsed: number;
    try {
      // The outage lasts until the store gives up (at most a minute), whatever its budget is.
      const started = performance.now();
      outcome = await within(60_000, settle(store.claimInbound(key, at)));
      elapsed = performance.now() - started;
    } finally {
      await server.start();
    }
    if (outcome.ok) throw new Error(`the write succeeded with the server down: ${JSON.stringify(outcome.value)}`);
    const { error } = outcome;
    expect(error).toBeInstanceOf(StewardError);
    expect(error).toMatchObject({ code: 'store_failed', retryable: true });
    const text = error instanceof Error ? `${error.stack}\n${String(error.cause)}` : String(error);
    expect(text).not.toContain(PASSWORD_CANARY);
    expect(text).not.toContain('postgres://');
    // It retried: the budget outlasts the 3 s outage the store must ride out (above).
    expect(elapsed, `gave up after ${Math.round(elapsed)} ms: ${String(error)}`).toBeGreaterThan(3_000);
    console.info(`store gave up after ${Math.round(elapsed)} ms: ${String(error)}`);
    // The failed claim left nothing behind, and the store works again.
    expect(await store.claimInbound(key, at)).toBe(true);
  }, 120_000);
});
