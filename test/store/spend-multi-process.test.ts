/**
 * Spend caps hold across processes (issue 30): three processes, each with its own pool on one PostgreSQL database,
 * make 100 model calls at once through Steward's metered client against one workspace cap. The database judges each
 * reservation in one statement, so the totals never pass the cap by more than one call's reservation, even with a
 * model that reads 10 % more prompt than the client's estimate (the one way a settled call can charge more than it
 * reserved). The parent samples the workspace's total all along and reports the largest overshoot it saw.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_SPEND_CAPS, spendWindows } from '../../src/engine/spend.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun } from './builders.ts';
import type { SpendJob } from './spend-worker.ts';

const ROOT = join(import.meta.dirname, '../..');
const TSX = pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('tsx')).href;
const WORKER = join(import.meta.dirname, 'spend-worker.ts');

/** $1 per million input tokens, $4 per million output tokens. */
const prices = [
  { name: 'test', model: 'gpt-test', prices: { inputPerMillion: 1, outputPerMillion: 4, cachedInputPerMillion: 1 } },
];
/** $0.25 a day for the whole workspace. */
const CAP = 250_000;
const AT = '2026-12-05T12:00:00.000Z';

interface Worker {
  ready: Promise<unknown>;
  done: Promise<{ granted: number; refused: string[] }>;
  go(): void;
}

function startWorker(databaseUrl: string, job: SpendJob): Worker {
  const child = spawn(process.execPath, ['--import', TSX, WORKER], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, SPEND_JOB: JSON.stringify(job) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
  const ready = new Promise((resolve, reject) => {
    const onData = () => out.includes('ready\n') && resolve(undefined);
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${err}`)));
  });
  const done = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`worker exited with ${String(code)}: ${err}`);
    const line = out.split('\n').find((l) => l.startsWith('{'));
    return JSON.parse(line ?? '{}') as { granted: number; refused: string[] };
  });
  return { ready, done, go: () => child.stdin.end('go\n') };
}

describe('spend caps across three processes on postgres', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
  });
  afterAll(() => database?.close());

  it('100 concurrent model calls never take the workspace past its cap by more than one call’s reservation', async () => {
    const store = new PgRunStore(database.db);
    // Twelve runs in three channels, by four people: every call counts for the workspace, one channel, one person.
    const runs = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const run = createNewRun({ place: `C${i % 3}`, requester: { id: `U${i % 4}`, channel: 'slack' } });
        await store.createRun(run);
        return { id: run.id, requester: { id: run.requester.id, channel: 'slack' } };
      }),
    );
    const spend = {
      caps: { ...NO_SPEND_CAPS, workspace: { day: CAP, month: null } },
      defaultPricePerMillion: 15,
      roleModels: { llm_step: { model: 'gpt-test' } },
    };
    const job = (calls: number, offset: number): SpendJob => ({
      runs: [...runs.slice(offset), ...runs.slice(0, offset)],
      calls,
      spend,
      prices,
      inputFactor: 1.1,
      at: AT,
    });
    const url = testDatabaseUrlFor(database.name);
    const workers = [startWorker(url, job(34, 0)), startWorker(url, job(33, 4)), startWorker(url, job(33, 8))];
    await Promise.all(workers.map((w) => w.ready));

    // The workspace's total, sampled while the calls run: the largest value it ever had.
    const { day } = spendWindows(new Date(AT));
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await sql<{ micro_usd: string }>`
          SELECT micro_usd FROM spend_totals
          WHERE scope = 'workspace' AND period = 'day' AND starts = ${day}::date`.execute(database.db);
        peak = Math.max(peak, Number(rows[0]?.micro_usd ?? 0));
      }
    })();
    for (const w of workers) w.go();
    const results = await Promise.all(workers.map((w) => w.done));
    sampling = false;
    await sampler;

    const { rows } = await sql<{ micro_usd: string }>`
      SELECT micro_usd FROM spend_totals WHERE scope = 'workspace' AND period = 'day' AND starts = ${day}::date`.execute(
      database.db,
    );
    const final = Number(rows[0]?.micro_usd ?? 0);
    const charged = await sql<{ total: string; calls: string }>`
      SELECT sum(charged_micro_usd)::text AS total, count(*)::text AS calls FROM llm_usage`.execute(database.db);
    const granted = results.reduce((n, r) => n + r.granted, 0);
    const refused = results.flatMap((r) => r.refused);
    // One whole call: a prompt of about 1,010 tokens at $1 and 4,000 output tokens at $4 per million.
    const oneCall = Number(
      (await sql<{ m: string }>`SELECT max(spend_micro_usd)::text AS m FROM token_operations`.execute(database.db))
        .rows[0]?.m,
    );
    const overshoot = Math.max(final, peak) - CAP;
    console.log(
      `spend caps across 3 processes: ${granted} calls granted, ${refused.length} refused; cap ${CAP} µ$, final ${final} µ$, ` +
        `peak ${peak} µ$, overshoot ${Math.max(0, overshoot)} µ$ (one call's reservation: ${oneCall} µ$)`,
    );

    expect(granted + refused.length).toBe(100);
    expect(refused.every((code) => code === 'spend_capped')).toBe(true);
    expect(granted).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    // The totals are what the settled calls charged (nothing is left reserved) …
    expect(Number(charged.rows[0]?.total)).toBe(final);
    expect(Number(charged.rows[0]?.calls)).toBe(granted);
    // … and never passed the cap by more than one call's reservation, at any moment seen.
    expect(peak).toBeLessThanOrEqual(CAP + oneCall);
    expect(final).toBeLessThanOrEqual(CAP + oneCall);
    // The cap was in fact used up: the calls were not all refused early.
    expect(final).toBeGreaterThan(CAP - oneCall);
  }, 120_000);
});
