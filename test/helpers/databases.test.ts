/**
 * Test databases on PostgreSQL are emptied and reused within a vitest run (test/helpers/databases.ts): the next test
 * must find one exactly as the template left it, and one whose tables a test changed must not come back.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createNewRun } from '../store/builders.ts';
import { createTestDatabase, TEST_RUN_ENV } from './databases.ts';

describe('test databases on PostgreSQL', () => {
  it('within a run, a closed database comes back empty, its sequences restarted', async () => {
    expect(process.env[TEST_RUN_ENV], 'the global setup names the run').toBeTruthy();
    const first = await createTestDatabase('postgres');
    await sql`INSERT INTO user_preferences (channel, user_id, review) VALUES ('console', 'ada', 'all')`.execute(
      first.db,
    );
    // Rows that others refer to (a run, its event and a queued decision) go too, whatever order the tables are in.
    const run = createNewRun();
    const store = new PgRunStore(first.db);
    await store.createRun(run);
    await store.forwardDecision(run.id, { action: 'pause' });
    const name = first.name;
    await first.close();
    const second = await createTestDatabase('postgres');
    try {
      expect(second.name).toBe(name);
      const rows = await sql<{ n: string }>`SELECT (SELECT count(*) FROM user_preferences) + (SELECT count(*) FROM runs)
        + (SELECT count(*) FROM run_events) + (SELECT count(*) FROM run_commands) AS n`.execute(second.db);
      expect(rows.rows[0]?.n).toBe('0');
      await sql`INSERT INTO user_preferences (channel, user_id, review) VALUES ('console', 'ada', 'all')`.execute(
        second.db,
      );
      const ids = await sql<{ id: string }>`SELECT id FROM user_preferences`.execute(second.db);
      expect(ids.rows.map((r) => r.id)).toEqual(['1']);
    } finally {
      await second.close();
    }
  });

  it('a database whose tables a test changed is dropped, not given to the next test', async () => {
    const first = await createTestDatabase('postgres');
    await sql`CREATE TABLE leftover (id int)`.execute(first.db);
    const name = first.name;
    await first.close();
    const second = await createTestDatabase('postgres');
    try {
      expect(second.name).not.toBe(name);
      const found = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_tables WHERE tablename = 'leftover'`.execute(
        second.db,
      );
      expect(found.rows[0]?.n).toBe('0');
    } finally {
      await second.close();
    }
  });
});
