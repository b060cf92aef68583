/**
 * A local OAuth 2.1 authorization server in front of a Streamable HTTP MCP server, both from the MCP SDK's own
 * server side (`mcpAuthRouter`, `requireBearerAuth`, `McpServer`): dynamic registration, PKCE, refresh tokens, and
 * a bearer check that answers 401 with a `resource_metadata` challenge. The consent page approves at once as the
 * person signed in at the authorization server (the browser's `as_user` cookie, as a real one keeps its own login),
 * else as `consentAs`, so a test's "browser" only follows the redirect; with `consentPage`, it is a page with Allow
 * and Deny buttons (a form posted back to the server, as a real one), for a real browser to click. Its one tool, `whoami`, answers with the
 * token's subject, and every call is counted per subject with the token it came with (with `resource`, so is every read
 * of its one resource, `tracker://me`).
 *
 * As strict as a real server on what Steward relies on: a code is used once, by the client it was issued to, with
 * the redirect URI of its authorization request (RFC 6749 section 4.1.3) and its PKCE verifier (RFC 7636 section
 * 4.6, checked by the SDK's token handler); a token is bound to the resource it was asked for (RFC 8707 section 2)
 * and the MCP endpoint refuses one issued for another (MCP authorization spec, "Token Audience Binding"); revocation
 * (RFC 7009) ends the refresh token and the access tokens issued with it. Refresh tokens rotate and are used once: one
 * presented again after it was exchanged is refused with invalid_grant and, as a breach (RFC 6749 section 10.4, RFC
 * 9700 section 4.14.2: "the authorization server cannot determine which party submitted the invalid refresh token,
 * but it will revoke the active refresh token"), the refresh token that replaced it is revoked with its access tokens.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import express, { type Response } from 'express';

/** One tool call as the server saw it. */
export interface SeenCall {
  subject: string;
  token: string;
}

/** The running pair and what it saw. */
export interface OAuthMcpServer {
  /** The MCP endpoint (`/mcp`). */
  url: string;
  /** Who the consent page approves as, from now on. */
  consentAs: string;
  /** Authorizations the consent page was shown for (with `consentPage`). */
  consentsShown: number;
  /** Clients registered dynamically (RFC 7591) at the authorization server. */
  clientsRegistered: number;
  calls: SeenCall[];
  /** Resource reads (with `resource`), each as the server saw it. */
  reads: SeenCall[];
  /** Prompts got (with `prompt`), each as the server saw it. */
  promptGets: SeenCall[];
  /** Every access and refresh token issued so far: the canaries a test looks for where they must not be. */
  issued: string[];
  /** Refreshes that issued tokens. */
  refreshes: number;
  /** Refresh tokens presented again after they were exchanged (each one revoked what replaced it). */
  reusedRefreshTokens: string[];
  /** Requests the MCP endpoint refused with 401 (no token, or one unknown, expired or for another resource). */
  refusals: number;
  /** Resolves once the MCP endpoint has refused `count` requests in all. */
  refusalsReached(count: number): Promise<void>;
  /** Holds every refresh at the token endpoint, before its token is looked at, until `release` is called. */
  holdRefreshes(): { release(): void };
  /** Tokens revoked through the revocation endpoint (RFC 7009), in order. */
  revoked: string[];
  /** The `state` of every authorization request, in order. */
  states: string[];
  /** Makes every access token issued so far expired, as time would. */
  expireAccessTokens(): void;
  /** Revokes every token of a subject at the server's own initiative (an admin, a password change). */
  revokeSubject(subject: string): void;
  close(): Promise<void>;
}

interface Grant {
  subject: string;
  clientId: string;
  expiresAt: number;
  scopes: string[];
  resource?: URL;
  /** The refresh token issued with this access token (revoking it ends both). */
  family?: string;
}

class TestAuthProvider implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  readonly clientsStore: OAuthRegisteredClientsStore = {
    getClient: (id) => this.clients.get(id),
    registerClient: (client) => {
      // The SDK's registration handler has already given the client its id.
      const full = client as OAuthClientInformationFull;
      this.clients.set(full.client_id, full);
      this.state.clientsRegistered += 1;
      return full;
    },
  };
  private readonly codes = new Map<
    string,
    { challenge: string; redirectUri: string; grant: Omit<Grant, 'expiresAt'> }
  >();
  readonly access = new Map<string, Grant>();
  private readonly refresh = new Map<string, Omit<Grant, 'expiresAt'>>();
  /** Each exchanged refresh token, and the one issued in its place. */
  private readonly spent = new Map<string, string>();
  /** While set, refreshes wait for it. */
  gate: Promise<void> | undefined;

  /** Authorizations whose consent page is shown, by the id its form posts back. */
  readonly asked = new Map<
    string,
    { subject: string; client: OAuthClientInformationFull; params: AuthorizationParams }
  >();

  constructor(
    private readonly state: OAuthMcpServer,
    private readonly consentPage: boolean,
  ) {}

  authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const signedIn = /(?:^|;\s*)as_user=([^;]+)/.exec(res.req.headers.cookie ?? '')?.[1];
    this.state.states.push(params.state ?? '');
    const subject = signedIn ? decodeURIComponent(signedIn) : this.state.consentAs;
    if (!this.consentPage) {
      this.allow(subject, client, params, res);
      return Promise.resolve();
    }
    const id = token();
    this.asked.set(id, { subject, client, params });
    this.state.consentsShown += 1;
    const name = (client.client_name ?? client.client_id).replace(/[^\w .-]/g, '');
    res
      .type('html')
      .send(
        `<!doctype html><title>Allow ${name}?</title><h1>Allow ${name} to use your account ${subject.replace(/[^\w@.-]/g, '')}?</h1>` +
          `<form method="post" action="/consent"><input type="hidden" name="id" value="${id}">` +
          `<button name="decision" value="allow">Allow</button><button name="decision" value="deny">Deny</button></form>`,
      );
    return Promise.resolve();
  }

  /** The consent page's answer: the code (or access_denied, RFC 6749 section 4.1.2.1) sent back to the client. */
  answer(id: string, decision: string, res: Response): void {
    const asked = this.asked.get(id);
    this.asked.delete(id);
    if (!asked) {
      res.status(400).send('unknown authorization');
      return;
    }
    if (decision === 'allow') {
      this.allow(asked.subject, asked.client, asked.params, res);
      return;
    }
    const back = new URL(asked.params.redirectUri);
    back.searchParams.set('error', 'access_denied');
    if (asked.params.state !== undefined) back.searchParams.set('state', asked.params.state);
    res.redirect(back.href);
  }

  private allow(subject: string, client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): void {
    const code = `code-${token()}`;
    const grant = {
      subject,
      clientId: client.client_id,
      scopes: params.scopes ?? [],
      ...(params.resource ? { resource: params.resource } : {}),
    };
    this.codes.set(code, { challenge: params.codeChallenge, redirectUri: params.redirectUri, grant });
    const back = new URL(params.redirectUri);
    back.searchParams.set('code', code);
    if (params.state !== undefined) back.searchParams.set('state', params.state);
    res.redirect(back.href);
  }

  challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const found = this.codes.get(code);
    if (!found) throw new InvalidGrantError('unknown authorization code');
    return Promise.resolve(found.challenge);
  }

  exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _verifier?: string,
    redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const found = this.codes.get(code);
    // RFC 6749 section 4.1.2: a code is used once; section 4.1.3: by its client, with its authorization's redirect_uri.
    this.codes.delete(code);
    if (!found || found.grant.clientId !== client.client_id) throw new InvalidGrantError('unknown authorization code');
    if (redirectUri !== found.redirectUri) throw new InvalidGrantError('redirect_uri differs from the authorization');
    // RFC 8707 section 2.2: the token is for the resource the authorization named.
    if (resource?.href !== found.grant.resource?.href) throw new InvalidGrantError('resource differs');
    return Promise.resolve(this.issue(found.grant));
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string): Promise<OAuthTokens> {
    await this.gate;
    if (this.spent.has(refreshToken)) {
      // Reuse of a rotated token: a breach, and the server cannot tell who is the thief (RFC 9700 section 4.14.2).
      let latest = refreshToken;
      for (let next = this.spent.get(latest); next !== undefined; next = this.spent.get(latest)) latest = next;
      this.revokeFamily(latest);
      this.state.reusedRefreshTokens.push(refreshToken);
      throw new InvalidGrantError('refresh token already used');
    }
    const grant = this.refresh.get(refreshToken);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('unknown refresh token');
    this.refresh.delete(refreshToken);
    this.state.refreshes += 1;
    const tokens = this.issue(grant);
    // RFC 6749 section 10.4: the previous refresh token is invalidated but retained by the authorization server.
    this.spent.set(refreshToken, tokens.refresh_token ?? '');
    return tokens;
  }

  revokeToken(client: OAuthClientInformationFull, request: { token: string }): Promise<void> {
    // RFC 7009 section 2.1: only the client the token was issued to may revoke it; 2.2: an unknown token is no error.
    const refresh = this.refresh.get(request.token);
    if (refresh && refresh.clientId === client.client_id) this.revokeFamily(request.token);
    const access = this.access.get(request.token);
    if (access && access.clientId === client.client_id) this.access.delete(request.token);
    this.state.revoked.push(request.token);
    return Promise.resolve();
  }

  /** Ends a refresh token and every access token issued with it. */
  revokeFamily(refreshToken: string): void {
    this.refresh.delete(refreshToken);
    for (const [t, g] of this.access) if (g.family === refreshToken) this.access.delete(t);
  }

  refreshTokens(): [string, Omit<Grant, 'expiresAt'>][] {
    return [...this.refresh.entries()];
  }

  verifyAccessToken(accessToken: string): Promise<AuthInfo> {
    const grant = this.access.get(accessToken);
    if (!grant) throw new InvalidTokenError('unknown access token');
    return Promise.resolve({
      token: accessToken,
      clientId: grant.clientId,
      scopes: grant.scopes,
      expiresAt: grant.expiresAt,
      extra: { subject: grant.subject },
      ...(grant.resource ? { resource: grant.resource } : {}),
    });
  }

  private issue(grant: Omit<Grant, 'expiresAt'>): OAuthTokens {
    const accessToken = `canary-access-${token()}`;
    const refreshToken = `canary-refresh-${token()}`;
    const { family: _old, ...rest } = grant;
    this.access.set(accessToken, { ...rest, family: refreshToken, expiresAt: Math.floor(Date.now() / 1000) + 3600 });
    this.refresh.set(refreshToken, rest);
    this.state.issued.push(accessToken, refreshToken);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, refresh_token: refreshToken };
  }
}

function token(): string {
  return randomBytes(12).toString('hex');
}

/** Starts the pair on a loopback port. */
export async function startOAuthMcpServer(options: {
  consentAs: string;
  consentPage?: boolean;
  /** Also offer one resource, `tracker://me`, whose read answers with the token's subject (counted in `reads`). */
  resource?: boolean;
  /** Also offer one prompt, `mine`, whose text names the token's subject (each get counted in `promptGets`). */
  prompt?: boolean;
}): Promise<OAuthMcpServer> {
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const mcpUrl = new URL('/mcp', base);
  const state: OAuthMcpServer = {
    url: mcpUrl.href,
    consentAs: options.consentAs,
    consentsShown: 0,
    clientsRegistered: 0,
    calls: [],
    reads: [],
    promptGets: [],
    issued: [],
    refreshes: 0,
    reusedRefreshTokens: [],
    refusals: 0,
    refusalsReached: (count) =>
      state.refusals >= count ? Promise.resolve() : new Promise((resolve) => refusalWaits.push({ count, resolve })),
    holdRefreshes: () => {
      let release = () => {};
      provider.gate = new Promise((resolve) => (release = resolve));
      return {
        release: () => {
          provider.gate = undefined;
          release();
        },
      };
    },
    revoked: [],
    states: [],
    expireAccessTokens: () => {
      for (const grant of provider.access.values()) grant.expiresAt = 0;
    },
    revokeSubject: (subject) => {
      for (const g of provider.access.values()) if (g.subject === subject && g.family) provider.revokeFamily(g.family);
      for (const [t, g] of provider.refreshTokens()) if (g.subject === subject) provider.revokeFamily(t);
    },
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
  const refusalWaits: { count: number; resolve: () => void }[] = [];
  const provider = new TestAuthProvider(state, options.consentPage ?? false);
  const app = express();
  app.post('/consent', express.urlencoded({ extended: false }), (req, res) => {
    const body = req.body as { id?: string; decision?: string };
    provider.answer(body.id ?? '', body.decision ?? '', res);
  });
  app.use(mcpAuthRouter({ provider, issuerUrl: new URL(base), resourceServerUrl: mcpUrl, scopesSupported: ['tools'] }));
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  const countRefusals = (_req: express.Request, res: Response, next: express.NextFunction) => {
    res.on('finish', () => {
      if (res.statusCode !== 401) return;
      state.refusals += 1;
      for (const wait of refusalWaits.filter((w) => w.count <= state.refusals)) {
        refusalWaits.splice(refusalWaits.indexOf(wait), 1);
        wait.resolve();
      }
    });
    next();
  };
  app.all('/mcp', countRefusals, express.json(), bearer, async (req, res) => {
    const auth = req.auth;
    // A token issued for another resource is refused as if unknown (MCP authorization spec, token audience binding).
    if (auth?.resource?.href !== mcpUrl.href) {
      res.status(401).set('WWW-Authenticate', 'Bearer error="invalid_token"').json({ error: 'invalid_token' });
      return;
    }
    const subject = typeof auth?.extra?.subject === 'string' ? auth.extra.subject : '';
    const server = new McpServer({ name: 'oauth-test-server', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Says whose token the call came with' }, () => {
      state.calls.push({ subject, token: auth?.token ?? '' });
      return { content: [{ type: 'text', text: subject }] };
    });
    if (options.resource)
      server.registerResource('me', 'tracker://me', { description: 'Whose token the read came with' }, (uri) => {
        state.reads.push({ subject, token: auth?.token ?? '' });
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: subject }] };
      });
    if (options.prompt)
      server.registerPrompt('mine', { description: 'Asks about your own items' }, () => {
        state.promptGets.push({ subject, token: auth?.token ?? '' });
        return { messages: [{ role: 'user', content: { type: 'text', text: `List the open items of ${subject}` } }] };
      });
    // Stateless: one transport per request, so every request is checked on its own token.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  http.on('request', app);
  return state;
}
