/**
 * One connection's token refreshes, serialised across sessions and processes. An authorization server that rotates
 * refresh tokens refuses one used once already (RFC 6749 section 10.4; OAuth 2.1 makes rotation or sender-constraint
 * a must for public clients), and may take the reuse for a theft and revoke the tokens it issued in its place (RFC
 * 9700 section 4.14.2). Two sessions that find the same access token expired would each send the same refresh token:
 * the second is refused, and the SDK then forgets the tokens, those the first one just saved included. So a refresh
 * request goes out only while the stored tokens are held (`ConnectionStore.hold`) and only with the refresh
 * token they still hold; a caller that comes second is answered with the tokens the first one stored.
 */
import { OAuthTokensSchema, type OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ConnectionOwner, ConnectionStore } from './connection-store.ts';

/** The refresh guard of one server's connection for one owner, and what it saw. */
export class RefreshGuard {
  /** The access token this guard stored or answered with last: the SDK's own save of it is a repeat. */
  private settled: string | undefined;
  /** Refresh tokens the authorization server refused: only stored tokens holding one are forgotten. */
  private readonly refused = new Set<string>();
  /** The access tokens of the last requests the MCP server refused with 401 (a few). */
  private readonly refusedAccess = new Set<string>();

  constructor(
    private readonly store: ConnectionStore,
    private readonly server: string,
    private readonly owner: ConnectionOwner,
  ) {}

  /**
   * `fetch` with refresh requests (grant_type=refresh_token) sent under the hold, or answered from the store; the
   * access token of a request refused with 401 is noted, so the refresh it leads to can tell whether it is still the
   * stored one.
   */
  wrap(fetch: FetchLike): FetchLike {
    return async (url, init) => {
      const sent = refreshTokenIn(init?.body);
      if (sent !== undefined) return this.refresh(sent, () => fetch(url, init));
      const response = await fetch(url, init);
      const bearer = response.status === 401 ? bearerIn(init?.headers) : undefined;
      if (bearer !== undefined) this.noteRefused(bearer);
      return response;
    };
  }

  /** Whether `tokens` are those this guard already stored (or answered with, from the store). */
  isSettled(tokens: OAuthTokens): boolean {
    return this.settled !== undefined && tokens.access_token === this.settled;
  }

  /**
   * Forgets the stored tokens if they hold a refresh token the authorization server refused (compare-and-forget):
   * tokens another session or process saved since, or a person's new connection, stay. True when it forgot them.
   */
  forgetRefused(): Promise<boolean> {
    return this.store.hold(this.server, this.owner, 'tokens', async (held) => {
      const stored = parseTokens(held.value);
      if (stored?.refresh_token === undefined || !this.refused.has(stored.refresh_token)) return false;
      await held.forget();
      return true;
    });
  }

  private noteRefused(access: string): void {
    this.refusedAccess.add(access);
    for (const old of this.refusedAccess) {
      if (this.refusedAccess.size <= REFUSED_KEPT) break;
      this.refusedAccess.delete(old);
    }
  }

  private refresh(sent: string, send: () => Promise<Response>): Promise<Response> {
    return this.store.hold(this.server, this.owner, 'tokens', async (held) => {
      const stored = parseTokens(held.value);
      // Disconnected meanwhile: a refresh would bring the connection back. The SDK takes this as a failed refresh.
      if (!stored) throw new Error('the connection was removed while its tokens were being refreshed');
      const storedRefused = this.refusedAccess.size === 0 || this.refusedAccess.has(stored.access_token);
      if (stored.refresh_token !== sent || !storedRefused) {
        // Refreshed by another session or process since this one's token was refused (or since it read the tokens):
        // the tokens it stored are the answer, and the refresh token is not sent again.
        this.settled = stored.access_token;
        const { issuer: _issuer, ...body } = stored;
        return Response.json(body);
      }
      const response = await send();
      if (response.ok) {
        const fresh = OAuthTokensSchema.safeParse(await response.clone().json());
        if (fresh.success) {
          // Stored before the hold ends, as the SDK would store them (the refresh token kept when none came back).
          const issuer = stored.issuer === undefined ? {} : { issuer: stored.issuer };
          await held.replace(JSON.stringify({ refresh_token: sent, ...fresh.data, ...issuer }));
          this.settled = fresh.data.access_token;
        }
      } else if (REFUSALS.has((await errorCode(response)) ?? '')) {
        this.refused.add(sent);
      }
      return response;
    });
  }
}

/** Errors that end a refresh token (RFC 6749 section 5.2): it is dead, or so is the client it was issued to. */
const REFUSALS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);

/** Refused access tokens remembered per connection: enough for the requests one session has in flight. */
const REFUSED_KEPT = 16;

type StoredTokens = OAuthTokens & { issuer?: string };

function parseTokens(text: string | undefined): StoredTokens | undefined {
  return text === undefined ? undefined : (JSON.parse(text) as StoredTokens);
}

/** The refresh token a token request carries, if it is a refresh (RFC 6749 section 6). */
function refreshTokenIn(body: RequestInit['body']): string | undefined {
  // The SDK sends its token requests as URLSearchParams (MCP messages are JSON strings and pass untouched).
  if (!(body instanceof URLSearchParams) || body.get('grant_type') !== 'refresh_token') return undefined;
  return body.get('refresh_token') ?? undefined;
}

/** The bearer token a request carried. */
function bearerIn(headers: RequestInit['headers']): string | undefined {
  const value = new Headers(headers).get('authorization');
  return value?.toLowerCase().startsWith('bearer ') ? value.slice('bearer '.length) : undefined;
}

/** The `error` of a token endpoint's error answer (RFC 6749 section 5.2), if it has one. */
async function errorCode(response: Response): Promise<string | undefined> {
  if (response.ok) return undefined;
  try {
    const body = (await response.clone().json()) as { error?: unknown };
    return typeof body.error === 'string' ? body.error : undefined;
  } catch {
    return undefined;
  }
}
