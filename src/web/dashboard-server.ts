/** Serves the dashboard app over HTTP with @hono/node-server, on a port of its own. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { StewardError } from '../engine/errors.ts';

/** A running dashboard server. */
export interface DashboardServer {
  port: number;
  /** Stops listening and ends open connections (live pages' event streams included). */
  close(): Promise<void>;
}

type FetchApp = { fetch: (request: Request) => Response | Promise<Response> };

/**
 * Starts serving on `port` (0: a free one) at `host` the app `app` builds once the port is known (a link's address
 * may need it); a port that cannot be used is a configuration error.
 */
export async function startDashboardServer(options: {
  app: (port: number) => FetchApp;
  port: number;
  host?: string;
}): Promise<DashboardServer> {
  const built: { app?: FetchApp } = {};
  // No request arrives before the server listens, and by then the app is built.
  const fetch = (request: Request) =>
    built.app ? built.app.fetch(request) : new Response('starting', { status: 503 });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch, port: options.port, hostname: options.host ?? '127.0.0.1' }) as Server;
    s.once('error', reject);
    s.once('listening', () => {
      s.off('error', reject);
      resolve(s);
    });
  }).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new StewardError(
      'config',
      `STEWARD_DASHBOARD_PORT ${options.port} on ${options.host ?? '127.0.0.1'} cannot be used (${code}); choose a free port, or a STEWARD_DASHBOARD_HOST this machine has.`,
    );
  });
  const port = (server.address() as AddressInfo).port;
  built.app = options.app(port);
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // Event streams never end on their own: without this, close would wait for every open run page.
        server.closeAllConnections();
      }),
  };
}
