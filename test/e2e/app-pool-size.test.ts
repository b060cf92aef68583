/** The composition root opens PostgreSQL with the pool size the operator set in STEWARD_DB_POOL_SIZE. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';

let app: App | undefined;
let llm: FakeLlm | undefined;
let db: TestDatabase | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  await llm?.close();
  await db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('Steward holds no more PostgreSQL connections than STEWARD_DB_POOL_SIZE, however many queries wait', async () => {
  db = await createTestDatabase('postgres');
  llm = await startFakeLlm();
  dir = mkdtempSync(join(tmpdir(), 'steward-pool-'));
  const env = {
    DATABASE_URL: testDatabaseUrlFor(db.name),
    STEWARD_DB_POOL_SIZE: '2',
    OPENAI_BASE_URL: llm.baseURL,
    // Quick answers off: these scripts have no butler turn (test/e2e/quick-answers.test.ts turns them on).
    STEWARD_QUICK_ANSWERS: 'off',
    STEWARD_MODEL: 'm',
    DATA_DIR: dir,
    MCP_CONFIG: join(dir, 'missing-mcp.json'),
  };
  app = await startApp({ env, input: new PassThrough(), output: new PassThrough() });
  expect(app.config.databasePoolSize).toBe(2);

  const queries = Array.from({ length: 6 }, () =>
    sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.2)`.execute(app!.database.db),
  );
  const pids = new Set((await Promise.all(queries)).map((r) => r.rows[0]?.pid));
  expect(pids.size).toBe(2);
});
