/**
 * Resources on a server that connects per person ("auth": "person", issue 29): a read goes out only under the
 * requester's own session, as a call does (counted at the server by the token's subject), never the workspace's or
 * another person's; a read that names no person, or a person with no connection, sends nothing, and `openAs` tells
 * the engine to ask for the connection; prompts are listed and filled in the same way. The authorization and MCP servers are the SDK's own server side
 * (test/helpers/oauth-mcp-server.ts); the store is PostgreSQL, sealed.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { parseMcpConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { PgConnectionStore } from '../../src/store/pg-connection-store.ts';
import { parseSecretKey, SecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';

const KEY = parseSecretKey(randomBytes(32).toString('base64'));
const alice: Actor = { channel: 'slack', id: 'UALICE', name: 'Alice' };
const bob: Actor = { channel: 'slack', id: 'UBOB', name: 'Bob' };
const carol: Actor = { channel: 'discord', id: '42', name: 'Carol' };

async function connect(host: McpHost, person: Actor, subject: string): Promise<void> {
  const url = await host.connectionUrl('tracker', person, `state-${person.id}`);
  const response = await fetch(url, { redirect: 'manual', headers: { cookie: `as_user=${subject}` } });
  const code = new URL(response.headers.get('location') ?? '').searchParams.get('code') ?? '';
  await host.finishConnection('tracker', person, code);
}

describe('McpHost, resources and prompts of a server that connects per person', () => {
  let server: OAuthMcpServer;
  let database: TestDatabase;

  beforeAll(async () => {
    [server, database] = await Promise.all([
      startOAuthMcpServer({ consentAs: 'nobody', resource: true, prompt: true }),
      createTestDatabase('postgres'),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), database?.close()]);
  });

  it("reads each person's resource under their own session only; nobody else's, and nothing for no one", async () => {
    const config = parseMcpConfig(
      JSON.stringify({ mcpServers: { tracker: { url: server.url, auth: 'person' } } }),
      'test mcp.json',
    );
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    const { host } = await McpHost.connect(config, { connections: store });
    const options = { signal: new AbortController().signal, timeoutMs: 10_000 };
    const read = (as?: Actor) => host.readResource('tracker', 'tracker://me', as ? { ...options, as } : options);
    const text = (o: Awaited<ReturnType<typeof read>>) =>
      o.ok ? (o.value.content[0] as { resource: { text: string } }).resource.text : o.error.code;
    try {
      // Nobody has connected: no session has listed the server's resources yet.
      expect(host.listResources()).toEqual([]);
      await connect(host, alice, 'alice@tracker');
      await connect(host, bob, 'bob@tracker');
      expect(host.listResources()).toEqual([
        {
          server: 'tracker',
          resources: [{ uri: 'tracker://me', name: 'me' }],
          templates: [],
          more: false,
          perPerson: true,
        },
      ]);

      expect((await Promise.all([alice, bob, alice].map(read))).map(text)).toEqual([
        'alice@tracker',
        'bob@tracker',
        'alice@tracker',
      ]);
      expect(server.reads.map((r) => r.subject).sort()).toEqual(['alice@tracker', 'alice@tracker', 'bob@tracker']);

      // No person named, or a person who never connected: refused here, nothing sent, and the engine is told to ask.
      expect(text(await read())).toBe('not_connected');
      expect(text(await read(carol))).toBe('not_connected');
      expect(await host.openAs('tracker', carol)).toEqual({ kind: 'connect', server: 'tracker' });
      expect(await host.openAs('tracker', alice)).toEqual({ kind: 'ready', tool: undefined });
      expect(server.reads).toHaveLength(3);
    } finally {
      await host.close();
    }
  });

  it("lists and fills in prompts on each person's own session; someone not connected is told to connect", async () => {
    const config = parseMcpConfig(
      JSON.stringify({ mcpServers: { tracker: { url: server.url, auth: 'person' } } }),
      'test mcp.json',
    );
    const store = new PgConnectionStore(database.db, new SecretBox(KEY));
    const { host } = await McpHost.connect(config, { connections: store });
    const options = { signal: new AbortController().signal, timeoutMs: 10_000 };
    try {
      // Alice and Bob connected in the test before (their tokens are stored); Carol never did.
      expect(await host.listPrompts(alice, options)).toEqual({
        prompts: [{ server: 'tracker', name: 'mine', description: 'Asks about your own items', arguments: [] }],
        unconnected: [],
        problems: [],
      });
      expect(await host.getPrompt('tracker', 'mine', {}, bob, options)).toEqual({
        ok: true,
        value: ['List the open items of bob@tracker'],
      });
      expect(server.promptGets.map((g) => g.subject)).toEqual(['bob@tracker']);
      expect(await host.listPrompts(carol, options)).toEqual({ prompts: [], unconnected: ['tracker'], problems: [] });
      expect(await host.getPrompt('tracker', 'mine', {}, carol, options)).toEqual({
        ok: false,
        error:
          'MCP server "tracker" runs with your own account, and you have not connected it: connections connect tracker',
      });
      expect(server.promptGets).toHaveLength(1);
    } finally {
      await host.close();
    }
  });
});
