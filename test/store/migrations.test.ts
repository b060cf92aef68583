import { Migrator, NO_MIGRATIONS, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.ts';
import { migrateToLatest } from '../../src/store/database.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

const TABLES = ['decisions', 'llm_usage', 'plan_revisions', 'run_events', 'runs', 'step_attempts'];

describe.each(['postgres', 'pglite'] as const)('migrations on %s', (kind) => {
  let store: TestDatabase;
  beforeAll(async () => {
    store = await createTestDatabase(kind);
  });
  afterAll(() => store?.close());

  it('creates every table with an id and created_at', async () => {
    const { rows } = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_schema = 'public' and column_name in ('id', 'created_at')
    `.execute(store.db);
    for (const table of TABLES) {
      const columns = rows.filter((r) => r.table_name === table).map((r) => r.column_name);
      expect(columns.sort(), table).toEqual(['created_at', 'id']);
    }
  });

  it('creates the indexes recovery and replays use', async () => {
    const { rows } = await sql<{ indexname: string }>`
      select indexname from pg_indexes where schemaname = 'public'
    `.execute(store.db);
    const names = rows.map((r) => r.indexname);
    expect(names).toEqual(expect.arrayContaining(['runs_status_idx', 'run_events_run_idx']));
  });

  it('applies nothing when run again', async () => {
    expect(await migrateToLatest(store.db)).toEqual([]);
    expect(await migrateToLatest(store.db)).toEqual([]);
  });

  it('rolls back to nothing and forward again', async () => {
    const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => migrations } });
    const down = await migrator.migrateTo(NO_MIGRATIONS);
    expect(down.error).toBeUndefined();
    const left = await sql<{ n: number }>`
      select count(*)::int as n from information_schema.tables where table_name in (${sql.join(TABLES)})
    `.execute(store.db);
    expect(left.rows[0]?.n).toBe(0);
    expect(await migrateToLatest(store.db)).toEqual(Object.keys(migrations));
  });
});
