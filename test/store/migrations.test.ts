import { Migrator, NO_MIGRATIONS, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.ts';
import { migrateToLatest } from '../../src/store/database.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

const TABLES = [
  'decisions',
  'llm_usage',
  'plan_revisions',
  'run_events',
  'runs',
  'step_attempts',
  'workflows',
  'workflow_versions',
  'workflow_schedules',
  'workflow_fires',
  'delegations',
  'delegation_quotas',
  'delegation_rounds',
  'brake_trips',
  'assistants',
  'assistant_grants',
  'assistant_changes',
];

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

  it('creates the indexes recovery, replays and the scheduler use', async () => {
    const { rows } = await sql<{ indexname: string }>`
      select indexname from pg_indexes where schemaname = 'public'
    `.execute(store.db);
    const names = rows.map((r) => r.indexname);
    expect(names).toEqual(
      expect.arrayContaining([
        'runs_status_idx',
        'run_events_run_idx',
        'workflows_name_key',
        'workflow_schedules_due_idx',
        'workflow_fires_scheduled_key',
        'workflow_fires_run_idx',
        // The brakes' counters: each conditional statement finds its one row by these.
        'delegation_quotas_user_key',
        'delegation_rounds_key',
        'delegations_round_key',
        'delegations_child_run_id_key',
        'delegations_parent_idx',
        'delegations_open_idx',
        'brake_trips_op_key',
      ]),
    );
  });

  it('applies nothing when run again', async () => {
    expect(await migrateToLatest(store.db)).toEqual([]);
    expect(await migrateToLatest(store.db)).toEqual([]);
  });

  it('turns breakpoints stored as strings before 0004 into typed breakpoints, in order, and back', async () => {
    const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('0003-safety')).error).toBeUndefined();
    await sql`
      insert into runs (id, channel, conversation_key, requester_id, request, status, breakpoints)
      values ('legacy-bp', 'console', 'k', 'ada', 'r', 'paused', '["s2", "before:s3", "s1"]'::jsonb),
             ('legacy-none', 'console', 'k2', 'ada', 'r', 'running', '[]'::jsonb)
    `.execute(store.db);
    expect(await migrateToLatest(store.db)).toContain('0004-typed-breakpoints');
    const read = async () =>
      (await sql<{ id: string; breakpoints: unknown }>`select id, breakpoints from runs order by id`.execute(store.db))
        .rows;
    expect(await read()).toEqual([
      {
        id: 'legacy-bp',
        breakpoints: [
          { stepId: 's2', when: 'after' },
          { stepId: 's3', when: 'before' },
          { stepId: 's1', when: 'after' },
        ],
      },
      { id: 'legacy-none', breakpoints: [] },
    ]);
    expect((await migrator.migrateTo('0003-safety')).error).toBeUndefined();
    expect((await read())[0]?.breakpoints).toEqual(['s2', 'before:s3', 's1']);
    await migrateToLatest(store.db);
    await sql`delete from runs where id in ('legacy-bp', 'legacy-none')`.execute(store.db);
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
