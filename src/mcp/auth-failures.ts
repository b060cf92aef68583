/**
 * Words for a server that refused Steward for want of authorization: what the server asked for, and what to write
 * in mcp.json (or do) about it. Never includes a token or a secret.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { McpServerConfig } from './mcp-config.ts';
import type { AuthChallenge } from './mcp-transport.ts';

/** Why an HTTP server refused to start a session, when authorization is the reason; undefined otherwise. */
export function describeAuthFailure(
  config: McpServerConfig,
  err: unknown,
  challenge: AuthChallenge | undefined,
  unauthorized: URL | undefined,
): string | undefined {
  const t = config.transport;
  if (t.kind !== 'http') return undefined;
  if (t.auth) {
    if (err instanceof UnauthorizedError && unauthorized) {
      return (
        `it needs someone to authorize Steward at ${unauthorized.origin} ("auth": "${t.auth.owner}"): an approver ` +
        `connects it from chat (connections connect ${config.name}); or use "oauth": { "grant": "client_credentials", … } ` +
        'for a machine connection'
      );
    }
    if (err instanceof OAuthError) return `its authorization server refused: ${err.errorCode}: ${err.message}`;
    return undefined;
  }
  const status = err instanceof StreamableHTTPError ? err.code : undefined;
  if (status !== 401) return undefined;
  const header = challenge?.last?.wwwAuthenticate ?? '';
  const metadata = /resource_metadata="([^"]+)"/.exec(header)?.[1];
  const wantsOAuth = /^\s*Bearer\b/i.test(header) || metadata !== undefined;
  const sent = Object.keys(t.headers).some((h) => h.toLowerCase() === 'authorization');
  if (sent && !wantsOAuth) return 'it refused the Authorization header that mcp.json gives it (HTTP 401)';
  const where = metadata ? `; its protected-resource metadata is at ${metadata}` : '';
  const lines = [
    `it wants OAuth authorization (HTTP 401${where})${sent ? ' and refused the Authorization header from mcp.json' : ''}.`,
    `To connect it, add "auth" to its entry in mcp.json${sent ? ' (and remove the Authorization header)' : ''}:`,
    `  "${config.name}": { "url": "${t.url}", "auth": "workspace" }`,
    'for one connection that every run uses; with "oauth": { "grant": "client_credentials", "clientId": "…", ' +
      '"clientSecret": "${…}" } for a machine client; or "auth": "person" for each person to connect their own account',
  ];
  return lines.join('\n');
}
