/**
 * Taking over a batch of runs (issue 26, chaos seed 1: one run, two reports): every run of a claim is held at once
 * and resumed in turn, so a decision can reach a later one first. A run that moved since the claim (an Approve here
 * started its driver) is not resumed again from the status read at the claim, which would start a second driver.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunLifecycle } from '../../src/engine/flows/run-lifecycle.ts';
import { RunDrivers } from '../../src/engine/flows/run-drivers.ts';
import { RunLeases } from '../../src/engine/flows/run-leases.ts';
import { RunOwnership } from '../../src/engine/flows/run-ownership.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createNewRun } from '../store/builders.ts';

describe('run ownership: a batch taken over', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
  });
  afterAll(() => database?.close());

  it('a run that moved here after the claim (approved, now running) is not resumed from the status read at the claim', async () => {
    const gone = new PgRunStore(database.db, { owner: 'elsewhere:1:gone' });
    const at = new Date();
    const ids: string[] = [];
    for (const _ of [1, 2]) {
      const run = createNewRun();
      await gone.createRun(run);
      await gone.transition(run.id, ['planning'], 'awaiting_review', { at });
      ids.push(run.id);
    }
    const [first, second] = ids as [string, string];
    // Their holder is gone: the leases lapsed a minute ago. The first is the older, so it is resumed first.
    await sql`UPDATE runs SET lease_expires_at = now() - interval '1 minute' WHERE id IN (${first}, ${second})`.execute(
      database.db,
    );
    await sql`UPDATE runs SET created_at = created_at - interval '1 second' WHERE id = ${first}`.execute(database.db);

    const store = new PgRunStore(database.db);
    const logs: string[] = [];
    const resumed: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const lifecycle = { abandon: () => undefined, lose: () => undefined } as unknown as RunLifecycle;
    const ownership = new RunOwnership(
      { store, log: (level, text) => logs.push(`${level} ${text}`) },
      new RunLeases(store, 60_000),
      new RunDrivers(),
      lifecycle,
      {
        report: async () => undefined,
        replan: async () => undefined,
        apply: async () => undefined,
        recover: async (run) => {
          resumed.push(run.id);
          // The first run's takeover takes a while (it shows its card again, say).
          if (run.id === first) await gate;
        },
      },
    );
    const started = ownership.start();
    try {
      await waitUntil('the first run to be resumed', () => resumed.includes(first));
      // Meanwhile an Approve on the second run, held here since the claim, is decided here: it runs now.
      expect(await store.transition(second, ['awaiting_review'], 'running', { at })).toBe(true);
    } finally {
      open();
    }
    await started;
    await ownership.stop();

    expect(resumed, logs.join('\n')).toEqual([first]);
    expect(logs.join('\n')).toContain(`run ${second}: claimed awaiting review, but it is running now; not resumed`);
  });
});
