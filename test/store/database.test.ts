import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { stewardError } from '../helpers/steward-error.ts';
import { createNewRun } from './builders.ts';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'steward-db-test-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('openDatabase', () => {
  it('reports an unreachable PostgreSQL by address, never with the password', async () => {
    const password = 'hunter2-s3cret';
    const error = await stewardError(
      openDatabase({ databaseUrl: `postgres://steward:${password}@127.0.0.1:1/steward`, dataDir: await tempDir() }),
    );
    const { message, code, retryable } = error;
    expect(message).toBe('cannot reach PostgreSQL at 127.0.0.1:1: ECONNREFUSED');
    expect({ code, retryable }).toEqual({ code: 'store_failed', retryable: true });
    expect(String(error) + String(error.stack)).not.toContain(password);
  });

  it('says a malformed URL is malformed without echoing it', async () => {
    const error = await stewardError(
      openDatabase({ databaseUrl: 'postgres://u:pa ss@[bad', dataDir: await tempDir() }),
    );
    expect(error).toMatchObject({ code: 'config', message: 'DATABASE_URL is not a valid postgres:// URL' });
    expect(error.cause).toBeUndefined();
  });

  it('reports a missing database as a configuration problem', async () => {
    const error = await stewardError(
      openDatabase({
        databaseUrl: 'postgres://postgres@127.0.0.1:5432/steward_no_such_database',
        dataDir: await tempDir(),
      }),
    );
    expect(error).toMatchObject({ code: 'config' });
    expect(error.message).toMatch(/^PostgreSQL at 127\.0\.0\.1:5432 refused access: .*does not exist/);
  });

  it('keeps PGlite data in <dataDir>/pglite across reopenings', async () => {
    const dataDir = await tempDir();
    const first = await openDatabase({ dataDir });
    const run = createNewRun();
    try {
      expect(first.kind).toBe('pglite');
      await new PgRunStore(first.db).createRun(run);
    } finally {
      await first.close();
    }
    await access(join(dataDir, 'pglite', 'PG_VERSION'));
    const second = await openDatabase({ dataDir });
    try {
      expect((await new PgRunStore(second.db).getRun(run.id))?.request).toBe(run.request);
    } finally {
      await second.close();
    }
    // PGlite starts in WASM and migrates a new folder: seconds each, more on a loaded machine.
  }, 90_000);
  it('refuses a second process on the same PGlite folder, naming it, and takes over a lock a dead process left', async () => {
    const dataDir = await tempDir();
    const first = await openDatabase({ dataDir });
    try {
      // This process holds the folder: a second opening (as a second Steward would) is refused.
      const refusal = await stewardError(openDatabase({ dataDir }));
      expect(refusal).toMatchObject({ code: 'config' });
      expect(refusal.message).toContain(`Another Steward process (pid ${process.pid}) is using the PGlite database`);
      expect(refusal.message).toContain('set DATABASE_URL to a PostgreSQL server to run several');
    } finally {
      await first.close();
    }
    const lockFile = join(dataDir, 'pglite', 'steward.lock');
    // Another live process holds it.
    const other = spawn('sleep', ['30']);
    try {
      await writeFile(lockFile, String(other.pid));
      const refusal = await stewardError(openDatabase({ dataDir }));
      expect(refusal.message).toContain(`(pid ${other.pid})`);
    } finally {
      other.kill('SIGKILL');
      await once(other, 'exit');
    }
    // That process is gone now (as after kill -9): its lock is taken over.
    const reopened = await openDatabase({ dataDir });
    try {
      expect(await readFile(lockFile, 'utf8')).toBe(String(process.pid));
    } finally {
      await reopened.close();
    }
    await expect(access(lockFile)).rejects.toThrow();
  }, 90_000);
});
