/**
 * A workflow's fire runs as its owner (issue 28, "whose identity"): on a server each person connects with their own
 * account, every fire's call reaches the server under the owner's subject, with no planner call and no link; once
 * the owner disconnected, a fire waits and the owner is sent a link, and nothing reaches the server as anyone else.
 * Console, PostgreSQL, the SDK's own OAuth server in front of an MCP server that records each call's subject.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StewardSettings } from '../../src/engine/flows/deps.ts';
import { DEFAULT_SCHEDULE_LIMITS } from '../../src/engine/workflow/schedule-limits.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { browser, connectOrigin, connectThrough, linkIn } from '../helpers/connect-origin.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
let oauth: OAuthMcpServer | undefined;
afterEach(async () => {
  await h?.close();
  await oauth?.close();
  h = undefined;
  oauth = undefined;
});

/** Fires to the second, so a test sees one within a second. */
const EVERY_SECOND: Partial<StewardSettings> = {
  scheduleLimits: { ...DEFAULT_SCHEDULE_LIMITS, seconds: true, minIntervalMs: 0 },
};

describe('a workflow fire on a server people connect to', () => {
  it("runs as the workflow's owner, and waits for the owner's connection once it is gone", async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const server = oauth;
    const origin = connectOrigin(server);
    const plan = planReply([{ id: 'me', tool: 'tracker.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' });
    h = await startHarness({
      db: 'postgres',
      servers: [serverConfig('tracker', { url: server.url, auth: 'person', risk: 'low' })],
      script: byRole({ planner: [plan], synthesizer: 'Done.' }),
      setup: origin.setup,
      settings: EVERY_SECOND,
    });
    const harness = h;
    await harness.steward.recover();
    const since = () => harness.output().length;
    let from = since();
    await harness.type('connections connect tracker');
    const link = linkIn(await harness.waitFor(/Connect tracker: \S+/, 15_000, from));
    await connectThrough(link!, browser('ada@tracker'));
    await harness.waitFor(/\? Someone allowed Steward to use an account on `tracker` as yours/, 15_000, from);
    await harness.type('connections use tracker');
    await harness.waitFor(/i Connected `tracker`/, 15_000, from);

    from = since();
    await harness.type('who am I on the tracker?');
    await harness.waitFor(/=== Report \(completed\) ===\nDone\.\n/, 15_000, from);
    await harness.type('save whoami');
    await harness.waitFor(/Saved workflow "whoami" \(version 1\) from run/);
    await harness.type('schedule whoami "* * * * * *" UTC');
    await waitUntil('two fires at the server', () => server.calls.length >= 3, { timeoutMs: 20_000 });
    await harness.type('schedule whoami pause');
    await harness.waitFor(/paused/i);
    await harness.steward.idle();
    expect(new Set(server.calls.map((c) => c.subject))).toEqual(new Set(['ada@tracker']));
    expect(harness.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(1);

    // Disconnected: the next fire waits for her connection, and she is sent the link; it never runs as anyone else.
    await harness.type('connections disconnect tracker');
    await harness.waitFor(/i Disconnected `tracker`/);
    const before = server.calls.length;
    from = since();
    await harness.type('schedule whoami resume');
    await harness.waitFor(/ada: me runs on tracker as you, .*Connect tracker: \S+/, 20_000, from);
    await harness.type('schedule whoami pause');
    await harness.waitFor(/Paused the schedule of "whoami"/, 15_000, from);
    await harness.type('stop');
    await harness.steward.idle();
    expect(server.calls).toHaveLength(before);
  }, 90_000);
});
