/**
 * People connecting their own accounts in end-to-end tests: Steward's web origin (the dashboard's app with its
 * connect pages and OAuth callback, on a free port) over the test's database, set up before the MCP host as the app
 * does, and a "browser": plain HTTP requests that follow redirects by hand and keep cookies (`as_user` is who is
 * signed in at the test authorization server, test/helpers/oauth-mcp-server.ts).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import type { McpHostOptions } from '../../src/mcp/mcp-host.ts';
import { deferredConnectFlow, PersonConnectionFlow } from '../../src/person-connections.ts';
import { PgConnectLinks } from '../../src/store/pg-connect-links.ts';
import { PgConnectionStore } from '../../src/store/pg-connection-store.ts';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { parseSecretKey, SecretBox } from '../../src/store/secret-box.ts';
import { createDashboardApp } from '../../src/web/dashboard-app.ts';
import { startDashboardServer } from '../../src/web/dashboard-server.ts';
import type { McpHost } from '../../src/mcp/mcp-host.ts';
import type { PersonConnections } from '../../src/engine/ports.ts';
import type { TestDatabase } from './databases.ts';
import type { OAuthMcpServer } from './oauth-mcp-server.ts';

/** What a harness's `setup` gives it: the host's options, people's connections, more secrets, and how to stop. */
export interface HarnessSetup {
  host?: McpHostOptions;
  connections?: (host: McpHost) => PersonConnections;
  canaries?: () => string[];
  close?: () => Promise<void>;
}

/** A harness's `setup`, run on its database before the MCP host starts. */
export type SetUp = (db: TestDatabase) => Promise<HarnessSetup>;

/** The web origin people connect through, once a harness has set it up. */
export interface ConnectOrigin {
  /** Its address (`http://127.0.0.1:<port>`). */
  readonly web: string;
  /** The connect flow of the (first) host, once the harness built it. */
  flow(): PersonConnectionFlow;
  /** For a harness's `setup`: the web origin on its database, the sealed store, and the flow. */
  setup: SetUp;
}

/**
 * A web origin for `oauth`'s server; pass `setup` to a harness (it is started on the harness's database). `name`: the
 * host its links name (`localhost` makes it another site than the authorization server on 127.0.0.1, for a browser).
 */
export function connectOrigin(oauth: OAuthMcpServer, name = '127.0.0.1'): ConnectOrigin {
  let web = '';
  const holder: { flow?: PersonConnectionFlow } = {};
  return {
    get web() {
      return web;
    },
    flow: () => {
      if (!holder.flow) throw new Error('the connect flow is not built yet');
      return holder.flow;
    },
    setup: async (db) => {
      const server = await startDashboardServer({
        port: 0,
        host: '127.0.0.1',
        app: (port) => {
          web = `http://${name}:${port}`;
          return createDashboardApp({
            data: new PgDashboard(db.db, { baseUrl: web }),
            secret: `test-${randomBytes(16).toString('hex')}`,
            publicUrl: web,
            approvers: [],
            clock: () => new Date(),
            connect: deferredConnectFlow(holder),
          });
        },
      });
      const key = parseSecretKey(randomBytes(32).toString('base64'));
      return {
        host: {
          connections: new PgConnectionStore(db.db, new SecretBox(key)),
          oauthRedirectUrl: `${web}/oauth/callback`,
        },
        connections: (host) => (holder.flow = new PersonConnectionFlow(host, new PgConnectLinks(db.db), web)),
        canaries: () => oauth.issued,
        close: () => server.close(),
      };
    },
  };
}

/** The first connect link in a text (a chat message, a printed line). */
export function linkIn(text: string): string | undefined {
  return /(http:\/\/127\.0\.0\.1:\d+\/connect\/[\w-]+)/.exec(text)?.[1];
}

/** A browser: its cookies, by name. `as_user` is the person signed in at the authorization server. */
export function browser(subject: string) {
  const jar = new Map<string, string>([['as_user', subject]]);
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = (pair ?? '').split('=');
      if (name) jar.set(name.trim(), value.join('='));
    }
    return response;
  };
  return {
    jar,
    get: async (url: string) => keep(await fetch(url, { redirect: 'manual', headers: { cookie: cookie() } })),
    /** Presses the link's button: the form posted from the link's own page. */
    press: async (link: string) => {
      const origin = new URL(link).origin;
      const token = link.split('/connect/')[1] ?? '';
      return keep(
        await fetch(`${origin}/connect`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin, cookie: cookie() },
          body: new URLSearchParams({ token }).toString(),
        }),
      );
    },
    /** Signs in to the dashboard at `web` as `person`, with a sign-in link issued for them. */
    signIn: async (web: string, db: TestDatabase, person: Actor) => {
      const link = await new PgDashboard(db.db, { baseUrl: web }).issue(person, new Date());
      const signed = await fetch(`${web}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: web },
        body: new URLSearchParams({ token: link.split('/signin/')[1] ?? '' }).toString(),
      });
      keep(signed);
    },
  };
}

export type Browser = ReturnType<typeof browser>;

/** Follows a link the whole way as this browser: its page, the button, the authorization server, the callback. */
export async function connectThrough(link: string, b: Browser): Promise<Response> {
  expect((await b.get(link)).status).toBe(200);
  const pressed = await b.press(link);
  expect(pressed.status).toBe(303);
  const allowed = await b.get(pressed.headers.get('location') ?? '');
  expect(allowed.status).toBe(302);
  return b.get(allowed.headers.get('location') ?? '');
}
