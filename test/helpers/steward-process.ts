/**
 * The real entry point (`src/main.ts`, from this run's bundle of it: test/helpers/entry-point.ts) as a child process in Slack HTTP mode: its Web API
 * pointed at the fake Slack, its model at the fake LLM, its MCP servers from a config written here. Several can run
 * at once on one database, each on its own port and in its own folder (DATA_DIR, mcp.json, steward.log), and each
 * can be killed and started again on the same port, so Slack's requests keep one address per process.
 *
 *   const p = createStewardProcess({ name: 'p1', databaseUrl, llmBaseUrl: llm.baseURL, slack: {...}, mcpServers });
 *   await p.start();                       // resolves once it listens for Slack's requests
 *   await sendSigned(p.eventsUrl, ...);    // a mention or a button press, signed as Slack signs
 *   await p.kill('SIGKILL');               // resolves once it has exited
 *   await p.restart();                     // SIGKILL (if running), then start again
 *   await p.close();                       // kills it and removes its folder
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entryPointArgs, programArgs } from './entry-point.ts';
import { freePort } from './mcp-servers.ts';
import { waitUntil } from './wait.ts';

/** What a Slack HTTP-mode process needs from the fake Slack. */
export interface SlackEndpoint {
  /** SLACK_API_URL: the fake's `apiUrl`, ending with `/api/`. */
  apiUrl: string;
  /** SLACK_BOT_TOKEN: the fake's `botToken`. */
  botToken: string;
  /** SLACK_SIGNING_SECRET: the secret the test signs its requests with. */
  signingSecret: string;
}

export interface StewardProcessOptions {
  /** A short label for output and the audit log (`p1`). */
  name: string;
  /** DATABASE_URL: every process of a test may share one. */
  databaseUrl: string;
  /** OPENAI_BASE_URL: the fake LLM's `baseURL`. */
  llmBaseUrl: string;
  slack: SlackEndpoint;
  /** The `mcpServers` object of the mcp.json written for this process. */
  mcpServers: Record<string, unknown>;
  /** HTTP port for Slack's requests, kept across restarts (default: a free one, picked at the first start). */
  port?: number;
  /** More environment (STEWARD_MAX_ATTEMPTS, STEWARD_HEALTH_PORT…); wins over the defaults set here. */
  env?: Record<string, string>;
  /** The checkout whose `src/main.ts` runs (default: this one); e.g. an exported older commit, to compare. */
  root?: string;
  /** How long `start` waits for the "listening" line (default 30 s). */
  startTimeoutMs?: number;
}

/** One Steward process, started and restarted at will. */
export interface StewardProcess {
  readonly name: string;
  /** The folder holding `data/` (DATA_DIR, with `steward.log`) and `mcp.json`. */
  readonly dir: string;
  readonly dataDir: string;
  /** `<dataDir>/steward.log`: the process's own log (MCP servers, warnings, errors). */
  readonly logFile: string;
  /** The Slack port (0 until the first start picks one). */
  readonly port: number;
  /** Where Slack sends events and interactions: `http://127.0.0.1:<port>/slack/events`. */
  readonly eventsUrl: string;
  /** The environment the child gets (without PATH and HOME). */
  readonly env: Record<string, string>;
  /** How many times it was started. */
  readonly starts: number;
  /** Starts it; resolves once it listens for Slack (after migrations and MCP start-up). Rejects if it exits first. */
  start(): Promise<void>;
  /** Sends the signal and resolves once the process has exited (at once when it is not running). */
  kill(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Kills it (SIGKILL unless told) and starts it again on the same port and folder. */
  restart(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Sends a signal without waiting (SIGSTOP freezes it as a hung host would, SIGCONT wakes it). */
  signal(signal: NodeJS.Signals): void;
  /** Whether a child is alive now (it may still be starting). */
  running(): boolean;
  /** Whether a child is alive and has said it listens for Slack. */
  ready(): boolean;
  /** Stdout and stderr of every life so far, each life headed by a `--- <name> start #n` line. */
  output(): string;
  /** Stdout and stderr of the current (or last) life only. */
  currentOutput(): string;
  /** The log file's text so far ('' before the first write). */
  log(): string;
  /** Waits until the current life's output matches; resolves with the match. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Kills it (SIGKILL) and removes its folder. Safe to call twice. */
  close(): Promise<void>;
}

/** Makes a process handle; nothing runs until `start`. */
export function createStewardProcess(options: StewardProcessOptions): StewardProcess {
  const dir = mkdtempSync(join(tmpdir(), `steward-proc-${options.name}-`));
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const mcpConfig = join(dir, 'mcp.json');
  writeFileSync(mcpConfig, JSON.stringify({ mcpServers: options.mcpServers }, null, 2));
  // Another checkout runs its own source through tsx; this one, this run's bundle of the same source.
  const args = options.root ? programArgs(join(options.root, 'src/main.ts'), 'main', { tsx: true }) : entryPointArgs();
  let port = options.port ?? 0;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let all = '';
  let current = '';
  let starts = 0;
  let closed = false;
  let listens = false;

  const env = (): Record<string, string> => ({
    DATABASE_URL: options.databaseUrl,
    DATA_DIR: dataDir,
    MCP_CONFIG: mcpConfig,
    OPENAI_BASE_URL: options.llmBaseUrl,
    OPENAI_API_KEY: `sk-steward-process-${options.name}`,
    // Off unless a test turns it on: the existing scripts have no butler turn.
    STEWARD_QUICK_ANSWERS: 'off',
    SLACK_BOT_TOKEN: options.slack.botToken,
    SLACK_SIGNING_SECRET: options.slack.signingSecret,
    SLACK_API_URL: options.slack.apiUrl,
    PORT: String(port),
    ...options.env,
  });
  const alive = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const append = (text: string) => {
    all += text;
    current += text;
  };

  const handle: StewardProcess = {
    name: options.name,
    dir,
    dataDir,
    logFile: join(dataDir, 'steward.log'),
    get port() {
      return port;
    },
    get eventsUrl() {
      return `http://127.0.0.1:${port}/slack/events`;
    },
    get env() {
      return env();
    },
    get starts() {
      return starts;
    },
    async start() {
      if (closed) throw new Error(`${options.name} is closed`);
      if (alive()) throw new Error(`${options.name} is already running`);
      if (port === 0) port = await freePort();
      starts += 1;
      current = '';
      append(`--- ${options.name} start #${starts} (port ${port})\n`);
      const c = spawn(process.execPath, args, {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, ...env() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = c;
      c.stdout.on('data', (b: Buffer) => append(b.toString('utf8')));
      c.stderr.on('data', (b: Buffer) => append(b.toString('utf8')));
      listens = false;
      exited = once(c, 'exit').then(
        ([code, signal]) => {
          listens = false;
          append(`--- ${options.name} exited (${String(signal ?? code)})\n`);
        },
        () => undefined,
      );
      await listening(c, () => current, options.name, options.startTimeoutMs ?? 30_000);
      listens = alive();
    },
    async kill(signal = 'SIGKILL') {
      if (!alive()) return;
      child!.kill(signal);
      await exited;
    },
    async restart(signal = 'SIGKILL') {
      await handle.kill(signal);
      await handle.start();
    },
    signal(signal) {
      if (alive()) child!.kill(signal);
    },
    running: alive,
    ready: () => listens && alive(),
    output: () => all,
    currentOutput: () => current,
    log() {
      try {
        return readFileSync(join(dataDir, 'steward.log'), 'utf8');
      } catch {
        return '';
      }
    },
    async waitFor(pattern, timeoutMs = 20_000) {
      return waitUntil(String(pattern), () => pattern.exec(current), {
        timeoutMs,
        details: () => `${options.name} output:\n${current}`,
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      if (alive()) child!.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

/** Resolves once the child prints that it listens for Slack; rejects when it exits first or time runs out. */
function listening(c: ChildProcess, output: () => string, name: string, timeoutMs: number): Promise<void> {
  const ready = /Slack: listening on port \d+/;
  return new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      c.stdout?.off('data', check);
      c.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    };
    const check = () => {
      if (ready.test(output())) done();
    };
    const onExit = () => done(new Error(`${name} exited before it listened for Slack; output:\n${output()}`));
    const timer = setTimeout(
      () => done(new Error(`${name} did not listen for Slack within ${timeoutMs} ms; output:\n${output()}`)),
      timeoutMs,
    );
    c.stdout?.on('data', check);
    c.once('exit', onExit);
    check();
  });
}
