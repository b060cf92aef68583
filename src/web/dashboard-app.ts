/**
 * The dashboard's routes (hono): sign-in by link, the run list, a run's page, its live fragment and its events, and
 * the estimates page (estimated against actual durations), and the spend page (spend against the caps).
 * Read-only: the only writes are a sign-in link being used up and sessions starting and ending.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import { html } from 'hono/html';
import { NONCE, secureHeaders, type SecureHeadersVariables } from 'hono/secure-headers';
import { streamSSE } from 'hono/streaming';
import type { EstimatedRun, RunDetail, RunFilters, RunSummary, Viewer } from '../store/dashboard-queries.ts';
import { ESTIMATES_SHOWN, estimatesPage } from './estimates-page.ts';
import { SPEND_LINES_SHOWN, spendPage } from './spend-page.ts';
import { spendWindows, type SpendCaps, type SpendWindows } from '../engine/spend.ts';
import type { DashboardSpend } from '../store/spend-view.ts';
import { page, type Markup } from './page-layout.ts';
import { runFragment, runPage, type ActingServers } from './run-page.ts';
import { attemptImage } from './attempt-media.ts';
import { runsPage } from './runs-page.ts';
import { addConnectRoutes, type ConnectFlow } from './connect-pages.ts';
import { clearSessionCookie, SESSION_MS, sessionIdOf, setSessionCookie, type SessionPerson } from './session.ts';

/** How long one live-update stream lasts before the page opens another (its access checked again). */
const STREAM_MS = 5 * 60_000;
/** How often an idle stream sends a comment, so a client gone without closing is noticed. */
const PING_MS = 20_000;

/** What the dashboard reads (and its writes: using up a sign-in link, starting and ending sessions). */
export interface DashboardData {
  /** Uses a sign-in link and starts a session until `expiresAt`; null when the link is used, expired or unknown. */
  signIn(token: string, at: Date, expiresAt: Date): Promise<{ sessionId: string; person: SessionPerson } | null>;
  /** The person of a live session; null once it is ended, expired or unknown. */
  session(sessionId: string, at: Date): Promise<SessionPerson | null>;
  /** Ends a session, or with `everywhere` every live session of its person; how many ended. */
  signOut(sessionId: string, at: Date, everywhere: boolean): Promise<number>;
  listRuns(viewer: Viewer, filters: RunFilters, pageSize: number): Promise<{ runs: RunSummary[]; more: boolean }>;
  runDetail(viewer: Viewer, runId: string): Promise<RunDetail | null>;
  /** Spend today and this month as the viewer may see it (`/steward spend`'s rule), at most `limit` lines a list. */
  spendView(viewer: Viewer, windows: SpendWindows, limit: number): Promise<DashboardSpend>;
  /** The newest ended runs the viewer may see that had a duration estimate, newest first. */
  estimatedRuns(viewer: Viewer, limit: number): Promise<EstimatedRun[]>;
  /** Changes whenever the run does; null once it is gone. */
  fingerprint(runId: string): Promise<string | null>;
}

/** How the dashboard is built. */
export interface DashboardOptions {
  data: DashboardData;
  /** Signs the session cookie. */
  secret: string;
  /** The public address: its origin is the one sign-in forms may come from; https makes cookies Secure. */
  publicUrl: string;
  /** Approvers as `<channel>:<id>`: they see every run. */
  approvers: readonly string[];
  clock: () => Date;
  /** How often an open run page's events look at the run (default 1 s). */
  pollMs?: number;
  pageSize?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** People connecting their own accounts to servers that connect per person (`/connect`, `/oauth/callback`). */
  connect?: ConnectFlow;
  /** The servers that connect per person: a run page says whose account their steps run with (the requester's). */
  personServers?: readonly string[];
  /** The servers an approver connects for the workspace: a run page says their steps run as the workspace. */
  workspaceServers?: readonly string[];
  /** The operator's spend caps, shown on the spend page with what is left (default: none). */
  spendCaps?: SpendCaps;
}

type Env = { Variables: SecureHeadersVariables & { viewer: Viewer } };

/** Builds the app; serve it with `startDashboardServer`, or call `app.request()` in tests. */
export function createDashboardApp(options: DashboardOptions): Hono<Env> {
  const origin = new URL(options.publicUrl).origin;
  const cookie = { secret: options.secret, secure: origin.startsWith('https:') };
  const pageSize = options.pageSize ?? 25;
  const pollMs = options.pollMs ?? 1_000;
  const app = new Hono<Env>();

  app.use(
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        styleSrc: ["'unsafe-inline'"],
        scriptSrc: [NONCE],
        connectSrc: ["'self'"],
        imgSrc: ["'self'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
      },
      referrerPolicy: 'no-referrer',
      strictTransportSecurity: cookie.secure ? 'max-age=31536000' : false,
      // A page that sets its own policy keeps it (the connect page's form leads to the authorization server).
      overwrite: false,
    }),
  );
  app.use(async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  });
  app.use('/signin', csrf({ origin }));
  // Signing out is a form too: another site may not sign a person out. Sign-in bodies are one short token.
  app.use('/signout', csrf({ origin }));
  app.use('/connect', csrf({ origin }));
  for (const path of ['/signin', '/signout', '/connect'])
    app.use(path, bodyLimit({ maxSize: 4_096, onError: (c) => refusal(c, 413, 'That form is too large.') }));

  app.get('/', (c) => c.redirect('/runs'));
  // A GET never uses the link up: chat apps fetch links to preview them, which would spend it before the person.
  app.get('/signin/:token', (c) =>
    c.html(
      page(
        'Sign in',
        html`<h1>Sign in to Steward</h1>
          <form method="post" action="/signin">
            <input type="hidden" name="token" value="${c.req.param('token')}" />
            <button type="submit">Sign in</button>
          </form>`,
      ),
    ),
  );
  app.post('/signin', async (c) => {
    const body = await c.req.parseBody();
    const token = typeof body.token === 'string' ? body.token : '';
    const now = options.clock();
    const expiresAt = new Date(now.getTime() + SESSION_MS);
    const started = token ? await options.data.signIn(token, now, expiresAt) : null;
    if (!started)
      return refusal(
        c,
        403,
        'This sign-in link is used, expired or unknown. Ask Steward for a new one with `/steward dashboard` (or `dashboard` in the console).',
      );
    await setSessionCookie(c, cookie, started.sessionId, expiresAt);
    options.log?.('info', `dashboard: ${started.person.channel}:${started.person.id} signed in`);
    return c.redirect('/runs', 303);
  });
  // Ends the session in the database, so a copy of the cookie stops working too; `everywhere` ends every session of
  // the person (another browser, a cookie someone took).
  app.post('/signout', async (c) => {
    const body = await c.req.parseBody();
    const id = await sessionIdOf(c, cookie);
    const ended = id ? await options.data.signOut(id, options.clock(), body.everywhere === 'yes') : 0;
    if (ended > 0) options.log?.('info', `dashboard: ${ended} session${ended === 1 ? '' : 's'} signed out`);
    clearSessionCookie(c, cookie);
    return c.html(
      page(
        'Signed out',
        html`<h1>Signed out</h1>
          <p>Ask Steward for a new sign-in link to come back.</p>`,
      ),
    );
  });

  if (options.connect)
    addConnectRoutes(app, {
      flow: options.connect,
      secure: cookie.secure,
      clock: options.clock,
      signedIn: async (c) => {
        const id = await sessionIdOf(c, cookie);
        const person = id ? await options.data.session(id, options.clock()) : null;
        return person && { channel: person.channel, id: person.id };
      },
      ...(options.log && { log: options.log }),
    });

  app.use('/runs/*', signedIn);
  app.use('/runs', signedIn);
  app.use('/estimates', signedIn);
  app.use('/spend', signedIn);
  async function signedIn(c: Context<Env>, next: () => Promise<void>) {
    const id = await sessionIdOf(c, cookie);
    const person = id ? await options.data.session(id, options.clock()) : null;
    if (!person)
      return refusal(
        c,
        401,
        'You are not signed in. Ask Steward for a sign-in link with `/steward dashboard` (or `dashboard` in the console).',
      );
    // By id as configured now; by a role held when the person asked for their link (roles come only with an action)
    // that the setting still names.
    const byRole = person.approverRoles.some((role) => options.approvers.includes(`${person.channel}:role:${role}`));
    const approver = byRole || options.approvers.includes(`${person.channel}:${person.id}`);
    c.set('viewer', { channel: person.channel, id: person.id, ...(person.name && { name: person.name }), approver });
    await next();
  }

  app.get('/runs', async (c) => {
    const q = (name: string) => c.req.query(name)?.trim().slice(0, 200) || undefined;
    const pageNumber = Number.parseInt(c.req.query('page') ?? '1', 10);
    const filters: RunFilters = {
      ...optional('status', q('status')),
      ...optional('person', q('person')),
      ...optional('channel', q('channel')),
      ...optional('workflow', q('workflow')),
      page: Number.isFinite(pageNumber) && pageNumber > 0 ? Math.min(pageNumber, 10_000) : 1,
    };
    const viewer = c.get('viewer');
    const { runs, more } = await options.data.listRuns(viewer, filters, pageSize);
    const who = `${viewer.name ?? viewer.id} (${viewer.channel}${viewer.approver ? ', approver: every run' : ''})`;
    return c.html(runsPage(who, filters, runs, more));
  });
  app.get('/estimates', async (c) =>
    c.html(estimatesPage(await options.data.estimatedRuns(c.get('viewer'), ESTIMATES_SHOWN))),
  );
  app.get('/spend', async (c) => {
    const spend = await options.data.spendView(c.get('viewer'), spendWindows(options.clock()), SPEND_LINES_SHOWN);
    return c.html(spendPage(spend, options.spendCaps));
  });
  app.get('/runs/:id', async (c) => {
    const detail = await options.data.runDetail(c.get('viewer'), c.req.param('id'));
    if (!detail) return notFound(c);
    return c.html(runPage(detail, options.clock(), c.get('secureHeadersNonce') ?? '', servedAs(options)));
  });
  app.get('/runs/:id/fragment', async (c) => {
    const detail = await options.data.runDetail(c.get('viewer'), c.req.param('id'));
    if (!detail) return notFound(c);
    return c.html(runFragment(detail, options.clock(), servedAs(options)));
  });
  app.get('/runs/:id/attempts/:step/:attempt/files/:n', async (c) => {
    const detail = await options.data.runDetail(c.get('viewer'), c.req.param('id'));
    const attempt = Number(c.req.param('attempt'));
    const n = Number(c.req.param('n'));
    const image =
      detail && Number.isInteger(attempt) && Number.isInteger(n) && n >= 0
        ? attemptImage(detail, c.req.param('step'), attempt, n)
        : null;
    if (!image) return notFound(c);
    // Its own type, never sniffed (secureHeaders sends nosniff); stored nowhere, as every page (no-store).
    return c.body(new Uint8Array(Buffer.from(image.data, 'base64')), 200, {
      'Content-Type': image.mimeType,
      'Content-Disposition': 'inline',
    });
  });
  app.get('/runs/:id/events', async (c) => {
    const runId = c.req.param('id');
    if (!(await options.data.runDetail(c.get('viewer'), runId))) return notFound(c);
    return streamSSE(
      c,
      async (stream) => {
        let last = await options.data.fingerprint(runId);
        await stream.writeSSE({ event: 'ready', data: 'ok' });
        // A stream ends after a while (the page's EventSource opens a new one, whose access is checked again), and a
        // comment now and then finds a client that went away without closing: no stream polls forever.
        const until = Date.now() + STREAM_MS;
        let pinged = Date.now();
        while (!stream.aborted && !stream.closed && Date.now() < until) {
          await stream.sleep(pollMs);
          if (stream.aborted || stream.closed) break;
          if (Date.now() - pinged >= PING_MS) {
            await stream.write(': ping\n\n');
            pinged = Date.now();
          }
          // A failed read (the database going away at shutdown) ends the stream; the page's EventSource reconnects.
          const now = await options.data.fingerprint(runId).catch((err: unknown) => {
            options.log?.('warn', `dashboard: events of ${runId}: ${(err as Error).message}`);
            return undefined;
          });
          // Unreadable, or the run is gone: nothing more will change.
          if (now === undefined || now === null) break;
          if (now !== last) {
            last = now;
            await stream.writeSSE({ event: 'changed', data: now });
          }
        }
        // A stream's failure goes to Steward's log (which keeps secrets out), not to hono's console.error.
      },
      async (err) => options.log?.('warn', `dashboard: events of ${runId}: ${err.message}`),
    );
  });

  app.notFound((c) => notFound(c));
  app.onError((err, c) => {
    // hono's csrf middleware refuses a form posted from another origin this way.
    if (err instanceof HTTPException && err.status === 403)
      return refusal(c, 403, 'This form was sent from another site, so it was refused.');
    options.log?.('error', `dashboard: ${c.req.method} ${c.req.path}: ${err.message}`);
    return refusal(c, 500, 'Something went wrong on this page; the log says what.');
  });
  return app;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

/** The same answer for a run that does not exist and one the viewer may not see. */
function notFound(c: Context): Response | Promise<Response> {
  return refusal(c, 404, 'There is no such page, or no run here that you may see.');
}

function refusal(c: Context, status: 401 | 403 | 404 | 413 | 500, text: string): Response | Promise<Response> {
  const title =
    status === 404 ? 'Not found' : status === 500 ? 'Error' : status === 413 ? 'Too large' : 'Not signed in';
  const body: Markup = html`<h1>${title}</h1>
    <p>${text}</p>`;
  return c.html(page('Steward', body), status);
}

/** Whose connections the servers' steps run with, for a run page. */
function servedAs(options: DashboardOptions): ActingServers {
  return { person: options.personServers ?? [], workspace: options.workspaceServers ?? [] };
}
