/**
 * Connect links in PostgreSQL (migrations 0023, 0024, 0026): a link opens once and completes once in the browser that
 * opened it; a connection that waits for its person is decided once, only by that person, and a newer one replaces
 * an older one still waiting. Ten answers sent at once: exactly one is taken. One still waiting at the cutoff expires
 * once, whoever looks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { PgConnectLinks } from '../../src/store/pg-connect-links.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

const ADA: Actor = { channel: 'slack', id: 'U0ADA', name: 'ada' };
const BOB: Actor = { channel: 'slack', id: 'U0BOB' };
const at = new Date('2026-12-05T10:00:00Z');
const later = (ms: number) => new Date(at.getTime() + ms);

describe('connect links', () => {
  let database: TestDatabase;
  let links: PgConnectLinks;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    links = new PgConnectLinks(database.db);
  });
  afterAll(() => database?.close());

  /** Issues, opens and completes a link of Ada's; its completion as the callback sees it. */
  async function completed(state: string, signedIn: boolean) {
    const conversation = { channel: 'slack', key: 'C1:1700000000.000100' };
    const token = await links.issue({ server: 'tracker', person: ADA, runId: 'r1', conversation }, at);
    expect(await links.open(token, state, `binding-${state}`, later(1), signedIn)).toMatchObject({ server: 'tracker' });
    expect(await links.open(token, `${state}-again`, 'other', later(2))).toBeNull();
    expect(await links.complete(state, 'someone else', later(3))).toBeNull();
    const done = await links.complete(state, `binding-${state}`, later(3));
    expect(await links.complete(state, `binding-${state}`, later(4))).toBeNull();
    return done!;
  }

  it('remembers where the link was sent and whether the browser was signed in as its person', async () => {
    const done = await completed('s1', true);
    expect(done).toMatchObject({
      server: 'tracker',
      person: ADA,
      runId: 'r1',
      conversation: { channel: 'slack', key: 'C1:1700000000.000100' },
      signedIn: true,
    });
    expect(done.link).toMatch(/^\d+$/);
    expect((await completed('s2', false)).signedIn).toBe(false);
  });

  it('a waiting connection is decided once, by its person only; a newer one replaces it', async () => {
    const first = await completed('s3', false);
    await links.markPending(first.link, later(5));
    const second = await completed('s4', false);
    await links.markPending(second.link, later(6));
    // The first was replaced: an answer naming it finds nothing.
    expect(await links.decide('tracker', ADA, 'used', later(7), first.link)).toBeNull();
    expect(await links.decide('tracker', BOB, 'used', later(7), second.link)).toBeNull();
    expect(await links.decide('tracker', ADA, 'used', later(7), 'not-a-link')).toBeNull();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => links.decide('tracker', ADA, i % 2 ? 'used' : 'refused', later(8))),
    );
    expect(answers.filter((a) => a !== null)).toHaveLength(1);
    expect(answers.find((a) => a !== null)).toMatchObject({ link: second.link, runId: 'r1' });
    expect(await links.decide('tracker', ADA, 'used', later(9))).toBeNull();
  });
  it('a connection still waiting at the cutoff expires once, with the fingerprint of its tokens; answered ones stay', async () => {
    const answered = await completed('s5', false);
    await links.markPending(answered.link, later(5), 'fp-answered');
    expect(await links.decide('tracker', ADA, 'refused', later(6), answered.link)).toMatchObject({
      link: answered.link,
    });
    const waiting = await completed('s6', false);
    await links.markPending(waiting.link, later(7), 'fp-waiting');
    expect(await links.expirePending(later(6), later(100))).toEqual([]);
    const claims = await Promise.all([
      links.expirePending(later(7), later(100)),
      links.expirePending(later(7), later(100)),
    ]);
    expect(claims.flat()).toEqual([
      expect.objectContaining({ link: waiting.link, person: ADA, fingerprint: 'fp-waiting' }),
    ]);
    expect(await links.decide('tracker', ADA, 'used', later(101))).toBeNull();
  });
});
