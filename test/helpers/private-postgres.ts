/**
 * A PostgreSQL cluster of a test's own, which the test may stop, restart or crash at will. Fault tests use it, so
 * that the shared server at 127.0.0.1:5432, which every other test file uses at the same time, is never touched.
 *
 *   const pg = await startPrivatePostgres();  // initdb + start on a free port: 3-6 s here
 *   afterAll(() => pg.close());               // stops the server and removes its folder; safe to call twice
 *   await pg.restart({ mode: 'fast' });       // ~1 s here; or 'immediate' (a crash: recovery on start)
 *   await pg.outage(3_000);                   // stop, 3 s down, start
 *
 * The cluster lives in a fresh temp folder: data in `data/`, the Unix socket in the folder itself, the server log
 * in `server.log`. It listens on 127.0.0.1 only, trusts every local connection (user postgres), and runs with
 * fsync off: it is thrown away, and a server crash (immediate mode) still keeps every commit, since the OS does
 * not crash. (synchronous_commit stays on: off, a crash would lose the last commits, which a test must not see.)
 * `initdb` refuses to run as root, so as root every command runs as the postgres OS user (`runuser`).
 *
 * Every call waits on a fact (`pg_ctl -w`, then `pg_isready`), never a fixed sleep. A cluster still running when
 * the test process exits (a test that failed before its afterAll) is stopped by an exit handler.
 *
 * Where `initdb` and `pg_ctl` cannot be found (on the PATH, else under /usr/lib/postgresql/<version>/bin),
 * `privatePostgresMissing` says why; a suite passes it to `describeNeeding` (needs.ts), which skips, or fails in CI.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { appendFile, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './mcp-servers.ts';

/** How `pg_ctl` stops the server: `fast` rolls back and disconnects every session; `immediate` is a crash. */
export type ShutdownMode = 'fast' | 'immediate';

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** The temp folder: `data/`, the Unix socket, `server.log`. */
  dir: string;
  /** `pg_ctl restart`: stops (default mode `fast`) and starts again; resolves once connections are accepted. */
  restart(options?: { mode?: ShutdownMode }): Promise<void>;
  /** Stops the server (default mode `fast`); resolves once it is gone. Does nothing when it is not running. */
  stop(options?: { mode?: ShutdownMode }): Promise<void>;
  /** Starts a stopped server; resolves once it accepts connections. Does nothing when it is running. */
  start(): Promise<void>;
  /** Stops the server, keeps it down for `ms`, and starts it again. */
  outage(ms: number, options?: { mode?: ShutdownMode }): Promise<void>;
  /** The server log so far, for a failing test's message. */
  log(): Promise<string>;
  /** Stops the server (immediate mode) and removes the folder. Safe to call twice, and after a failed test. */
  close(): Promise<void>;
}

interface Tools {
  initdb: string;
  pgCtl: string;
  pgIsReady: string;
  /** Set when running as root: `runuser`, to run the server's commands as the postgres OS user. */
  runuser?: string;
  postgresUser?: { uid: number; gid: number };
}

const found = findTools();

/** Why no private cluster can be made on this machine, or undefined when it can. */
export const privatePostgresMissing: string | undefined = typeof found === 'string' ? found : undefined;

// Servers this process started and has not closed yet, stopped by the exit handler below.
const live = new Set<{ dataDir: string; dir: string }>();
let exitHandlerInstalled = false;

/** Makes a new cluster in a fresh temp folder and starts it on a free port of 127.0.0.1. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (typeof found === 'string') throw new Error(`no private PostgreSQL cluster: ${found}`);
  const tools = found;
  installExitHandler(tools);
  const dir = await mkdtemp(join(tmpdir(), 'steward-pg-'));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const entry = { dataDir, dir };
  live.add(entry);
  if (tools.postgresUser) await chown(dir, tools.postgresUser.uid, tools.postgresUser.gid);

  // As the postgres OS user, in a folder it may enter (it may not be able to read the test's working folder).
  const run = (file: string, args: string[]) => runAs(tools, file, args, dir);
  const pgCtl = (args: string[]) => run(tools.pgCtl, ['-D', dataDir, '-l', logFile, '-t', '60', ...args]);
  let port = 0;
  const serverOptions = () => ['-o', `-p ${port} -k ${dir}`];
  const isReady = async () => {
    const args = ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-t', '5'];
    return (await runStatus(tools.pgIsReady, args, dir)) === 0;
  };
  const isRunning = async () => (await runStatus(tools.pgCtl, ['-D', dataDir, 'status'], dir, tools)) === 0;
  const log = () => readFile(logFile, 'utf8').catch(() => '(no server log)');
  const failure = async (what: string, error: unknown) =>
    new Error(`${what}: ${String(error)}\nserver log (end):\n${(await log()).slice(-3000)}`, { cause: error });

  // A fact, not a sleep: pg_ctl -w has seen the server ready; pg_isready then proves TCP on 127.0.0.1 answers.
  const confirmUp = async (what: string) => {
    if (!(await isReady())) throw await failure(what, new Error(`pg_isready: 127.0.0.1:${port} does not answer`));
  };

  try {
    await run(tools.initdb, [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '--no-instructions',
      '--encoding=UTF8',
      '--locale=C',
    ]);
    await appendFile(
      join(dataDir, 'postgresql.conf'),
      [
        '',
        '# private-postgres.ts: a throwaway test cluster',
        "listen_addresses = '127.0.0.1'",
        'fsync = off',
        'full_page_writes = off',
        'shared_buffers = 16MB',
        '',
      ].join('\n'),
    );
    // The port is free when picked but may be taken before the server binds it: then pick another.
    for (let tries = 1; ; tries++) {
      port = await freePort();
      try {
        await pgCtl([...serverOptions(), '-w', 'start']);
        break;
      } catch (error) {
        if (tries < 3 && /could not bind|address already in use/i.test(await log())) continue;
        throw await failure('pg_ctl start', error);
      }
    }
    await confirmUp('start');
  } catch (error) {
    await stopQuietly(tools, dataDir, dir);
    live.delete(entry);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  const stop = async ({ mode = 'fast' }: { mode?: ShutdownMode } = {}) => {
    if (!(await isRunning())) return;
    try {
      await pgCtl(['-m', mode, '-w', 'stop']);
    } catch (error) {
      throw await failure(`pg_ctl stop -m ${mode}`, error);
    }
    if (await isReady()) throw await failure('stop', new Error(`127.0.0.1:${port} still answers`));
  };
  const start = async () => {
    if (await isRunning()) return;
    try {
      await pgCtl([...serverOptions(), '-w', 'start']);
    } catch (error) {
      throw await failure('pg_ctl start', error);
    }
    await confirmUp('start');
  };
  let closing: Promise<void> | undefined;

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    async restart({ mode = 'fast' } = {}) {
      try {
        await pgCtl([...serverOptions(), '-m', mode, '-w', 'restart']);
      } catch (error) {
        throw await failure(`pg_ctl restart -m ${mode}`, error);
      }
      await confirmUp(`restart -m ${mode}`);
    },
    stop,
    start,
    async outage(ms, options) {
      await stop(options);
      await sleep(ms); // the outage's length is what the test is about
      await start();
    },
    log,
    close() {
      closing ??= (async () => {
        try {
          await stopQuietly(tools, dataDir, dir);
        } finally {
          live.delete(entry);
          await rm(dir, { recursive: true, force: true });
        }
      })();
      return closing;
    },
  };
}

/** Stops the server in immediate mode if it runs; if pg_ctl cannot, signals the postmaster itself. */
async function stopQuietly(tools: Tools, dataDir: string, dir: string): Promise<void> {
  if (!existsSync(join(dataDir, 'postmaster.pid'))) return;
  try {
    await runAs(tools, tools.pgCtl, ['-D', dataDir, '-m', 'immediate', '-w', '-t', '30', 'stop'], dir);
  } catch {
    killPostmaster(dataDir);
  }
}

function killPostmaster(dataDir: string): void {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (pid > 0) process.kill(pid, 'SIGQUIT'); // the postmaster's immediate shutdown
  } catch {
    // No pid file, or no such process: nothing runs.
  }
}

// Synchronous, since an exit handler cannot wait: stop every server this process left running, remove its folder.
function installExitHandler(tools: Tools): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.once('exit', () => {
    for (const { dataDir, dir } of live) {
      if (existsSync(join(dataDir, 'postmaster.pid'))) {
        const [file, args] = command(tools, tools.pgCtl, ['-D', dataDir, '-m', 'immediate', '-w', '-t', '30', 'stop']);
        const stopped = spawnSync(file, args, { cwd: dir, env: serverEnv(), stdio: 'ignore', timeout: 35_000 });
        if (stopped.status !== 0) killPostmaster(dataDir);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** Runs a server command (as the postgres OS user when we are root); rejects with its output when it fails. */
function runAs(tools: Tools, file: string, args: string[], cwd: string): Promise<string> {
  const [bin, argv] = command(tools, file, args);
  return new Promise((resolve, reject) => {
    execFile(bin, argv, { cwd, env: serverEnv(), timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${[file, ...args].join(' ')} failed (${error.code ?? error.signal}): ${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Runs a command and returns its exit code (pg_isready: 0 up, 2 no answer; pg_ctl status: 0 running, 3 not). */
function runStatus(file: string, args: string[], cwd: string, tools?: Tools): Promise<number> {
  const [bin, argv] = tools ? command(tools, file, args) : [file, args];
  return new Promise((resolve) => {
    execFile(bin, argv, { cwd, env: serverEnv(), timeout: 30_000 }, (error) => {
      resolve(error === null ? 0 : typeof error.code === 'number' ? error.code : -1);
    });
  });
}

function command(tools: Tools, file: string, args: string[]): [string, string[]] {
  return tools.runuser ? [tools.runuser, ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

// The caller's environment without PG* variables (PGDATA, PGPORT, PGHOST...), which would redirect the tools.
function serverEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PG')));
}

/** The PostgreSQL programs, or why they cannot be used here. */
function findTools(): Tools | string {
  const binDir = findBinDir();
  if (binDir === undefined) return 'initdb and pg_ctl were found neither on the PATH nor under /usr/lib/postgresql';
  const pgIsReady = [join(binDir, 'pg_isready'), onPath('pg_isready')].find((p) => p !== undefined && existsSync(p));
  if (pgIsReady === undefined) return `pg_isready was found neither in ${binDir} nor on the PATH`;
  const tools: Tools = { initdb: join(binDir, 'initdb'), pgCtl: join(binDir, 'pg_ctl'), pgIsReady };
  if (process.getuid?.() !== 0) return tools;
  // initdb refuses to run as root.
  const runuser = onPath('runuser') ?? ['/usr/sbin/runuser', '/sbin/runuser'].find((p) => existsSync(p));
  if (runuser === undefined) return 'running as root, and there is no runuser to run initdb as the postgres user';
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return 'running as root, and there is no postgres OS user to run initdb';
  return { ...tools, runuser, postgresUser: { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) } };
}

function findBinDir(): string | undefined {
  const initdb = onPath('initdb');
  if (initdb !== undefined) {
    // Debian links /usr/local/bin/initdb to /usr/lib/postgresql/<version>/bin, where pg_ctl of the same version is.
    for (const dir of [dirname(realpathSync(initdb)), dirname(initdb)]) {
      if (existsSync(join(dir, 'pg_ctl'))) return dir;
    }
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)) : [];
  return versions
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(root, v, 'bin'))
    .find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

function onPath(name: string): string | undefined {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name))
    .find((file) => existsSync(file));
}
