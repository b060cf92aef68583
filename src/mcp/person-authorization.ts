/**
 * A person's authorization of a server that connects in a browser (their own connection, or the workspace's one that an
 * approver makes), as their browser goes through it: the
 * authorization URL (the SDK's `auth()` with discovery, registration, PKCE and the resource indicator), the code
 * exchanged for tokens when the browser comes back, and revocation (RFC 7009) when they disconnect.
 */
import { auth, discoverOAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ConnectionOwner, ConnectionSecret, ConnectionStore } from './connection-store.ts';
import type { McpAuthConfig, McpServerConfig } from './mcp-config.ts';
import { McpOAuthProvider, type OAuthProviderOptions } from './oauth-provider.ts';

/** What a person's authorization needs besides the server's config. */
export interface PersonAuthorizationOptions {
  store: ConnectionStore;
  redirectUrl: string;
  clientName: string;
  fetch: FetchLike;
}

/** Whose connection a browser authorizes: a person's own, or (made by an approver) the workspace's. */
type Person = ConnectionOwner;

function authOf(config: McpServerConfig): { url: string; auth: McpAuthConfig } {
  const t = config.transport;
  if (t.kind !== 'http' || t.auth?.grant !== 'authorization_code') {
    throw new Error(`MCP server "${config.name}" is not connected from a browser`);
  }
  return { url: t.url, auth: t.auth };
}

/**
 * The URL of the authorization server's page where `person` allows Steward, carrying `state`; the PKCE verifier is
 * kept (sealed) for the exchange. Their stored tokens are left alone until the new ones arrive.
 */
export async function authorizationUrl(
  config: McpServerConfig,
  person: Person,
  state: string,
  options: PersonAuthorizationOptions,
): Promise<URL> {
  const { url } = authOf(config);
  let target: URL | undefined;
  const provider = personProvider(config, person, options, {
    state,
    authorize: ({ url: where }) => {
      target = where;
      return Promise.resolve(undefined);
    },
  });
  const result = await auth(provider, { serverUrl: url, fetchFn: options.fetch });
  if (result !== 'REDIRECT' || !target) throw new Error('the authorization server started no authorization');
  return target;
}

/**
 * Exchanges the code the authorization server sent back to the callback; the person's tokens are stored sealed, as
 * their connection, or with `pending` beside it, unused until they confirm it.
 */
export async function finishAuthorization(
  config: McpServerConfig,
  person: Person,
  code: string,
  options: PersonAuthorizationOptions,
  pending = false,
): Promise<void> {
  const { url } = authOf(config);
  const provider = personProvider(config, person, options, {
    tokensAs: pending ? 'pending' : 'tokens',
    // Only so the verifier of this authorization is read and kept as the SDK expects; nothing is redirected.
    authorize: () => Promise.resolve(undefined),
  });
  const result = await auth(provider, { serverUrl: url, authorizationCode: code, fetchFn: options.fetch });
  if (result !== 'AUTHORIZED') throw new Error('the authorization server did not give tokens for the code');
  await options.store.forget(config.name, person, ['verifier']);
}

/**
 * Revokes the person's tokens at the authorization server when its metadata names a revocation endpoint (RFC 7009
 * section 2.1: the refresh token, whose revocation ends its access tokens too where the server ties them); false when
 * it offers none or refuses. `which`: their connection, or the tokens of one that waits for them to confirm it. Never
 * throws: the local connection is forgotten either way.
 */
export async function revokeTokens(
  config: McpServerConfig,
  person: Person,
  options: PersonAuthorizationOptions,
  which: Extract<ConnectionSecret, 'tokens' | 'pending'> = 'tokens',
): Promise<boolean> {
  try {
    const tokensText = await options.store.read(config.name, person, which);
    const clientText = await options.store.read(config.name, person, 'client');
    return await revokeStored(config, tokensText, clientText, options.fetch);
  } catch {
    return false;
  }
}

/**
 * `revokeTokens` with the tokens and the client as stored (JSON text), for a caller that holds them already (a
 * read through the store meanwhile could wait for that very hold). Never throws.
 */
export async function revokeStored(
  config: McpServerConfig,
  tokensText: string | undefined,
  clientText: string | undefined,
  fetch: FetchLike,
): Promise<boolean> {
  try {
    const { url } = authOf(config);
    if (tokensText === undefined || clientText === undefined) return false;
    const tokens = JSON.parse(tokensText) as OAuthTokens;
    const client = JSON.parse(clientText) as OAuthClientInformationMixed;
    const info = await discoverOAuthServerInfo(url, { fetchFn: fetch });
    // RFC 8414 section 2 names these; the SDK's type for OpenID Connect metadata leaves them out.
    const metadata = info.authorizationServerMetadata as
      { revocation_endpoint?: string; revocation_endpoint_auth_methods_supported?: string[] } | undefined;
    const endpoint = metadata?.revocation_endpoint;
    if (!endpoint) return false;
    const token = tokens.refresh_token ?? tokens.access_token;
    const body = new URLSearchParams({
      token,
      token_type_hint: tokens.refresh_token ? 'refresh_token' : 'access_token',
    });
    // RFC 7009 section 2.1: the client authenticates as at the token endpoint; a public client sends its id.
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded' });
    const secret = 'client_secret' in client ? client.client_secret : undefined;
    const methods = metadata?.revocation_endpoint_auth_methods_supported;
    if (secret && methods?.includes('client_secret_basic') && !methods.includes('client_secret_post')) {
      const basic = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`;
      headers.set('authorization', `Basic ${Buffer.from(basic).toString('base64')}`);
    } else {
      body.set('client_id', client.client_id);
      if (secret) body.set('client_secret', secret);
    }
    const response = await fetch(endpoint, { method: 'POST', headers, body });
    // RFC 7009 section 2.2: 200 whether or not the token was still valid.
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Whether stored tokens (`text`, as kept; saved at `savedAt`) are past their lifetime at `at` with no refresh token to
 * renew them. None stored counts as not expired: the caller tells that apart.
 */
export function tokensExpired(text: string | undefined, savedAt: Date, at: Date): boolean {
  const tokens = text === undefined ? undefined : (JSON.parse(text) as OAuthTokens);
  const ends = tokens?.expires_in === undefined ? Infinity : savedAt.getTime() + tokens.expires_in * 1000;
  return !tokens?.refresh_token && ends <= at.getTime();
}

/** A provider for a fresh authorization of `person` on `config`'s server; `extra` sets how this step of it goes. */
function personProvider(
  config: McpServerConfig,
  person: Person,
  options: PersonAuthorizationOptions,
  extra: Pick<OAuthProviderOptions, 'state' | 'tokensAs' | 'authorize'>,
): McpOAuthProvider {
  return new McpOAuthProvider({
    server: config.name,
    auth: authOf(config).auth,
    owner: person,
    store: options.store,
    redirectUrl: options.redirectUrl,
    clientName: options.clientName,
    fresh: true,
    ...extra,
  });
}
