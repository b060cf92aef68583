/**
 * The in-memory ConnectionStore and PgConnectionStore keep the same contract: a secret reads back as written, per
 * server, owner and kind; a write replaces; forget removes only what it names.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryConnectionStore, type ConnectionStore } from '../../src/mcp/connection-store.ts';
import { openConnectionStore, PgConnectionStore } from '../../src/store/pg-connection-store.ts';
import { parseSecretKey, SecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

const databases: TestDatabase[] = [];
afterAll(async () => {
  await Promise.all(databases.map((d) => d.close()));
});

const twins: [string, () => Promise<ConnectionStore>][] = [
  ['memory', () => Promise.resolve(createMemoryConnectionStore())],
  [
    'PostgreSQL',
    async () => {
      const database = await createTestDatabase('postgres');
      databases.push(database);
      return new PgConnectionStore(database.db, new SecretBox(parseSecretKey(randomBytes(32).toString('base64'))));
    },
  ],
];

describe.each(twins)('ConnectionStore contract: %s', (_name, open) => {
  it('reads back what was written, keyed by server, owner and kind; writes replace; forget removes what it names', async () => {
    const store = await open();
    const alice = { kind: 'person', personId: 'slack:T1:U1' } as const;
    const workspace = { kind: 'workspace' } as const;
    expect(await store.read('tracker', alice, 'tokens')).toBeUndefined();
    await store.write('tracker', alice, 'tokens', '{"a":1}');
    await store.write('tracker', alice, 'client', '{"c":1}');
    await store.write('tracker', workspace, 'tokens', '{"w":1}');
    await store.write('docs', alice, 'tokens', '{"d":1}');
    await store.write('tracker', alice, 'tokens', '{"a":2}');
    expect(await store.read('tracker', alice, 'tokens')).toBe('{"a":2}');
    expect(await store.read('tracker', workspace, 'tokens')).toBe('{"w":1}');
    expect(await store.read('docs', alice, 'tokens')).toBe('{"d":1}');
    await store.forget('tracker', alice, ['tokens']);
    expect(await store.read('tracker', alice, 'tokens')).toBeUndefined();
    expect(await store.read('tracker', alice, 'client')).toBe('{"c":1}');
    expect(await store.read('tracker', workspace, 'tokens')).toBe('{"w":1}');
    await store.forget('tracker', alice, []);
    expect(await store.read('tracker', alice, 'client')).toBe('{"c":1}');
  });

  it('lists the connections holding tokens, of a server or of an owner, newest first (never the tokens)', async () => {
    const store = await open();
    const alice = { kind: 'person', personId: 'slack:T1:U1' } as const;
    const bob = { kind: 'person', personId: 'discord:42' } as const;
    await store.write('tracker', alice, 'tokens', '{"a":1}');
    await store.write('tracker', bob, 'client', '{"c":1}');
    await store.write('docs', alice, 'tokens', '{"d":1}');
    await store.write('tracker', bob, 'tokens', '{"b":1}');
    const tracker = await store.connections({ server: 'tracker' });
    expect(tracker.map((c) => c.owner)).toEqual([bob, alice]);
    expect((await store.connections({ owner: alice })).map((c) => c.server).sort()).toEqual(['docs', 'tracker']);
    expect(JSON.stringify(tracker)).not.toContain('"a":1');
    await store.forget('tracker', bob, ['tokens']);
    expect(await store.connections({ owner: bob })).toEqual([]);
  });
});

describe('openConnectionStore', () => {
  it('asks for STEWARD_SECRETS_KEY when a server has "auth", and refuses a key of the wrong size', async () => {
    const database = await createTestDatabase('postgres');
    databases.push(database);
    expect(await openConnectionStore(database.db, { key: undefined, oldKeys: [], needed: false })).toEqual({
      store: undefined,
      sealedAgain: 0,
    });
    await expect(openConnectionStore(database.db, { key: undefined, oldKeys: [], needed: true })).rejects.toThrow(
      'so STEWARD_SECRETS_KEY must be set',
    );
    await expect(
      openConnectionStore(database.db, { key: randomBytes(16).toString('base64'), oldKeys: [], needed: true }),
    ).rejects.toThrow('it decodes to 16 bytes');
  });
});
