/**
 * Issue 28 on the console, end to end: the real ConsoleChannel and engine on PostgreSQL, McpHost with sealed tokens,
 * Steward's web origin (test/helpers/connect-origin.ts) and the SDK's own OAuth server in front of an MCP server that
 * records each call's token subject. The person types `connections`, connects before anyone had (so the planner
 * sees the server), answers the question about a connection made in a browser not signed in as them, runs a plan as
 * themselves, disconnects (revoked at the server), and refuses a connection that was not theirs.
 */
import { afterEach, describe, expect, it } from 'vitest';
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

describe('per-person connections on the console', () => {
  it('connections lists, connects, confirms, runs as the person, disconnects and refuses', async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const origin = connectOrigin(oauth);
    const plan = planReply([{ id: 'me', tool: 'tracker.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' });
    h = await startHarness({
      db: 'postgres',
      servers: [serverConfig('tracker', { url: oauth.url, auth: 'person', risk: 'low' })],
      script: byRole({ planner: [plan, plan], synthesizer: ['Done.', 'Done.'] }),
      setup: origin.setup,
    });
    const harness = h;
    await harness.steward.recover();
    const since = () => harness.output().length;
    const linkAfter = async (from: number) => linkIn(await harness.waitFor(/Connect tracker: \S+/, 15_000, from));

    await harness.type('connections');
    await harness.waitFor(
      /i Servers that run your steps with your own account:\n• `tracker`: not connected \(`connections connect tracker`\)/,
    );

    // Nobody has connected: the planner has no tools of the server yet. Connecting without a run fixes that.
    let from = since();
    await harness.type('connections connect tracker');
    const first = await linkAfter(from);
    from = since();
    expect(await (await connectThrough(first!, browser('ada@tracker'))).text()).toContain('Almost connected');
    await harness.waitFor(/\? Someone allowed Steward to use an account on `tracker` as yours/, 15_000, from);
    await harness.waitFor(
      /If it was you: `connections use tracker`\. If not: `connections notme tracker`/,
      15_000,
      from,
    );
    await harness.type('connections use tracker');
    await harness.waitFor(/i Connected `tracker`: your steps there run with the account you allowed/, 15_000, from);
    expect(harness.host.listTools().map((t) => t.name)).toEqual(['tracker.whoami']);

    // A plan on it runs at once, as her (the card says so), with no link.
    from = since();
    await harness.type('who am I on the tracker?');
    await harness.waitFor(/1\. \[me\] tracker\.whoami as ada /, 15_000, from);
    await harness.waitFor(/=== Report \(completed\) ===/, 15_000, from);
    expect(oauth.calls.map((c) => c.subject)).toEqual(['ada@tracker']);

    await harness.type('connections disconnect tracker');
    await harness.waitFor(/i Disconnected `tracker`: its server revoked your authorization, and Steward forgot it\./);
    expect(oauth.revoked).toHaveLength(1);

    // The next run waits; its link reaches Eve, who allows with her account: Ada says it was not her.
    from = since();
    await harness.type('new and again?');
    const second = await linkAfter(from);
    expect(await (await connectThrough(second!, browser('eve@tracker'))).text()).toContain('Almost connected');
    await harness.waitFor(/\? Someone allowed Steward/, 15_000, from);
    await harness.type('connections notme tracker');
    await harness.waitFor(/i Forgotten: nothing runs with that account on `tracker`, and its server revoked it\./);
    expect(oauth.revoked).toHaveLength(2);
    expect(oauth.calls.map((c) => c.subject)).toEqual(['ada@tracker']);
    await harness.type('stop');
    await harness.waitFor(/=== Report \(stopped\) ===/, 15_000, from);
    expect(oauth.calls.map((c) => c.subject)).toEqual(['ada@tracker']);
  });
});
