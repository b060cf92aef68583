/**
 * Issue 28, a server with "auth": "workspace" that needs someone to authorize it (no client credentials), on the
 * console end to end: the real ConsoleChannel and engine on PostgreSQL, McpHost with sealed tokens, Steward's web
 * origin and the SDK's own OAuth server in front of an MCP server that records each call's token subject. The server
 * waits at start (not a failure); an approver connects it for the workspace from `connections`; a plan runs as the
 * workspace; disconnecting revokes; a later run waits for an approver to connect it again (its requester, an
 * approver, is sent the link) and goes on, not re-planned.
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

describe('a workspace connection made by an approver, on the console', () => {
  it('the approver connects it from connections; runs use it as the workspace; a run waits for it after a disconnect', async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const origin = connectOrigin(oauth);
    const plan = planReply([{ id: 'me', tool: 'ws.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' });
    h = await startHarness({
      db: 'postgres',
      servers: [serverConfig('ws', { url: oauth.url, auth: 'workspace', risk: 'low' })],
      script: byRole({ planner: [plan, plan], synthesizer: ['Done.', 'Done.'] }),
      settings: { approvers: ['console:ada'] },
      setup: origin.setup,
    });
    const harness = h;
    await harness.steward.recover();
    const since = () => harness.output().length;
    const linkAfter = async (from: number) =>
      linkIn(await harness.waitFor(/Connect ws for the workspace: \S+/, 15_000, from));
    const connect = async (subject: string) => {
      const from = since();
      await harness.type('connections connect ws');
      const link = await linkAfter(from);
      // A browser not signed in to the dashboard: the approver confirms in chat.
      expect(await (await connectThrough(link!, browser(subject))).text()).toContain('Almost connected');
      await harness.waitFor(/\? Someone allowed Steward to use an account on `ws`/, 15_000, from);
      await harness.type('connections use ws');
      await harness.waitFor(
        /i Connected `ws` for the workspace: every step there runs with the account you allowed/,
        15_000,
        from,
      );
    };

    await harness.type('connections');
    await harness.waitFor(/• `ws`: not connected; Connect for the workspace \(approvers\): `connections connect ws`/);

    await connect('admin@tracker');
    expect(harness.host.listTools().map((t) => t.name)).toEqual(['ws.whoami']);

    // A plan on it runs at once, as the workspace (the card says so).
    let from = since();
    await harness.type('who am I on the tracker?');
    await harness.waitFor(/1\. \[me\] ws\.whoami as the workspace /, 15_000, from);
    await harness.waitFor(/=== Report \(completed\) ===/, 15_000, from);
    expect(oauth.calls.map((c) => c.subject)).toEqual(['admin@tracker']);

    await harness.type('connections disconnect ws');
    await harness.waitFor(/i Disconnected `ws` for the workspace: its server revoked the authorization/);
    expect(oauth.revoked).toHaveLength(1);

    // The next run's step waits for an approver; the requester is one, so she alone is sent the link; once she
    // connects it (here in a browser signed in to the dashboard as her: no question), it goes on, not re-planned.
    from = since();
    await harness.type('new and again?');
    await harness.waitFor(/an approver must connect it for the workspace/, 15_000, from);
    const link = linkIn(await harness.waitFor(/you are an approver\. Connect ws for the workspace: \S+/, 15_000, from));
    expect(oauth.calls).toHaveLength(1);
    const signedIn = browser('admin2@tracker');
    await signedIn.signIn(origin.web, harness.db, { channel: 'console', id: 'ada' });
    expect(await (await connectThrough(link!, signedIn)).text()).toContain('Connected ws');
    await harness.waitFor(/=== Report \(completed\) ===/, 15_000, from);
    expect(oauth.calls.map((c) => c.subject)).toEqual(['admin@tracker', 'admin2@tracker']);
    expect(harness.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(2);
  });
});
