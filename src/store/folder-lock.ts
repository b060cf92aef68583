/**
 * PGlite serves one process: two processes writing the same data folder would corrupt it. The folder holds a
 * lock file naming the process that uses it; a lock left behind by a process that no longer runs is taken over.
 */
import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { StewardError } from '../engine/errors.ts';

/** A held lock; `release` removes it (only if it is still this process's). */
export interface FolderLock {
  release(): void;
}

/** Takes the folder's lock for this process, or throws `config` naming the process that holds it. */
export function lockFolder(dir: string): FolderLock {
  const path = join(dir, 'steward.lock');
  for (let tries = 0; ; tries++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return { release: () => releaseIfOurs(path) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || tries > 0) throw lockError(error, dir);
      const holder = Number(readFileSync(path, 'utf8').trim());
      if (isRunning(holder)) {
        throw new StewardError(
          'config',
          `Another Steward process (pid ${holder}) is using the PGlite database in ${dir}. PGlite serves one ` +
            'process: stop that one, or set DATABASE_URL to a PostgreSQL server to run several.',
        );
      }
      // Left by a process that has died (a crash or kill -9): take it over.
      unlinkSync(path);
    }
  }
}

function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
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
