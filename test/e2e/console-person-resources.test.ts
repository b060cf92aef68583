/**
 * A resource read on a server that connects per person, end to end on the console (issue 29): the real ConsoleChannel
 * and engine on PostgreSQL, McpHost with sealed tokens, Steward's web origin and the SDK's own OAuth server in front
 * of an MCP server that records whose token each read came with. Another person's stored connection lists the
 * server's resources; the requester, with no connection of her own, gets the same connect link as a tool step, and
 * the read then reaches the server as her, never as the other person.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { browser, connectOrigin, connectThrough, linkIn } from '../helpers/connect-origin.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
let oauth: OAuthMcpServer | undefined;
afterEach(async () => {
  await h?.close();
  await oauth?.close();
  h = undefined;
  oauth = undefined;
});

describe('a resource read on a server that connects per person, on the console', () => {
  it('asks the requester to connect, then reads as her and nobody else', async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody', resource: true });
    const origin = connectOrigin(oauth);
    const plan = planReply(
      [{ id: 'me', tool: 'steward.read_resource', args: { server: 'tracker', uri: 'tracker://me' } }],
      { summary: 'Read my profile' },
    );
    h = await startHarness({
      db: 'postgres',
      servers: [serverConfig('tracker', { url: oauth.url, auth: 'person' })],
      script: byRole({ planner: [plan], synthesizer: ['You are ada.'] }),
      setup: origin.setup,
    });
    const harness = h;
    await harness.steward.recover();
    // Ben connected before: his session lists the server's resources, so the planner may read from it.
    const ben = { channel: 'console', id: 'ben', name: 'Ben' };
    const url = await harness.host.connectionUrl('tracker', ben, 'state-ben');
    const consent = await fetch(url, { redirect: 'manual', headers: { cookie: 'as_user=ben@tracker' } });
    const code = new URL(consent.headers.get('location') ?? '').searchParams.get('code') ?? '';
    await harness.host.finishConnection('tracker', ben, code);
    expect(harness.host.listResources().map((l) => [l.server, l.perPerson])).toEqual([['tracker', true]]);

    await harness.type('what does my tracker profile say?');
    // The card names whose account the read runs as, before anything runs.
    await harness.waitFor(/1\. \[me\] steward\.read_resource as ada \{"server":"tracker","uri":"tracker:\/\/me"\}/);
    const link = linkIn(await harness.waitFor(/Connect tracker: \S+/, 15_000));
    expect(oauth.reads).toEqual([]);
    expect(await (await connectThrough(link!, browser('ada@tracker'))).text()).toContain('Almost connected');
    await harness.waitFor(/\? Someone allowed Steward to use an account on `tracker` as yours/, 15_000);
    await harness.type('connections use tracker');
    await harness.waitFor(/=== Report \(completed\) ===/, 15_000);
    expect(oauth.reads.map((r) => r.subject)).toEqual(['ada@tracker']);
    const attempts = await harness.store.listStepAttempts((await onlyRun(harness)).id);
    const done = attempts.find((a) => a.status === 'succeeded');
    expect(JSON.stringify(done?.output)).toContain('"text":"ada@tracker"');
  });
});
