/**
 * Connecting a person's own account to a server that connects per person, on Steward's web origin: the private link
 * (`/connect/<token>`) shows what it connects and a button (a GET never uses it: chat apps fetch links to preview
 * them); the button uses the link once, keeps a random binding in this browser's cookie and sends the browser to
 * the authorization server; the callback (`/oauth/callback`) completes only with the `state` it sent and that same
 * browser's binding (RFC 6749 section 10.12, RFC 9700 section 4.7), and the waiting run goes on.
 */
import { randomBytes } from 'node:crypto';
import type { Context, Env, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { page, type Markup } from './page-layout.ts';

/** Who and what a link connects, as the pages name them. */
export interface ConnectTarget {
  server: string;
  person: { channel: string; id: string; name?: string };
  /** The connection is the workspace's (the person is the approver who connects it): every run's steps use it. */
  workspace?: boolean;
}

/** An authorization that came back: `pending` until its person confirms it in chat (the browser was not signed in as them). */
export type FinishedConnection = ConnectTarget & { pending: boolean };

/** What the pages need: the link read, used, and the authorization finished. */
export interface ConnectFlow {
  /** What an unused, unexpired link connects, without using it. */
  peek(token: string, at: Date): Promise<ConnectTarget | null>;
  /**
   * Uses the link once, bound to `binding` (kept in this browser; `signedIn`: it holds a dashboard session of the
   * link's person): the authorization server's URL to send the browser to. Null when the link is used, expired or
   * unknown.
   */
  start(
    token: string,
    binding: string,
    at: Date,
    signedIn?: boolean,
  ): Promise<(ConnectTarget & { url: string }) | null>;
  /**
   * The authorization came back: exchanges the code for the person's tokens, only for the `state` sent and the
   * browser that started it. Made in a browser signed in as the link's person, the connection is theirs and the
   * waiting run is signalled; else it is pending, and the person is asked in chat. Null when the state or the
   * browser does not match.
   */
  finish(state: string, binding: string, code: string, at: Date): Promise<FinishedConnection | null>;
}

/** The browser's binding to the authorization it started; only sent back to the callback. */
const BINDING_COOKIE = 'steward_connect';
export const CALLBACK_PATH = '/oauth/callback';

/** The person a dashboard session signed in, when the browser has one. */
export type SessionLookup = (c: Context) => Promise<{ channel: string; id: string } | null>;

/** Adds the connect routes to the dashboard's app. */
export function addConnectRoutes<E extends Env>(
  app: Hono<E>,
  options: {
    flow: ConnectFlow;
    secure: boolean;
    clock: () => Date;
    signedIn: SessionLookup;
    log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  },
): void {
  const { flow, clock } = options;
  app.get('/connect/:token', async (c) => {
    const target = await flow.peek(c.req.param('token'), clock());
    if (!target) return refuse(c, 403, USED);
    // The form goes here, and its answer sends the browser on to the authorization server (any https origin).
    c.header('Content-Security-Policy', FORM_CSP);
    return c.html(
      page(
        `Connect ${target.server}`,
        html`<h1>Connect ${target.server}</h1>
          ${
            target.workspace
              ? html`<p>
                  Steward will run <b>everyone's</b> steps on <b>${target.server}</b> as the workspace, with the account
                  you sign in with there. Only continue if you are ${nameOf(target)}, the approver this link was sent
                  to.
                </p>`
              : html`<p>
                  Steward will run steps on <b>${target.server}</b> as <b>${nameOf(target)}</b>, with the account you
                  sign in with there. Only continue if you are ${nameOf(target)}: the account you allow becomes theirs
                  in Steward.
                </p>`
          }
          <form method="post" action="/connect">
            <input type="hidden" name="token" value="${c.req.param('token')}" />
            <button type="submit">Continue to ${target.server}</button>
          </form>`,
      ),
    );
  });

  app.post('/connect', async (c) => {
    const body = await c.req.parseBody();
    const token = typeof body.token === 'string' ? body.token : '';
    const now = clock();
    const target = token ? await flow.peek(token, now) : null;
    if (!target) return refuse(c, 403, USED);
    // A browser signed in to the dashboard as someone else is not the person the link was sent to.
    const session = await options.signedIn(c);
    if (session && (session.channel !== target.person.channel || session.id !== target.person.id)) {
      options.log?.('warn', `connect: a link of ${who(target)} was opened by ${session.channel}:${session.id}`);
      return refuse(c, 403, 'This link was sent to someone else; it cannot connect your account as theirs.');
    }
    const binding = randomBytes(32).toString('base64url');
    let started: Awaited<ReturnType<ConnectFlow['start']>>;
    try {
      // Signed in to the dashboard as the link's person: the connection is theirs at once; else they confirm in chat.
      started = await flow.start(token, binding, now, session !== null);
    } catch (err) {
      options.log?.('warn', `connect: ${target.server} for ${who(target)}: ${(err as Error).message}`);
      return refuse(c, 502, `${target.server} could not be reached to connect: ${(err as Error).message}`);
    }
    if (!started) return refuse(c, 403, USED);
    setCookie(c, BINDING_COOKIE, binding, {
      httpOnly: true,
      // Sent on the top-level GET that comes back from the authorization server, not on cross-site subrequests.
      sameSite: 'Lax',
      path: CALLBACK_PATH,
      secure: options.secure,
      maxAge: 15 * 60,
    });
    options.log?.('info', `connect: ${who(target)} went on to authorize ${target.server}`);
    return c.redirect(started.url, 303);
  });

  app.get(CALLBACK_PATH, async (c) => {
    const binding = getCookie(c, BINDING_COOKIE) ?? '';
    deleteCookie(c, BINDING_COOKIE, { path: CALLBACK_PATH, secure: options.secure });
    const state = c.req.query('state') ?? '';
    const code = c.req.query('code') ?? '';
    const error = c.req.query('error');
    if (error !== undefined) {
      // RFC 6749 section 4.1.2.1: the person refused, or the server did; the run keeps waiting for a new link.
      return refuse(c, 403, `The authorization server did not connect the account (${error.slice(0, 100)}).`);
    }
    if (!state || !code || !binding) return refuse(c, 403, ELSEWHERE);
    let done: FinishedConnection | null;
    try {
      done = await flow.finish(state, binding, code, clock());
    } catch (err) {
      options.log?.('warn', `connect: the authorization did not complete: ${(err as Error).message}`);
      return refuse(c, 502, `The authorization server did not give Steward the account: ${(err as Error).message}`);
    }
    if (!done) return refuse(c, 403, ELSEWHERE);
    if (done.pending) {
      options.log?.('info', `connect: ${who(done)} authorized ${done.server}; it waits for them to confirm in chat`);
      return c.html(
        page(
          `Confirm in chat`,
          html`<h1>Almost connected: confirm in chat</h1>
            <p>
              Steward sent ${nameOf(done)} a private message in chat. This account is used for nothing until
              ${nameOf(done)} presses <b>Use this connection</b> there; <b>Not me</b> revokes it. (This browser was not
              signed in to Steward's dashboard as ${nameOf(done)}, so chat is where Steward can tell it is them.)
            </p>`,
        ),
      );
    }
    options.log?.('info', `connect: ${who(done)} connected ${done.server}`);
    return c.html(
      page(
        `Connected ${done.server}`,
        html`<h1>Connected ${done.server}</h1>
          <p>
            Steward now runs ${done.workspace ? "everyone's" : `${nameOf(done)}'s`} steps on ${done.server} with this
            account. A run that waited for it goes on. You can close this tab;
            <code>/steward connections</code> disconnects it.
          </p>`,
      ),
    );
  });
}

const USED =
  'This connect link is used, expired or unknown. Ask Steward again (or use `/steward connections connect <server>`).';
const ELSEWHERE =
  'This authorization was not started in this browser, was already used, or has expired: nothing was connected. Open the link Steward sent you again.';

// The page's own form may lead to any https origin (or loopback, for a local authorization server).
const FORM_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https: http://localhost:* http://127.0.0.1:* http://[::1]:*; base-uri 'none'; frame-ancestors 'none'";

function nameOf(target: ConnectTarget): string {
  return target.person.name ?? target.person.id;
}

function who(target: ConnectTarget): string {
  return `${target.person.channel}:${target.person.id}`;
}

function refuse(c: Context, status: 403 | 502, text: string): Response | Promise<Response> {
  const body: Markup = html`<h1>Not connected</h1>
    <p>${text}</p>`;
  return c.html(page('Steward', body), status);
}
