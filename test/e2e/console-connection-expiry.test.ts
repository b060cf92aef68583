/**
 * A connection made through a person's link in a browser not signed in as them waits a day for them to confirm it;
 * then the sweep (any process's, once) revokes and forgets it, and the person hears it in chat with a fresh link:
 * on the console end to end, with Steward's clock moved past the day (the web origin keeps real time).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PENDING_CONNECTION_TTL_MS } from '../../src/store/pg-connect-links.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { browser, connectOrigin, connectThrough, linkIn } from '../helpers/connect-origin.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
let oauth: OAuthMcpServer | undefined;
afterEach(async () => {
  await h?.close();
  await oauth?.close();
  h = undefined;
  oauth = undefined;
});

describe('a connection left unconfirmed for a day, on the console', () => {
  it('is revoked and forgotten, and its person is told once, with a fresh link, in the thread of the run that waits', async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const origin = connectOrigin(oauth);
    let ahead = 0;
    const plan = planReply([{ id: 'me', tool: 'tracker.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' });
    h = await startHarness({
      db: 'postgres',
      servers: [serverConfig('tracker', { url: oauth.url, auth: 'person', risk: 'low' })],
      script: byRole({ planner: plan, synthesizer: 'Done.' }),
      // Ownership rounds (where the sweep runs) every 200 ms.
      settings: { leaseMs: 600 },
      clock: () => new Date(Date.now() + ahead),
      setup: origin.setup,
    });
    const harness = h;
    await harness.steward.recover();
    // Someone connected before, so the planner sees the server's tools.
    const carol = { channel: 'test', id: 'carol' };
    await connectThrough(
      (await origin.flow().connectLink('tracker', carol, null, new Date()))!,
      browser('carol@tracker'),
    );
    await origin.flow().confirm('tracker', carol, 'use', new Date());

    await harness.type('who am I on the tracker?');
    const link = linkIn(await harness.waitFor(/Connect tracker: \S+/));
    expect(await (await connectThrough(link!, browser('ada@tracker'))).text()).toContain('Almost connected');
    await harness.waitFor(/\? Someone allowed Steward to use an account on `tracker` as yours/);
    const from = harness.output().length;
    const revokedBefore = oauth.revoked.length;

    // Nobody answers; a day passes.
    ahead = PENDING_CONNECTION_TTL_MS + 60_000;
    const told = await harness.waitFor(
      /the connection to tracker made through your link was not confirmed in chat within a day, so Steward revoked it and forgot it; nothing ran with it\. This run still waits for it\. Connect tracker again: \S+/,
      15_000,
      from,
    );
    expect(oauth.revoked.length).toBe(revokedBefore + 1);
    const fresh = linkIn(told);
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(link);
    // Told once: a later sweep (this process's or another's) finds nothing more to tell.
    expect(await origin.flow().expirePending(new Date(Date.now() + ahead))).toEqual([]);
    expect(
      harness
        .output()
        .slice(from)
        .match(/was not confirmed in chat within a day/g),
    ).toHaveLength(1);

    // The fresh link connects her, and the run that waited goes on as her.
    const ada = browser('ada@tracker');
    await ada.signIn(origin.web, harness.db, { channel: 'console', id: 'ada' });
    expect(await (await connectThrough(fresh!, ada)).text()).toContain('Connected tracker');
    await harness.waitFor(/=== Report \(completed\) ===/, 15_000, from);
    expect(oauth.calls.map((c) => c.subject)).toEqual(['ada@tracker']);
  });
});
