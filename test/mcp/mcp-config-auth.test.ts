/**
 * `auth` and `oauth` in mcp.json: what parses, and the sentence each mistake gets.
 */
import { describe, expect, it } from 'vitest';
import { parseMcpConfig, isSecureOrLoopback } from '../../src/mcp/mcp-config.ts';

function parse(entry: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  return parseMcpConfig(JSON.stringify({ mcpServers: { tracker: entry } }), 'mcp.json', env).servers[0];
}

describe('mcp.json "auth"', () => {
  it('parses a workspace connection by client credentials, with the secret from the environment', () => {
    const server = parse(
      {
        url: 'https://mcp.example.com/mcp',
        auth: 'workspace',
        oauth: { grant: 'client_credentials', clientId: 'steward', clientSecret: '${TRACKER_SECRET}', scope: 'read' },
      },
      { TRACKER_SECRET: 's3cret' },
    );
    expect(server?.transport).toEqual({
      kind: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: {},
      auth: {
        owner: 'workspace',
        grant: 'client_credentials',
        clientId: 'steward',
        clientSecret: 's3cret',
        scope: 'read',
      },
    });
  });

  it('parses "auth": "person" with dynamic registration (no oauth block) as an authorization-code connection', () => {
    const server = parse({ url: 'https://mcp.example.com/mcp', auth: 'person' });
    expect(server?.transport).toMatchObject({ auth: { owner: 'person', grant: 'authorization_code' } });
  });

  it.each([
    [
      { url: 'http://mcp.example.com/mcp', auth: 'workspace' },
      'mcpServers.tracker.url: with "auth", must be an https URL',
    ],
    [{ url: 'https://a.example/mcp', auth: 'team' }, 'mcpServers.tracker.auth: must be "workspace" or "person"'],
    [
      { url: 'https://a.example/mcp', oauth: { scope: 'x' } },
      'needs "auth": "workspace" or "auth": "person" beside it',
    ],
    [{ command: 'x', auth: 'workspace' }, 'mcpServers.tracker.auth: not allowed for a command server'],
    [
      { url: 'https://a.example/mcp', auth: 'workspace', headers: { authorization: 'Bearer x' } },
      'not allowed with "auth": the OAuth token is the Authorization header',
    ],
    [
      { url: 'https://a.example/mcp', auth: 'workspace', oauth: { grant: 'client_credentials', clientId: 'a' } },
      '"grant": "client_credentials" needs "clientId" and "clientSecret" (or "privateKey")',
    ],
    [
      {
        url: 'https://a.example/mcp',
        auth: 'person',
        oauth: { grant: 'client_credentials', clientId: 'a', clientSecret: 'b' },
      },
      '"client_credentials" acts as the workspace, not as a person',
    ],
    [
      { url: 'https://a.example/mcp', auth: 'workspace', oauth: { redirectUrl: 'http://steward.example/cb' } },
      'mcpServers.tracker.oauth.redirectUrl: must be an https URL (http only to localhost or 127.0.0.1)',
    ],
    [
      { url: 'https://a.example/mcp', auth: 'workspace', oauth: { clientMetadataUrl: 'http://a.example/c.json' } },
      'mcpServers.tracker.oauth.clientMetadataUrl: must be an https URL',
    ],
  ])('refuses %j', (entry, words) => {
    expect(() => parse(entry)).toThrow(words);
  });

  it('parses a machine client that proves itself with a signed JWT (private_key_jwt), ES256 unless named', () => {
    const server = parse(
      {
        url: 'https://mcp.example.com/mcp',
        auth: 'workspace',
        oauth: { grant: 'client_credentials', clientId: 'steward', privateKey: '${TRACKER_KEY}' },
      },
      { TRACKER_KEY: '-----BEGIN PRIVATE KEY-----' },
    );
    expect(server?.transport).toMatchObject({
      auth: { grant: 'client_credentials', privateKey: '-----BEGIN PRIVATE KEY-----', algorithm: 'ES256' },
    });
    expect(() =>
      parse({
        url: 'https://a.example/mcp',
        auth: 'workspace',
        oauth: { clientId: 'a', clientSecret: 'b', privateKey: 'c' },
      }),
    ).toThrow('give "clientSecret" or "privateKey", not both');
  });

  it('allows plain http only to loopback', () => {
    expect(isSecureOrLoopback('http://127.0.0.1:8080/mcp')).toBe(true);
    expect(isSecureOrLoopback('http://localhost/cb')).toBe(true);
    expect(isSecureOrLoopback('http://[::1]:9/x')).toBe(true);
    expect(isSecureOrLoopback('https://example.com')).toBe(true);
    expect(isSecureOrLoopback('http://127.0.0.1.example.com/')).toBe(false);
    expect(isSecureOrLoopback('http://10.0.0.1/')).toBe(false);
  });
});
