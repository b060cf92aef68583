/**
 * Liveness and readiness for orchestrators, on a small HTTP port of its own: `/healthz` answers while the process
 * and its event loop run; `/readyz` answers 200 only when the database is reachable, its migrations are current and
 * every enabled MCP server is connected, else 503 with what is missing. Both answer JSON; nothing secret is in them.
 * `/metrics` answers Prometheus's text format when metrics are given.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StewardError } from './engine/errors.ts';

/** One readiness check: its name, whether it passes, and a short reason when it does not. */
export interface ReadinessCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

/** A running health server. */
export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** How long `/readyz` waits for its checks before it answers not ready. */
const CHECK_TIMEOUT_MS = 2_000;

/** Starts the server on `port` (0 picks a free one) at `host`. */
export async function startHealthServer(options: {
  port: number;
  host?: string;
  checks: () => Promise<ReadinessCheck[]>;
  /** The `/metrics` exposition; without it the path is not found. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
}): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(`${JSON.stringify(body)}\n`);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, { error: 'use GET' });
    if (path === '/healthz') return reply(200, { alive: true });
    if (path === '/metrics' && options.metrics) return void exposition(options.metrics, res);
    if (path !== '/readyz') return reply(404, { error: 'not found; try /healthz, /readyz or /metrics' });
    void readiness(options.checks).then((checks) => {
      const ready = checks.every((c) => c.ok);
      reply(ready ? 200 : 503, { ready, checks });
    });
  });
  await listen(server, options.port, options.host ?? '0.0.0.0').catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new StewardError(
      'config',
      `STEWARD_HEALTH_PORT ${options.port} cannot be used (${code}); choose a free port.`,
    );
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Answers a scrape; a failure to gather is a 500 with a line for the scraper's log, never a stack trace. */
async function exposition(
  metrics: () => Promise<{ contentType: string; body: string }>,
  res: ServerResponse,
): Promise<void> {
  try {
    const { contentType, body } = await metrics();
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
    res.end(body);
  } catch (err) {
    res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`metrics could not be gathered: ${(err as Error).message}\n`);
  }
}

/** The checks, or one failed check when they throw or take too long. */
async function readiness(checks: () => Promise<ReadinessCheck[]>): Promise<ReadinessCheck[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ReadinessCheck[]>((resolve) => {
    timer = setTimeout(
      () => resolve([{ name: 'checks', ok: false, detail: `no answer within ${CHECK_TIMEOUT_MS} ms` }]),
      CHECK_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([
      checks().catch((err: unknown) => [{ name: 'checks', ok: false, detail: String(err) }]),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
