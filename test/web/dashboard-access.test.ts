import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { ADA, BOB, CAROL, cookieOf, createDashboard, DAN, EVE, OPS_ROLE, seedRun } from './dashboard-fixtures.ts';

describe.each(['postgres', 'pglite'] as const)('dashboard access on %s', (kind) => {
  let database: TestDatabase;
  let d: ReturnType<typeof createDashboard>;
  const runs: Record<string, string> = {};
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    d = createDashboard(database);
    runs.ada = await seedRun(d.store, { requester: ADA, key: 'C1:1700000000.000100', request: 'Ada in C1' });
    runs.bob = await seedRun(d.store, { requester: BOB, key: 'C1:1700000000.000200', request: 'Bob in C1' });
    runs.carol = await seedRun(d.store, { requester: CAROL, key: 'C2:1700000000.000300', request: 'Carol in C2' });
  });
  afterAll(() => database?.close());

  it('a link opens a sign-in form without being used up; the form signs the person in once, and a second use is refused', async () => {
    const link = await d.data.issue(ADA, d.clock.now);
    expect(link).toMatch(/^http:\/\/dashboard\.test\/signin\/[A-Za-z0-9_-]{43}$/);
    // A chat app previewing the link fetches it: that must not spend it.
    const preview = await d.app.request(new URL(link).pathname);
    expect(preview.status).toBe(200);
    expect(await preview.text()).toContain('<form method="post" action="/signin">');

    const first = await d.useLink(link);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/runs');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);

    const again = await d.useLink(link);
    expect(again.status).toBe(403);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await again.text()).toContain('used, expired or unknown');
  });

  it('refuses an expired link and one that was never issued', async () => {
    const link = await d.data.issue(ADA, new Date(d.clock.now.getTime() - 15 * 60_000 - 1));
    expect((await d.useLink(link)).status).toBe(403);
    expect((await d.useLink('http://dashboard.test/signin/not-a-token-anyone-was-given')).status).toBe(403);
  });

  it('stores only a hash of the token', async () => {
    const link = await d.data.issue(BOB, d.clock.now);
    const token = link.split('/signin/')[1] ?? '';
    const rows = await database.db.selectFrom('dashboard_links').selectAll().execute();
    expect(rows.some((r) => r.token_hash === token || JSON.stringify(r).includes(token))).toBe(false);
  });

  it('refuses a sign-in form posted from another site', async () => {
    const link = await d.data.issue(ADA, d.clock.now);
    const res = await d.app.request('/signin', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ token: link.split('/signin/')[1] ?? '' }).toString(),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a sign-in body too large to be a token, and a sign-out posted from another site', async () => {
    const huge = await d.app.request('/signin', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://dashboard.test' },
      body: new URLSearchParams({ token: 'x'.repeat(100_000) }).toString(),
    });
    expect(huge.status).toBe(413);
    const cookie = await d.signIn(ADA);
    const signOut = await d.app.request('/signout', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example', cookie },
      body: '',
    });
    expect(signOut.status).toBe(403);
    expect(signOut.headers.get('set-cookie')).toBeNull();
    expect((await d.get('/runs', cookie)).status).toBe(200);
  });

  it('without a session, or with a forged or expired one, the pages are refused', async () => {
    expect((await d.get('/runs')).status).toBe(401);
    const cookie = await d.signIn(ADA);
    expect((await d.get('/runs', cookie)).status).toBe(200);

    // Ada alters the session id her cookie carries (to guess another's), keeping the old signature.
    const [name = '', rest = ''] = cookie.split('=');
    const value = decodeURIComponent(rest);
    const forged = `${name}=${encodeURIComponent(`${value[0] === 'A' ? 'B' : 'A'}${value.slice(1)}`)}`;
    expect(forged).not.toBe(cookie);
    expect((await d.get('/runs', forged)).status).toBe(401);
    expect((await d.get(`/runs/${runs.carol}`, forged)).status).toBe(401);

    const later = d.clock.now;
    d.clock.now = new Date(later.getTime() + 9 * 60 * 60_000);
    try {
      expect((await d.get('/runs', cookie)).status).toBe(401);
    } finally {
      d.clock.now = later;
    }
  });

  it('signing out ends the session on the server: a copy of the cookie taken before is refused at once', async () => {
    const cookie = await d.signIn(ADA);
    const copied = cookie;
    const elsewhere = await d.signIn(ADA);
    expect((await d.get('/runs', copied)).status).toBe(200);

    const out = await d.signOut(cookie);
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/steward_session=;/);
    expect((await d.get('/runs', copied)).status).toBe(401);
    expect((await d.get(`/runs/${runs.ada}`, copied)).status).toBe(401);
    // Only that session: Ada's other browser stays signed in, and the row keeps no session id in clear.
    expect((await d.get('/runs', elsewhere)).status).toBe(200);
    const id = decodeURIComponent(copied.split('=')[1] ?? '').split('.')[0] ?? '';
    const rows = await database.db.selectFrom('dashboard_sessions').selectAll().execute();
    expect(id.length).toBeGreaterThan(40);
    expect(rows.some((r) => JSON.stringify(r).includes(id))).toBe(false);
    // Signing out again with the ended cookie ends nothing else.
    await d.signOut(copied, { everywhere: true });
    expect((await d.get('/runs', elsewhere)).status).toBe(200);
  });

  it('"sign out everywhere" ends every session of the person, and no one else\'s', async () => {
    const here = await d.signIn(BOB);
    const there = await d.signIn(BOB);
    const carol = await d.signIn(CAROL);
    const runsPage = await (await d.get('/runs', here)).text();
    expect(runsPage).toContain('name="everywhere" value="yes"');

    expect((await d.signOut(there, { everywhere: true })).status).toBe(200);
    expect((await d.get('/runs', here)).status).toBe(401);
    expect((await d.get('/runs', there)).status).toBe(401);
    expect((await d.get('/runs', carol)).status).toBe(200);
  });

  it('a person seen without an approver role ends the sessions that role gave every run to', async () => {
    const plain = await d.signIn(EVE, { approverRoles: [] });
    const withRole = await d.signIn(EVE, { approverRoles: [OPS_ROLE] });
    expect(await (await d.get('/runs', withRole)).text()).toContain('approver: every run');
    // Eve asks for a new link after losing the role: the platform tells her roles with that action.
    await d.data.issue(EVE, d.clock.now, { approverRoles: [] });
    expect((await d.get('/runs', withRole)).status).toBe(401);
    expect((await d.get('/runs', plain)).status).toBe(200);
    // Still holding it: nothing ends.
    const again = await d.signIn(EVE, { approverRoles: [OPS_ROLE] });
    await d.data.issue(EVE, d.clock.now, { approverRoles: [OPS_ROLE] });
    expect((await d.get('/runs', again)).status).toBe(200);
  });

  it("a person cannot open another's run by guessing its id: the answer is the one for a run that does not exist", async () => {
    const carol = await d.signIn(CAROL);
    const foreign = await d.get(`/runs/${runs.ada}`, carol);
    const missing = await d.get('/runs/run_does-not-exist', carol);
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(await foreign.text()).toBe(await missing.text());
    for (const suffix of ['/fragment', '/events'])
      expect((await d.get(`/runs/${runs.ada}${suffix}`, carol)).status).toBe(404);
    const own = await d.get(`/runs/${runs.carol}`, carol);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain('Carol in C2');
  });

  it('others see their own runs and the runs of channels where they asked; approvers see every run', async () => {
    const listed = async (cookie: string) => {
      const text = await (await d.get('/runs', cookie)).text();
      return ['Ada in C1', 'Bob in C1', 'Carol in C2'].filter((r) => text.includes(r));
    };
    expect(await listed(await d.signIn(ADA))).toEqual(['Ada in C1', 'Bob in C1']);
    expect(await listed(await d.signIn(CAROL))).toEqual(['Carol in C2']);
    const dan = await d.signIn(DAN);
    expect(await listed(dan)).toEqual(['Ada in C1', 'Bob in C1', 'Carol in C2']);
    expect((await d.get(`/runs/${runs.carol}`, dan)).status).toBe(200);
    // Ada asked in C1, so Bob's run there is hers to see too.
    expect((await d.get(`/runs/${runs.bob}`, await d.signIn(ADA))).status).toBe(200);
  });

  it('a Discord approver by role (held when they asked for the link) sees every run while that role names approvers', async () => {
    const listed = async (cookie: string) => {
      const text = await (await d.get('/runs', cookie)).text();
      return ['Ada in C1', 'Bob in C1', 'Carol in C2'].filter((r) => text.includes(r));
    };
    const withRole = await d.signIn(EVE, { approverRoles: [OPS_ROLE] });
    expect(await listed(withRole)).toEqual(['Ada in C1', 'Bob in C1', 'Carol in C2']);
    expect((await d.get(`/runs/${runs.carol}`, withRole)).status).toBe(200);
    expect(await listed(await d.signIn(EVE, { approverRoles: [] }))).toEqual([]);
    expect(await listed(await d.signIn(EVE))).toEqual([]);
    // Once the setting names another role instead, a session from such a link sees what Eve's own runs are: none.
    const other = createDashboard(database, { approvers: [`slack:${DAN.id}`, 'discord:role:700000000000000002'] });
    const res = await other.useLink(await other.data.issue(EVE, other.clock.now, { approverRoles: [OPS_ROLE] }));
    expect(await (await other.get('/runs', cookieOf(res))).text()).not.toContain('Carol in C2');
  });
});
