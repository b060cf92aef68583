/**
 * The SDK's `OAuthClientProvider` for one server and one owner: everything it keeps goes to the connection store,
 * and the OAuth itself (discovery, registration, PKCE, resource indicators, refresh, step-up) is the SDK's `auth()`.
 */
import type { AddClientAuthentication, OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { ConnectionOwner, ConnectionSecret, ConnectionStore } from './connection-store.ts';
import { isSecureOrLoopback, type McpAuthConfig } from './mcp-config.ts';
import { RefreshGuard } from './refresh-guard.ts';

/** What a person's authorization needs: open `url` in their browser, and the code it comes back with. */
export interface AuthorizationRequest {
  server: string;
  owner: ConnectionOwner;
  url: URL;
}

/**
 * Gets an authorization code for a request: resolves with the code the authorization server sent back to the
 * redirect URL, or undefined when no one can authorize now (the flow is left for later).
 */
export type Authorizer = (request: AuthorizationRequest) => Promise<string | undefined>;

/** What the provider needs besides the server's auth config. */
export interface OAuthProviderOptions {
  server: string;
  auth: McpAuthConfig;
  owner: ConnectionOwner;
  store: ConnectionStore;
  /** Used when the config names none. */
  redirectUrl: string;
  clientName: string;
  authorize?: Authorizer;
  /** The `state` of an authorization this provider starts (Steward's connect flow binds it to a person and a run). */
  state?: string;
  /**
   * Starts a new authorization instead of refreshing the stored tokens (a person connecting again); the tokens it
   * gets replace the stored ones only once the code is exchanged.
   */
  fresh?: boolean;
  /** Where the tokens this provider gets are kept: `pending` until the person confirms them (default `tokens`). */
  tokensAs?: Extract<ConnectionSecret, 'tokens' | 'pending'>;
}

/** An `OAuthClientProvider` whose state is the connection store's, so every process sees the same connection. */
export class McpOAuthProvider implements OAuthClientProvider {
  /** The code of an authorization that came back, waiting to be exchanged for tokens. */
  private pendingCode: string | undefined;
  /** The last authorization that no one could complete, for the operator's message. */
  unauthorized: URL | undefined;

  /** Set for a client that proves itself with a signed JWT (private_key_jwt, RFC 7523) instead of a secret. */
  readonly addClientAuthentication: AddClientAuthentication | undefined;

  /** The authorization's `state` (RFC 6749 section 10.12), when Steward's connect flow gave one. */
  readonly state: (() => string) | undefined;

  /** Serialises this connection's refreshes across sessions and processes: wrap the fetch the SDK's auth uses. */
  readonly refreshGuard: RefreshGuard;

  constructor(private readonly options: OAuthProviderOptions) {
    this.refreshGuard = new RefreshGuard(options.store, options.server, options.owner);
    const state = options.state;
    this.state = state === undefined ? undefined : () => state;
    const { clientId, privateKey, algorithm } = options.auth;
    this.addClientAuthentication =
      clientId && privateKey
        ? createPrivateKeyJwtAuth({ issuer: clientId, subject: clientId, privateKey, alg: algorithm ?? 'ES256' })
        : undefined;
  }

  get redirectUrl(): string | undefined {
    // No redirect makes the SDK take the non-interactive path (prepareTokenRequest) for a machine connection.
    return this.machine ? undefined : (this.options.auth.redirectUrl ?? this.options.redirectUrl);
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.auth.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { auth, clientName } = this.options;
    return {
      client_name: clientName,
      redirect_uris: this.redirectUrl ? [this.redirectUrl] : [],
      ...(this.machine ? { grant_types: ['client_credentials'] } : {}),
      ...(auth.privateKey ? { token_endpoint_auth_method: 'private_key_jwt' } : {}),
      ...(auth.scope ? { scope: auth.scope } : {}),
    };
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const stored = await this.read<OAuthClientInformationMixed>('client');
    const { clientId, clientSecret, issuer } = this.options.auth;
    if (!clientId) return stored;
    // A pre-registered client, bound to the issuer the config names or (once it has answered) the one it met first.
    if (stored?.client_id === clientId && (issuer === undefined || stored.issuer === issuer)) {
      return clientSecret ? { ...stored, client_id: clientId, client_secret: clientSecret } : stored;
    }
    return {
      client_id: clientId,
      ...(clientSecret ? { client_secret: clientSecret } : {}),
      ...(issuer ? { issuer } : {}),
    };
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    // A session that cannot authorize by itself (it found no tokens, or its tokens gone) registers a client only to
    // build an authorization URL no one will open: storing it would replace the registration that the authorization
    // under way in a browser was started with, and its code would then be refused at the exchange.
    if (!this.canAuthorize) return;
    // A configured secret stays in the config: only the binding to its issuer is kept.
    const { client_secret: _secret, ...rest } = info;
    await this.write('client', this.options.auth.clientSecret ? rest : info);
  }

  tokens(): Promise<OAuthTokens | undefined> {
    if (this.options.fresh) return Promise.resolve(undefined);
    return this.read<OAuthTokens>('tokens');
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const as = this.options.tokensAs ?? 'tokens';
    // Stored already by the refresh guard, under its hold: writing them again now could overwrite newer ones.
    if (as === 'tokens' && this.refreshGuard.isSettled(tokens)) return;
    await this.write(as, tokens);
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!isSecureOrLoopback(url)) {
      throw new Error(`the authorization endpoint ${url.origin} is not https; Steward sends no one there`);
    }
    const { server, owner, authorize } = this.options;
    const code = authorize ? await authorize({ server, owner, url }) : undefined;
    if (code === undefined) this.unauthorized = url;
    else this.pendingCode = code;
  }

  /** The authorization code that came back since the last call, if any (taken: it can be used once). */
  takeCode(): string | undefined {
    const code = this.pendingCode;
    this.pendingCode = undefined;
    return code;
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    // A session that finds its tokens gone cannot authorize by itself: its verifier would only overwrite that of the
    // authorization under way in a browser (a person's own, or an approver's for the workspace) and fail its exchange.
    if (!this.canAuthorize) return;
    await this.write('verifier', verifier);
  }

  async codeVerifier(): Promise<string> {
    const verifier = await this.read<string>('verifier');
    if (verifier === undefined) throw new Error('no PKCE code verifier is stored for this authorization');
    return verifier;
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.machine) return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope) params.set('scope', scope);
    return params;
  }

  /**
   * Forgets what the SDK found refused. Tokens only when the authorization server refused their refresh token
   * (compare-and-forget): the SDK also calls this after a refused code exchange, and after a refresh that came second,
   * and neither may take the tokens a person or another process holds now.
   */
  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    // The verifier is the authorization's under way in a browser: only a provider that authorizes may forget it.
    const verifier: ConnectionSecret[] = this.options.authorize ? ['verifier'] : [];
    const secrets: Record<typeof scope, ConnectionSecret[]> = {
      all: ['client', ...verifier],
      client: ['client'],
      tokens: [],
      verifier,
      discovery: [],
    };
    if (scope === 'all' || scope === 'tokens') await this.refreshGuard.forgetRefused();
    await this.options.store.forget(this.options.server, this.options.owner, secrets[scope]);
  }

  /**
   * Whether this provider can get tokens by itself: a machine connection (client credentials), or one with someone to
   * authorize (a browser's flow, or a host given an authorizer).
   */
  private get canAuthorize(): boolean {
    return this.machine || this.options.authorize !== undefined;
  }

  private get machine(): boolean {
    return this.options.auth.grant === 'client_credentials';
  }

  private async read<T>(secret: ConnectionSecret): Promise<T | undefined> {
    const text = await this.options.store.read(this.options.server, this.options.owner, secret);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }

  private async write(secret: ConnectionSecret, value: unknown): Promise<void> {
    await this.options.store.write(this.options.server, this.options.owner, secret, JSON.stringify(value));
  }
}
