/**
 * Issue 28, per-person connections, end to end on Slack: the real Bolt app against the fake Slack, the real engine
 * and store on PostgreSQL, McpHost with sealed tokens, the dashboard's origin serving the connect link and the OAuth
 * callback, and the SDK's own OAuth authorization server in front of a Streamable HTTP MCP server that records the
 * token's subject of each tools/call (test/helpers/oauth-mcp-server.ts). A "browser" (test/helpers/connect-origin.ts)
 * is plain HTTP requests that follow the redirects by hand, carrying its cookies: `as_user` is who is signed in at the
 * authorization server.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import type { PersonConnectionFlow } from '../../src/person-connections.ts';
import { browser, connectOrigin, connectThrough } from '../helpers/connect-origin.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { planReply } from './harness.ts';
import { messageText, privateCommand, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createBlockAction, interactionBody } from './slack-requests.ts';

const ADA: Actor = { channel: 'slack', id: 'U0ADA' };
const BOB: Actor = { channel: 'slack', id: 'U0BOB' };

let h: SlackHarness | undefined;
let oauth: OAuthMcpServer | undefined;
afterEach(async () => {
  await h?.close();
  await oauth?.close();
  h = undefined;
  oauth = undefined;
});

interface Started {
  harness: SlackHarness;
  web: string;
  flow: () => PersonConnectionFlow;
}

/** Someone connected before (`/steward connections`): their session listed the tools the planner sees. */
async function firstConnection(started: Started): Promise<void> {
  const carol: Actor = { channel: 'slack', id: 'U0CAROL' };
  const link = (await started.flow().connectLink('tracker', carol, null, new Date()))!;
  expect((await connectThrough(link, browser('carol@tracker'))).status).toBe(200);
  // Her browser was not signed in to the dashboard as her: she confirms from her chat identity.
  expect(await started.flow().confirm('tracker', carol, 'use', new Date())).toEqual({ used: true });
}

async function start(server: OAuthMcpServer): Promise<Started> {
  const origin = connectOrigin(server);
  const harness = await startSlackHarness({
    db: 'postgres',
    servers: [serverConfig('tracker', { url: server.url, auth: 'person', risk: 'low' })],
    script: byRole({
      planner: planReply([{ id: 'me', tool: 'tracker.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' }),
      synthesizer: 'Done.',
      classifier: 'status',
    }),
    setup: origin.setup,
  });
  // As the app does at start: the ownership watch listens for other processes' signals (a connection made).
  await harness.steward.recover();
  return { harness, web: origin.web, flow: () => origin.flow() };
}

/** The connect links Slack showed `user` privately, in order. */
function linksFor(harness: SlackHarness, user: string): string[] {
  return harness.slack
    .callsOf('chat.postEphemeral')
    .filter((c) => c.args.user === user)
    .flatMap((c) => /(http:\/\/127\.0\.0\.1:\d+\/connect\/[\w-]+)/.exec(JSON.stringify(c.args))?.[1] ?? []);
}

/**
 * Presses "Use this connection" (or "Not me") on the latest private question Slack showed `user` about a connection:
 * a block action from an ephemeral message, as Slack sends it (its container says so; it carries no message).
 */
async function answerInChat(harness: SlackHarness, user: string, answer: 'use' | 'notme'): Promise<string> {
  const asked = await harness.waitFor(`the question to ${user}`, () =>
    harness.slack
      .callsOf('chat.postEphemeral')
      .filter((c) => c.args.user === user && JSON.stringify(c.args).includes('steward.connection-use'))
      .at(-1),
  );
  const blocks = asked.args.blocks as { type: string; elements?: { action_id: string; value: string }[] }[];
  const button = blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === `steward.connection-${answer}`);
  const payload = createBlockAction({
    user,
    actionId: `steward.connection-${answer}`,
    value: button!.value,
    channel: String(asked.args.channel),
    messageTs: '1700000000.000099',
    ...(typeof asked.args.thread_ts === 'string' ? { threadTs: asked.args.thread_ts } : {}),
    triggerId: harness.slack.newTriggerId(),
    botUserId: harness.slack.botUserId,
  });
  const { message: _none, ...ephemeral } = { ...payload, container: { ...payload.container, is_ephemeral: true } };
  const before = harness.slack.callsOf('chat.postEphemeral').length;
  await harness.post(interactionBody(ephemeral), 'application/x-www-form-urlencoded');
  await harness.channel.settled();
  const said = harness.slack
    .callsOf('chat.postEphemeral')
    .slice(before)
    .filter((c) => c.args.user === user);
  return said.map((c) => String(c.args.text)).join('\n');
}

describe('per-person connections on Slack', () => {
  it("each person connects from their private link and each run's calls reach the server under their own subject", async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const started = await start(oauth);
    const { harness } = started;
    h = harness;
    await firstConnection(started);

    const thread = await harness.mention('who am I on the tracker?', 'U0ADA');
    const adaLink = await harness.waitFor('a link for Ada', () => linksFor(harness, 'U0ADA')[0]);
    // The card says whose account the step runs with.
    expect(messageText(harness.card(thread))).toContain('`tracker.whoami` as <@U0ADA>');
    // Nothing reached the server while the run waits, and nobody else was shown the link.
    expect(oauth.calls).toEqual([]);
    expect(linksFor(harness, 'U0BOB')).toEqual([]);
    const [run] = await harness.db.db.selectFrom('runs').select(['id', 'status']).execute();
    expect(run?.status).toBe('running');

    const connected = await connectThrough(adaLink, browser('ada@tracker'));
    expect(connected.status).toBe(200);
    // Her browser was not signed in to the dashboard as her: the connection waits for her answer in chat.
    expect(await connected.text()).toContain('Almost connected: confirm in chat');
    expect(await answerInChat(harness, 'U0ADA', 'use')).toContain('Connected `tracker`');
    await harness.waitFor("Ada's call", () => oauth!.calls.some((c) => c.subject === 'ada@tracker'));
    await harness.waitFor("Ada's run to complete", async () => {
      const row = await harness.store.getRun(run!.id);
      return row?.status === 'completed';
    });

    await harness.mention('and me?', 'U0BOB');
    const bobLink = await harness.waitFor('a link for Bob', () => linksFor(harness, 'U0BOB')[0]);
    expect((await connectThrough(bobLink, browser('bob@tracker'))).status).toBe(200);
    await answerInChat(harness, 'U0BOB', 'use');
    await harness.waitFor("Bob's call", () => oauth!.calls.some((c) => c.subject === 'bob@tracker'));

    // Connected now: Ada's next run goes straight to the server, under her subject, with no new link.
    await harness.mention('again please', 'U0ADA');
    await harness.waitFor(
      "Ada's second call",
      () => oauth!.calls.filter((c) => c.subject === 'ada@tracker').length === 2,
    );
    expect(linksFor(harness, 'U0ADA')).toHaveLength(1);
    expect(oauth.calls.map((c) => c.subject).sort()).toEqual(['ada@tracker', 'ada@tracker', 'bob@tracker']);

    // Sealed: no token in any row of the database in clear (the harness checks logs, Slack messages and prompts).
    const dump = await sql<{ row: string }>`select t::text as row from mcp_connection_secrets t`.execute(harness.db.db);
    for (const canary of oauth.issued) expect(dump.rows.map((r) => r.row).join('\n')).not.toContain(canary);
  });

  it('a forwarded link does not connect another person as the one it was sent to', async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const started = await start(oauth);
    const { harness, web, flow } = started;
    h = harness;
    await firstConnection(started);
    await harness.mention('who am I on the tracker?', 'U0BOB');
    const bobLink = await harness.waitFor('a link for Bob', () => linksFor(harness, 'U0BOB')[0]);
    const [run] = await harness.db.db.selectFrom('runs').select(['id']).execute();
    const ada = browser('ada@tracker');
    const bob = browser('bob@tracker');

    // Ada's browser has started an authorization of its own (it carries a binding of its own).
    const adaOwn = (await flow().connectLink('tracker', ADA, null, new Date()))!;
    expect((await ada.press(adaOwn)).status).toBe(303);
    // Bob pressed his link, then forwarded what his browser was sent on to (the authorization URL) to Ada: the
    // authorization comes back in her browser, which did not start it, and nothing is connected.
    const pressed = await bob.press(bobLink);
    expect(pressed.status).toBe(303);
    const atAda = await ada.get(pressed.headers.get('location') ?? '');
    const refused = await ada.get(atAda.headers.get('location') ?? '');
    expect(refused.status).toBe(403);
    expect(await flow().connectedAt('tracker', BOB)).toBeNull();
    // The link itself is used up: forwarded to Ada now, it connects nobody.
    expect((await ada.press(bobLink)).status).toBe(403);

    // Ada, signed in to the dashboard as herself, cannot use a link sent to Bob either.
    const fresh = (await flow().connectLink('tracker', BOB, run!.id, new Date()))!;
    await ada.signIn(web, harness.db, ADA);
    expect((await ada.press(fresh)).status).toBe(403);
    expect(await flow().connectedAt('tracker', BOB)).toBeNull();
    expect(oauth.calls).toEqual([]);

    // Bob, with his own browser and that unused link, connects; his waiting run goes on as him.
    expect((await connectThrough(fresh, bob)).status).toBe(200);
    await answerInChat(harness, 'U0BOB', 'use');
    await harness.waitFor("Bob's call", () => oauth!.calls.some((c) => c.subject === 'bob@tracker'));
    expect(oauth.calls.map((c) => c.subject)).toEqual(['bob@tracker']);
  });

  it('`/steward connections` lists, connects with no run waiting (so the planner sees a server nobody had connected), and disconnects, revoking at the server', async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const started = await start(oauth);
    const { harness } = started;
    h = harness;
    const [listed] = await privateCommand(harness, 'connections', 'U0ADA');
    expect(listed).toContain('`tracker`: not connected (`/steward connections connect tracker`)');

    const [answer] = await privateCommand(harness, 'connections connect tracker', 'U0ADA');
    const link = /<(http:\/\/127\.0\.0\.1:\d+\/connect\/[\w-]+)\|Connect tracker>/.exec(answer ?? '')?.[1];
    expect(link, answer).toBeDefined();
    // Only Ada was answered (privately, through the command's response_url): nothing was posted anywhere.
    expect(harness.slack.callsOf('chat.postMessage')).toEqual([]);
    expect((await connectThrough(link!, browser('ada@tracker'))).status).toBe(200);
    expect((await privateCommand(harness, 'connections', 'U0ADA'))[0]).toContain(
      '`tracker`: not connected (`/steward connections connect tracker`); a connection made in a browser not signed in as you waits for your answer',
    );
    // The question went where she asked for the link, privately; she answers by typing instead of pressing.
    expect(
      harness.slack
        .callsOf('chat.postEphemeral')
        .filter((c) => c.args.user === 'U0ADA' && c.args.channel === 'C0GENERAL'),
    ).toHaveLength(1);
    expect((await privateCommand(harness, 'connections use tracker', 'U0ADA'))[0]).toContain('Connected `tracker`');
    const [now] = await privateCommand(harness, 'connections', 'U0ADA');
    expect(now).toMatch(/`tracker`: connected since \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    // Bob's list is his own.
    expect((await privateCommand(harness, 'connections', 'U0BOB'))[0]).toContain('`tracker`: not connected');

    // Nobody had connected before Ada: her connection listed the tools, so a plan can use them, and it runs as her.
    await harness.mention('who am I on the tracker?', 'U0ADA');
    await harness.waitFor("Ada's call", () => oauth!.calls.some((c) => c.subject === 'ada@tracker'));
    expect(linksFor(harness, 'U0ADA')).toEqual([]);

    const [gone] = await privateCommand(harness, 'connections disconnect tracker', 'U0ADA');
    expect(gone).toBe('Disconnected `tracker`: its server revoked your authorization, and Steward forgot it.');
    expect(oauth.revoked).toHaveLength(1);
    expect(oauth.issued).toContain(oauth.revoked[0]);
    expect((await privateCommand(harness, 'connections', 'U0ADA'))[0]).toContain('`tracker`: not connected');
    expect(await started.flow().connectedAt('tracker', ADA)).toBeNull();
    expect((await privateCommand(harness, 'connections disconnect tracker', 'U0ADA'))[0]).toBe(
      'You had no connection to `tracker`; nothing changed.',
    );
    expect((await privateCommand(harness, 'connections connect jira', 'U0ADA'))[0]).toBe(
      '`jira` is not a server that connects per person. Those are: `tracker`.',
    );
  });

  it('a status reply in the thread of a run that waits on a connection says who must connect what, from any process', async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const started = await start(oauth);
    const { harness } = started;
    h = harness;
    await firstConnection(started);
    // Process B: same database and workspace; the run is A's (Slack delivered the mention to A).
    const b = await harness.startSecondProcess();
    await harness.mention('who am I on the tracker?', 'U0ADA');
    const link = await harness.waitFor('a link for Ada', () => linksFor(harness, 'U0ADA')[0]);
    const run = (await harness.db.db.selectFrom('runs').select(['id']).executeTakeFirst())!;
    const stored = (await harness.store.getRun(run.id))!;

    // A reply that reached B, which holds nothing of the run in memory: it answers from the stored events.
    await b.steward.message({
      conversation: stored.conversation,
      actor: { channel: 'slack', id: 'U0BOB' },
      text: 'how is it going?',
    });
    const said = await harness.waitFor('B to answer', () =>
      harness.slack.calls
        .filter((c) => c.method === 'chat.postMessage' && c.token === b.token)
        .map((c) => JSON.stringify(c.args))
        .find((t) => t.includes('Waiting for')),
    );
    expect(said).toContain('Waiting for <@U0ADA> to connect tracker');
    expect(said).toContain('Left: me');
    expect(said).not.toContain('me failed');

    // Once Ada connects, the wait is over: the status says so, with no stale line.
    expect((await connectThrough(link, browser('ada@tracker'))).status).toBe(200);
    await answerInChat(harness, 'U0ADA', 'use');
    await harness.waitFor(
      "Ada's run to complete",
      async () => (await harness.store.getRun(run.id))?.status === 'completed',
    );
    const events = await harness.store.listEvents(run.id, ['connectionNeeded', 'connected']);
    expect(events.map((e) => e.type)).toEqual(['connectionNeeded', 'connected']);
  });

  it('a connection made in a browser not signed in as the person waits for them in chat: "Not me" revokes it; signed in, it is theirs at once', async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const started = await start(oauth);
    const { harness, web, flow } = started;
    h = harness;
    await firstConnection(started);
    const carolCalls = oauth.calls.length;
    await harness.mention('who am I on the tracker?', 'U0ADA');
    const link = await harness.waitFor('a link for Ada', () => linksFor(harness, 'U0ADA')[0]);
    const run = (await harness.db.db.selectFrom('runs').select(['id']).executeTakeFirst())!;

    // The link reached Eve (a shared screen, a forward): she allows Steward with her own account.
    const eve = browser('eve@tracker');
    const page = await connectThrough(link, eve);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Almost connected: confirm in chat');
    const eveTokens = [...oauth.issued];
    // Used for nothing: no call under Eve's subject, Ada has no connection, and her run still waits.
    expect(oauth.calls).toHaveLength(carolCalls);
    expect(await flow().connectedAt('tracker', ADA)).toBeNull();
    expect((await harness.store.getRun(run.id))?.status).toBe('running');
    // Nobody else can take it: Bob's answer finds nothing of his.
    expect((await privateCommand(harness, 'connections use tracker', 'U0BOB'))[0]).toBe(
      'No connection to `tracker` waits for you to confirm it (it was answered already, or a newer one replaced it).',
    );

    // Ada, asked privately in her run's thread, says it was not her: revoked at the server and forgotten.
    expect(await answerInChat(harness, 'U0ADA', 'notme')).toContain('Forgotten: nothing runs with that account');
    expect(oauth.revoked.some((t) => eveTokens.includes(t))).toBe(true);
    expect(await answerInChat(harness, 'U0ADA', 'use')).toContain('No connection to `tracker` waits for you');
    expect(await flow().connectedAt('tracker', ADA)).toBeNull();
    expect(oauth.calls).toHaveLength(carolCalls);
    const pending = await sql<{
      n: number;
    }>`select count(*)::int as n from mcp_connection_secrets where kind = 'pending'`.execute(harness.db.db);
    expect(pending.rows[0]?.n).toBe(0);

    // Her own browser, signed in to the dashboard as her, opens a new link: hers at once, no question; the run goes on.
    const [answer] = await privateCommand(harness, 'connections connect tracker', 'U0ADA');
    const again = /<(http:\/\/127\.0\.0\.1:\d+\/connect\/[\w-]+)\|/.exec(answer ?? '')?.[1];
    const ada = browser('ada@tracker');
    await ada.signIn(web, harness.db, ADA);
    const asked = harness.slack.callsOf('chat.postEphemeral').length;
    const connected = await connectThrough(again!, ada);
    expect(await connected.text()).toContain('Connected tracker');
    await harness.waitFor(
      "Ada's run to complete",
      async () => (await harness.store.getRun(run.id))?.status === 'completed',
    );
    expect(oauth.calls.slice(carolCalls).map((c) => c.subject)).toEqual(['ada@tracker']);
    expect(
      harness.slack
        .callsOf('chat.postEphemeral')
        .slice(asked)
        .some((c) => JSON.stringify(c.args).includes('connection-use')),
    ).toBe(false);
  });
});
