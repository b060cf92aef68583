/**
 * PGlite serves one process: two processes writing the same data folder would corrupt it. The folder holds a
 * lock file naming the process that uses it; a lock left behind by a process that no longer runs is taken over.
 */
import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { StewardError } from '../engine/errors.ts';
import { isProcessAlive } from '../process-alive.ts';

/** A held lock; `release` removes it (only if it is still this process's). */
export interface FolderLock {
  release(): void;
}

/** Takes the folder's lock for this process, or throws `config` naming the process that holds it. */
export function lockFolder(dir: string): FolderLock {
  const path = join(dir, 'steward.lock');
  // A few tries: a lock may be released, or taken over by another starting process, between the steps below.
  for (let tries = 0; tries < 3; tries++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return { release: () => releaseIfOurs(path) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw lockError(error, dir);
    }
    const holder = readHolder(path);
    if (holder !== undefined && (holder === process.pid || isProcessAlive(holder))) {
      throw new StewardError(
        'config',
        `Another Steward process (pid ${holder}) is using the PGlite database in ${dir}. PGlite serves one ` +
          'process: stop that one, or set DATABASE_URL to a PostgreSQL server to run several.',
      );
    }
    // Left by a process that has died (a crash or kill -9): take it over.
    removeIfPresent(path);
  }
  throw lockError(new Error('the lock kept changing hands'), dir);
}

/** The pid in the lock file; undefined when the file is gone or unreadable. */
function readHolder(path: string): number | undefined {
  try {
    return Number(readFileSync(path, 'utf8').trim());
  } catch {
    return undefined;
  }
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw lockError(error, path);
  }
}

function releaseIfOurs(path: string): void {
  try {
    if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}

function lockError(error: unknown, dir: string): StewardError {
  if (error instanceof StewardError) return error;
  return new StewardError('store_failed', `cannot lock the PGlite database in ${dir}: ${String(error)}`, {
    cause: error,
  });
}
