/**
 * Gives a test its own migrated database, so test files run in parallel and never share rows.
 *
 *   const store = await createTestDatabase('postgres'); // or 'pglite'
 *   afterAll(() => store.close());                      // closes the pool and drops the database
 *
 * PostgreSQL: `TEST_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test) must let us CREATE DATABASE.
 * Each call clones a migrated template (`CREATE DATABASE ... TEMPLATE`), which is made once per migration set. Within
 * a `vitest run` (whose global setup names the run, `TEST_RUN_ENV`), a closed database is emptied instead of dropped
 * and given to the process's next test: `CREATE DATABASE` writes the whole template (some 9 MB) to the server's WAL,
 * and with hundreds of them the server spent as much CPU as the tests did. A database whose tables or migrations
 * are not the template's after a test is dropped, never reused; the run's global teardown drops what is left.
 * PGlite: a copy of a migrated data folder (made once per migration set, kept under the OS temp dir) in a folder of
 * its own, removed on close. Expect ~0.5 s to open one (WASM start-up).
 */
import { createHash, randomBytes } from 'node:crypto';
import { access, cp, mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrations } from '../../migrations/index.ts';
import { openDatabase, type StoreDatabase } from '../../src/store/database.ts';

/** A test's own database; `name` is the PostgreSQL database name or the PGlite folder. */
export type TestDatabase = StoreDatabase & { name: string };

/** The admin URL tests connect to; databases are created next to its database. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// Any constant works; it only has to be the same in every test process.
const TEMPLATE_LOCK_KEY = 7_406_173_001;

const MIGRATIONS_DIR = new URL('../../migrations/', import.meta.url);

let template: Promise<string> | undefined;
/** Databases closed tests left, emptied, for this process's next ones (only within a vitest run). */
const spare: string[] = [];
/** The template's tables and migrations as a fingerprint, and the statement that empties a database of its rows. */
let templateShape: Promise<{ fingerprint: string; empty: string }> | undefined;

/** The environment variable naming this `vitest run` (set by test/global-setup.ts); its databases carry the name. */
export const TEST_RUN_ENV = 'STEWARD_TEST_RUN';
let pgliteTemplate: Promise<string> | undefined;

/** Opens a new, migrated, empty database of the given kind; `close()` also deletes it. */
export async function createTestDatabase(kind: 'postgres' | 'pglite'): Promise<TestDatabase> {
  return kind === 'postgres' ? createPostgresDatabase() : createPgliteDatabase();
}

/**
 * Puts a copy of a migrated PGlite database into `dataDir` (where the app's DATA_DIR keeps it), for tests of the
 * composition root that are not about a first start: it opens with 1.6 s of CPU instead of the 5 s a new one takes
 * to create and migrate. `test/e2e/slack-app.test.ts` still starts on an empty folder, as a fresh machine does.
 */
export async function seedPglite(dataDir: string): Promise<void> {
  pgliteTemplate ??= ensurePgliteTemplate();
  await cp(await pgliteTemplate, join(dataDir, 'pglite'), { recursive: true });
}

/** The URL of database `name` on the test server. */
export function testDatabaseUrlFor(name: string): string {
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function createPostgresDatabase(): Promise<TestDatabase> {
  template ??= ensureTemplate();
  const templateName = await template;
  const run = process.env[TEST_RUN_ENV];
  let name = run ? spare.pop() : undefined;
  if (!name) {
    name = `steward_t_${run ? `${run}_` : ''}${randomBytes(6).toString('hex')}`;
    await withAdmin((admin) => admin.query(`CREATE DATABASE ${name} TEMPLATE ${templateName}`));
  }
  const own = name;
  const drop = () => withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${own} WITH (FORCE)`));
  let store: StoreDatabase;
  try {
    store = await openDatabase({ databaseUrl: testDatabaseUrlFor(own), dataDir: tmpdir() });
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    ...store,
    name: own,
    async close() {
      try {
        await store.close();
      } finally {
        if (run && (await emptied(own, templateName))) spare.push(own);
        else await drop();
      }
    },
  };
}

/**
 * Empties a test's database for the next test: every other connection to it ended (a child process's too, as DROP
 * ... WITH (FORCE) would), every row gone and every sequence back at its start (as TRUNCATE ... RESTART IDENTITY). False, and nothing reused, when that
 * fails or the database's tables or migrations no longer match the template's.
 */
async function emptied(name: string, templateName: string): Promise<boolean> {
  templateShape ??= shapeOf(templateName);
  const client = new pg.Client({ connectionString: testDatabaseUrlFor(name), connectionTimeoutMillis: 10_000 });
  try {
    const shape = await templateShape;
    await client.connect();
    await client.query('SET lock_timeout = 10000');
    await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    const now = await client.query<{ fingerprint: string }>(FINGERPRINT_SQL);
    if (now.rows[0]?.fingerprint !== shape.fingerprint) return false;
    await client.query(shape.empty);
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

// The tables, their columns and types, and the migrations applied: what a test must find as the template left it.
const FINGERPRINT_SQL = `SELECT md5(
  coalesce((SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ',' ORDER BY table_name, column_name)
            FROM information_schema.columns WHERE table_schema = 'public'), '')
  || '|' || coalesce((SELECT string_agg(name, ',' ORDER BY name) FROM kysely_migration), '')) AS fingerprint`;

async function shapeOf(templateName: string): Promise<{ fingerprint: string; empty: string }> {
  const client = new pg.Client({ connectionString: testDatabaseUrlFor(templateName), connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const fingerprint = (await client.query<{ fingerprint: string }>(FINGERPRINT_SQL)).rows[0]!.fingerprint;
    const tables = await client.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
       WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely_migration%' ORDER BY tablename`,
    );
    const sequences = await client.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, sequencename) AS name FROM pg_sequences WHERE schemaname = 'public'
       ORDER BY sequencename`,
    );
    // DELETE rather than TRUNCATE: a test leaves a few rows, and TRUNCATE gives each of some 30 tables and their
    // indexes new files (about 300 ms a database on this machine, against 20 ms). With the foreign keys' triggers
    // off for the transaction (a superuser's session_replication_role), the order of the tables does not matter.
    const empty = [
      'BEGIN',
      'SET LOCAL session_replication_role = replica',
      ...tables.rows.map((t) => `DELETE FROM ${t.name}`),
      ...sequences.rows.map((q) => `ALTER SEQUENCE ${q.name} RESTART`),
      'COMMIT',
    ].join(';\n');
    return { fingerprint, empty };
  } finally {
    await client.end();
  }
}

/** Drops every database of run `run` (the global teardown of a vitest run). */
export async function dropRunDatabases(run: string): Promise<void> {
  await withAdmin(async (admin) => {
    const found = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `steward\\_t\\_${run}\\_%`,
    ]);
    for (const { datname } of found.rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  });
}

async function createPgliteDatabase(): Promise<TestDatabase> {
  pgliteTemplate ??= ensurePgliteTemplate();
  const template = await pgliteTemplate;
  const dir = await mkdtemp(join(tmpdir(), 'steward-test-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  let store: StoreDatabase;
  try {
    // A copy of a migrated data folder opens in a fraction of the time a new one takes to create and migrate.
    await cp(template, join(dir, 'pglite'), { recursive: true });
    store = await openDatabase({ dataDir: dir });
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    ...store,
    name: dir,
    async close() {
      try {
        await store.close();
      } finally {
        await remove();
      }
    },
  };
}

/**
 * A migrated PGlite data folder to copy, made once per migration set and shared by every test process: built in a
 * folder of its own and renamed into place, so a process never copies a half-made one (when two build at once, the
 * rename of the second fails and it uses the first's).
 */
async function ensurePgliteTemplate(): Promise<string> {
  const root = join(tmpdir(), 'steward-pglite-templates');
  const ready = join(root, await migrationsHash());
  if (await exists(join(ready, 'PG_VERSION'))) return ready;
  await mkdir(root, { recursive: true });
  const building = await mkdtemp(join(root, 'building-'));
  try {
    const store = await openDatabase({ dataDir: building });
    await store.close();
    await rename(join(building, 'pglite'), ready).catch(async (error: unknown) => {
      if (!(await exists(join(ready, 'PG_VERSION')))) throw error;
    });
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return ready;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** Makes the migrated template once per migration set, even when many test processes ask at the same moment. */
async function ensureTemplate(): Promise<string> {
  const name = `steward_template_${await migrationsHash()}`;
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount) return;
      // Built under another name and renamed when migrated, so a crash never leaves a half-made template.
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      const store = await openDatabase({ databaseUrl: testDatabaseUrlFor(building), dataDir: tmpdir() });
      await store.close();
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  });
  return name;
}

// Hashes the migration files' bytes, not just names: a migration edited during development then gets a fresh
// template instead of a stale one. (Function.toString() would differ between vitest's and tsx's transpilers.)
async function migrationsHash(): Promise<string> {
  const hash = createHash('sha256');
  hash.update(Object.keys(migrations).join('\n'));
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.ts')).sort();
  for (const file of files) hash.update(`\n${file}\n`).update(await readFile(new URL(file, MIGRATIONS_DIR)));
  return hash.digest('hex').slice(0, 16);
}

async function withAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: testDatabaseUrl, connectionTimeoutMillis: 10_000 });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}
