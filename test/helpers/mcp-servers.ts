/**
 * Real MCP reference servers for tests: server-everything over stdio and Streamable HTTP,
 * server-filesystem over stdio. Configs go through `parseMcpConfig`, so defaults stay in one place.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { parseMcpConfig, type McpConfig, type McpServerConfig } from '../../src/mcp/mcp-config.ts';
import { fixtureServer } from './entry-point.ts';

const require = createRequire(import.meta.url);

/** Absolute path of a reference server's entry script (packages export no `main`, so go through package.json). */
function serverScript(pkg: string): string {
  return join(dirname(require.resolve(`${pkg}/package.json`)), 'dist', 'index.js');
}

/** Absolute path of server-everything's entry script. */
export const EVERYTHING_SCRIPT = serverScript('@modelcontextprotocol/server-everything');
/** The base64 PNG server-everything's get-tiny-image answers with, read from its source (a canary in prompts). */
export const EVERYTHING_TINY_IMAGE = /MCP_TINY_IMAGE = "([A-Za-z0-9+/=]+)"/.exec(
  readFileSync(join(dirname(EVERYTHING_SCRIPT), 'tools', 'get-tiny-image.js'), 'utf8'),
)![1]!;
/** Absolute path of server-filesystem's entry script. */
export const FILESYSTEM_SCRIPT = serverScript('@modelcontextprotocol/server-filesystem');
/** Absolute path of server-memory's entry script. */
export const MEMORY_SCRIPT = serverScript('@modelcontextprotocol/server-memory');

/** Optional name and config-file fields (timeouts, risk, tools…) for a test server. */
export interface ServerOptions {
  name?: string;
  overrides?: Record<string, unknown>;
}

/** Builds one server's config the way a config file would. */
export function serverConfig(name: string, entry: Record<string, unknown>): McpServerConfig {
  const [server] = parseMcpConfig(JSON.stringify({ mcpServers: { [name]: entry } }), 'test-mcp.json').servers;
  if (!server) throw new Error('unreachable: one server in, one out');
  return server;
}

/** A whole config from server configs. */
export function mcpConfig(...servers: McpServerConfig[]): McpConfig {
  return { servers };
}

/** server-everything over stdio, run by this same Node. */
export function everythingStdioConfig(options: ServerOptions = {}): McpServerConfig {
  return serverConfig(options.name ?? 'everything', {
    command: process.execPath,
    args: [EVERYTHING_SCRIPT, 'stdio'],
    ...options.overrides,
  });
}

/** server-filesystem over stdio, allowed to touch `dir` only. */
export function filesystemStdioConfig(dir: string, options: ServerOptions = {}): McpServerConfig {
  return serverConfig(options.name ?? 'fs', {
    command: process.execPath,
    args: [FILESYSTEM_SCRIPT, dir],
    ...options.overrides,
  });
}

/** A Streamable HTTP server at `url`. */
export function httpServerConfig(url: string, options: ServerOptions = {}): McpServerConfig {
  return serverConfig(options.name ?? 'everything', { url, ...options.overrides });
}

/** A TCP port nobody listens on right now (the kernel picks it; a tiny race remains until it is reused). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

/** A Streamable HTTP server running in a child process. */
export interface HttpTestServer {
  url: string;
  /** How many POST requests it has logged to stdout so far (server-everything logs each one). */
  posts: () => number;
  /** Kills it and waits for the exit. */
  close: () => Promise<void>;
}

/**
 * Starts server-everything's Streamable HTTP transport on `port` (a free one by default) and waits until it
 * logs that it listens.
 */
export function startEverythingHttp(port?: number): Promise<HttpTestServer> {
  return startHttpServer([EVERYTHING_SCRIPT, 'streamableHttp'], { port });
}

/**
 * Runs `node <args>` with `PORT` (a free one by default) and `env`, and waits until it writes "listening on port"
 * to stderr.
 */
export async function startHttpServer(
  args: string[],
  options: { port?: number; env?: Record<string, string> } = {},
): Promise<HttpTestServer> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  let stderr = '';
  // Caught here: a spawn error would otherwise reject this promise with nobody listening.
  const exited = once(child, 'exit').catch(() => {});
  const listening = new Promise<void>((resolve, reject) => {
    const fail = () => reject(new Error(`HTTP test server ${args.join(' ')} did not listen within 10 s: ${stderr}`));
    const timer = setTimeout(fail, 10_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (stderr.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`HTTP test server ${args.join(' ')} exited with ${code}: ${stderr}`));
    });
  });
  try {
    await listening;
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    posts: () => stdout.split('Received MCP POST request').length - 1,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Absolute path of the audit fixture server (records calls and cancellations to `logFile`). */
export const AUDIT_SCRIPT = fixtureServer('audit-server');

/** The audit fixture over stdio, writing what it receives to `logFile` as JSON lines. */
export function auditStdioConfig(logFile: string, options: ServerOptions = {}): McpServerConfig {
  return serverConfig(options.name ?? 'audit', {
    command: process.execPath,
    args: [AUDIT_SCRIPT],
    env: { AUDIT_LOG: logFile },
    ...options.overrides,
  });
}

/**
 * The audit fixture as a Streamable HTTP server at `url` (see `sharedAuditUrl`): a session of its own for each
 * connection, writing what it receives to `logFile` as JSON lines, as `auditStdioConfig`'s child does.
 */
export function auditHttpConfig(url: string, logFile: string, options: ServerOptions = {}): McpServerConfig {
  const endpoint = new URL(url);
  endpoint.searchParams.set('log', logFile);
  return serverConfig(options.name ?? 'audit', { url: endpoint.href, ...options.overrides });
}

let sharedAudit: Promise<string> | undefined;

/**
 * The URL of this test process's audit fixture over Streamable HTTP, started on first use and ended with the
 * process. The scenario matrix's cells share it: starting a stdio child for each cell cost about 0.23 s of CPU, most
 * of a console cell's. If it dies, the next caller starts another.
 */
export function sharedAuditUrl(): Promise<string> {
  sharedAudit ??= startSharedAudit().catch((err: unknown) => {
    sharedAudit = undefined;
    throw err;
  });
  return sharedAudit;
}

async function startSharedAudit(): Promise<string> {
  // Its stdin stays open while this process lives; it exits when that ends, even if this process is killed.
  const child = spawn(process.execPath, [AUDIT_SCRIPT, '--http'], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const stop = () => child.kill();
  process.once('exit', stop);
  child.once('exit', () => {
    process.removeListener('exit', stop);
    sharedAudit = undefined;
  });
  let stdout = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the shared audit server did not listen within 10 s')), 10_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const line = stdout.split('\n');
      if (line.length > 1 && line[0]) {
        clearTimeout(timer);
        resolve(line[0]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the shared audit server exited with ${code} before listening`));
    });
  }).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  // It must not keep this process alive: the test runner ends it when its files are done.
  child.unref();
  for (const pipe of [child.stdin, child.stdout]) (pipe as Socket).unref();
  return url;
}

/** server-everything with every tool counted as medium risk, so its plans wait for review. */
export const reviewed = (): McpServerConfig => everythingStdioConfig({ overrides: { risk: 'medium' } });

/** A plan step echoing `message` on server-everything. */
export const echo = (id: string, message: string, dependsOn: string[] = []) => ({
  id,
  tool: 'everything.echo',
  args: { message },
  dependsOn,
});
