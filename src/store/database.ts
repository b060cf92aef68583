/**
 * Opens Steward's database: PostgreSQL when a URL is given, otherwise PGlite (PostgreSQL in WASM) in the data
 * folder. Either way the schema is migrated to the latest version before the handle is returned.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, sql, type MigrationProvider } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { migrations } from '../../migrations/index.ts';
import { StewardError } from '../engine/errors.ts';
import type { RunSignals } from '../engine/ports.ts';
import { lockFolder, type FolderLock } from './folder-lock.ts';
import { pgliteSignals, postgresSignals } from './run-signals.ts';
import type { DatabaseSchema } from './schema.ts';
import { describeTarget, toStoreError } from './store-errors.ts';

/** An open, migrated database and the way to close it. */
export interface StoreDatabase {
  db: Kysely<DatabaseSchema>;
  kind: 'postgres' | 'pglite';
  /** Notifications between the processes on this database (within the one process, for PGlite). */
  signals: RunSignals;
  close(): Promise<void>;
}

/** Where the database is; PGlite keeps its files in `<dataDir>/pglite` when no URL is given. */
export interface OpenDatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  /** How long to wait for a PostgreSQL connection (default 10 s). */
  connectTimeoutMs?: number;
  /** Largest pool size (default 10). */
  maxConnections?: number;
  /** Told about errors on idle pooled connections (the pool has already dropped them). */
  onPoolError?: (error: Error) => void;
  /** Told when the connection that listens for run signals is lost and back. */
  log?: (level: 'info' | 'warn', message: string) => void;
}

/** Opens and migrates the database. Throws `StewardError` (`config` or `store_failed`) naming no secret. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<StoreDatabase> {
  const store = options.databaseUrl
    ? await openPostgres(options.databaseUrl, options)
    : await openPglite(join(options.dataDir, 'pglite'));
  try {
    await migrateToLatest(store.db);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/** Applies every pending migration under the migrator's lock; returns the names applied (none when up to date). */
export async function migrateToLatest(db: Kysely<DatabaseSchema>): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations) };
  const { error, results = [] } = await new Migrator({ db, provider }).migrateToLatest();
  if (error !== undefined) {
    const failed = results.find((r) => r.status === 'Error')?.migrationName;
    throw toStoreError(error, failed ? `migration ${failed}` : 'migrating the database');
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

async function openPostgres(databaseUrl: string, options: OpenDatabaseOptions): Promise<StoreDatabase> {
  const target = describeTarget(databaseUrl);
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    max: options.maxConnections ?? 10,
  });
  // Without a listener a connection dropped by a server restart would crash the process: the pool listens on idle
  // ones, and this listener covers one that is checked out (its query fails on its own and is retried).
  pool.on('error', (error) => options.onPoolError?.(error));
  pool.on('connect', (client) => client.on('error', (error) => options.onPoolError?.(error)));
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  const close = () => db.destroy();
  try {
    // Connect before migrating, so an unreachable server is reported with its address.
    await sql`select 1`.execute(db);
  } catch (error) {
    await close();
    throw toStoreError(error, 'connecting', target);
  }
  return { db, kind: 'postgres', signals: postgresSignals(databaseUrl, options.log ?? (() => undefined)), close };
}

async function openPglite(dir: string): Promise<StoreDatabase> {
  let lite: PGlite;
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new StewardError('store_failed', `cannot create the PGlite folder ${dir}: ${String(error)}`, {
      cause: error,
    });
  }
  const lock: FolderLock = lockFolder(dir);
  try {
    lite = await PGlite.create(dir);
  } catch (error) {
    lock.release();
    throw new StewardError('store_failed', `cannot open the PGlite database in ${dir}: ${String(error)}`, {
      cause: error,
    });
  }
  const db = new Kysely<DatabaseSchema>({ dialect: new PGliteDialect(lite) });
  return {
    db,
    kind: 'pglite',
    signals: pgliteSignals(lite),
    close: async () => {
      await db.destroy();
      lock.release();
    },
  };
}

/**
 * Whether the database answers and its migrations are all applied, for readiness probes. Never throws: a failure
 * is the answer, as a sentence that names no secret.
 */
export async function checkDatabase(db: Kysely<DatabaseSchema>): Promise<{ ok: boolean; detail?: string }> {
  try {
    await sql`select 1`.execute(db);
    const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations) };
    const pending = (await new Migrator({ db, provider }).getMigrations()).filter((m) => m.executedAt === undefined);
    if (pending.length > 0)
      return { ok: false, detail: `migrations not applied: ${pending.map((m) => m.name).join(', ')}` };
    return { ok: true };
  } catch (error) {
    return { ok: false, detail: toStoreError(error, 'checking the database').message };
  }
}
