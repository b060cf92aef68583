/**
 * A resource read on a server that connects per person, end to end on the console (issue 29): the real ConsoleChannel
 * and engine on PostgreSQL, McpHost with sealed tokens, Steward's web origin and the SDK's own OAuth server in front
 * of an MCP server that records whose token each read came with. Another person's stored connection lists the
 * server's resources; the requester, with no connection of her own, gets the same connect link as a tool step, and
 * the read then reaches the server as her, never as the other person.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole, type FakeReply } from '../fakes/fake-llm-server.ts';
import { browser, connectOrigin, connectThrough, linkIn } from '../helpers/connect-origin.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { waitUntil } from '../helpers/wait.ts';
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
    await readsAsAda((plan) => plan);
  });

  it('asks once, and goes on once she connects, when the read found no connection before the plan was whole', async () => {
    // The read starts while the plan streams and finds no connection of hers at once; the plan's end waits for the
    // link. The run then has a card and a driver of its own, and must still hear of her connection (an intermittent
    // CI failure: the signal went to the driver the plan was streamed into, and the run waited for good).
    await readsAsAda((plan) => heldUntilLinked(plan), { links: 1 });
  });
});

/** The plan streamed in two pieces, cut after its last step: the end once the console shows a connect link. */
function heldUntilLinked(text: string): FakeReply {
  const k = text.lastIndexOf(']');
  const beforeChunk = async (i: number) => {
    if (i === 1)
      await waitUntil('a connect link while the plan streams', () => /Connect tracker: \S+/.test(h?.output() ?? ''), {
        timeoutMs: 10_000,
      });
  };
  return { text, chunks: [text.slice(0, k), text.slice(k)], beforeChunk };
}

async function readsAsAda(reply: (plan: string) => FakeReply, expect_: { links?: number } = {}): Promise<void> {
  oauth = await startOAuthMcpServer({ consentAs: 'nobody', resource: true });
  const origin = connectOrigin(oauth);
  const plan = planReply(
    [{ id: 'me', tool: 'steward.read_resource', args: { server: 'tracker', uri: 'tracker://me' } }],
    { summary: 'Read my profile' },
  );
  h = await startHarness({
    db: 'postgres',
    servers: [serverConfig('tracker', { url: oauth.url, auth: 'person' })],
    script: byRole({ planner: [reply(plan)], synthesizer: ['You are ada.'] }),
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
  if (expect_.links !== undefined)
    expect(harness.output().match(/Connect tracker: \S+/g) ?? []).toHaveLength(expect_.links);
}
