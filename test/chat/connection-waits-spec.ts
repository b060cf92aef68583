/**
 * A step that waits for its requester to connect their own account (a server with "auth": "person"), or for an
 * approver to connect the workspace's (a server with "auth": "workspace"), steered in a chat, the same on Slack and
 * Discord: asking how it goes, Stop, Pause (and Resume), and Cancel at review. These are
 * the scenario matrix's rows for "a step waits on a connection" (its drivers set up no OAuth server, so they live
 * here, in the shared chat specs, one spec for both platforms). The server is the SDK's own OAuth authorization server
 * in front of an MCP server that records each call's token subject (test/helpers/oauth-mcp-server.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { browser, connectOrigin, connectThrough, linkIn, type ConnectOrigin } from '../helpers/connect-origin.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { onlyRun, planReply } from '../e2e/harness.ts';
import type { Chat, Shown } from './chat.ts';
import { useChat, type Start } from './spec-kit.ts';

/** The connection spec on the platform `start` opens. */
export function connectionWaitsSpec<C extends Chat>(name: string, start: Start<C>) {
  const chat = useChat(start);
  let oauth: OAuthMcpServer | undefined;
  afterEach(async () => {
    await oauth?.close();
    oauth = undefined;
  });

  /** A stage whose plan is one step on `tracker` (risk `low`: it starts at once; `medium`: it waits for review). */
  async function stage(risk: 'low' | 'medium'): Promise<{ c: C; origin: ConnectOrigin; server: OAuthMcpServer }> {
    const server = await startOAuthMcpServer({ consentAs: 'nobody' });
    oauth = server;
    const origin = connectOrigin(server);
    const c = await chat.start({
      db: 'postgres',
      servers: [serverConfig('tracker', { url: server.url, auth: 'person', risk })],
      script: byRole({
        planner: planReply([{ id: 'me', tool: 'tracker.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' }),
        synthesizer: 'Done.',
        classifier: 'status',
      }),
      setup: origin.setup,
    });
    // As the app does at start: the ownership watch hears other processes' signals (a connection made).
    await c.steward.recover();
    // Someone connected before, so the planner sees the server's tools.
    const carol: Actor = { channel: 'test', id: 'carol' };
    const link = (await origin.flow().connectLink('tracker', carol, null, new Date()))!;
    await connectThrough(link, browser('carol@tracker'));
    expect(await origin.flow().confirm('tracker', carol, 'use', new Date())).toEqual({ used: true });
    server.calls.length = 0;
    return { c, origin, server };
  }

  /**
   * A stage whose plan is one step on `ws`, a workspace server (risk `low`): Boss (an approver) connected it once, so
   * the planner knows its tools, then disconnected it (revoked at its server). `bossConnects` connects it again from
   * chat, in a browser not signed in to the dashboard, and confirms it there.
   */
  async function workspaceStage(): Promise<{ c: C; server: OAuthMcpServer; bossConnects: () => Promise<void> }> {
    const server = await startOAuthMcpServer({ consentAs: 'nobody' });
    oauth = server;
    const origin = connectOrigin(server);
    const c = await chat.start({
      db: 'postgres',
      servers: [serverConfig('ws', { url: server.url, auth: 'workspace', risk: 'low' })],
      script: byRole({
        planner: planReply([{ id: 'me', tool: 'ws.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' }),
        synthesizer: 'Done.',
        classifier: 'status',
      }),
      setup: origin.setup,
    });
    await c.steward.recover();
    const questions = () =>
      c.told('boss').filter((m) => m.actions.some((a) => a.includes('use')) && m.text.includes("as the workspace's"));
    const bossConnects = async () => {
      const before = questions().length;
      const said = (await c.command('connections connect ws', 'boss')).join('\n');
      expect(said).toContain('Connect ws for the workspace');
      expect((await connectThrough(linkIn(said)!, browser('boss@tracker'))).status).toBe(200);
      const asked = await c.waitFor('the question to Boss', () => questions()[before]);
      expect((await c.pressPrivate(asked, 'connection-use', 'boss')).join('\n')).toContain(
        'Connected `ws` for the workspace',
      );
    };
    await bossConnects();
    expect((await c.command('connections disconnect ws', 'boss')).join('\n')).toContain(
      'Disconnected `ws` for the workspace: its server revoked the authorization',
    );
    expect(server.revoked).toHaveLength(1);
    return { c, server, bossConnects };
  }

  /** The connect link Steward showed Ada alone. */
  const linkFor = (c: C) =>
    c.waitFor('a link for Ada', () =>
      c
        .told('ada')
        .map((m) => linkIn(m.text))
        .find(Boolean),
    );
  /** The private question about a connection Ada made in a browser not signed in as her. */
  const question = (c: C) =>
    c.waitFor('the question to Ada', () =>
      c
        .told('ada')
        .filter((m) => m.actions.some((a) => a.includes('use')))
        .at(-1),
    );
  const runStatus = async (c: C) => (await onlyRun(c)).status;

  describe(`${name}: a step that waits for its requester's own connection`, () => {
    it('a status reply names who must connect what; the link went to the requester alone, and nothing ran', async () => {
      const { c, server } = await stage('low');
      const thread = await c.mention('who am I on the tracker?');
      await linkFor(c);
      expect(c.told('bob')).toEqual([]);
      for (const m of [...c.replies(thread), c.card(thread)]) expect(linkIn(m.text)).toBeUndefined();
      expect(c.card(thread).text).toMatch(/tracker\.whoami`? as /);

      await c.reply(thread, 'how is it going?', 'bob');
      const said = await c.waitFor('the status', () => c.replies(thread).find((m) => m.text.includes('Waiting for')));
      expect(said.text).toMatch(/Waiting for .+ to connect tracker/);
      expect(said.text).toContain('Left: me');
      expect(server.calls).toEqual([]);
      expect(await runStatus(c)).toBe('running');
    });

    it('Stop ends the run at once; a connection made afterwards starts nothing', async () => {
      const { c, server } = await stage('low');
      const thread = await c.mention('who am I on the tracker?');
      const link = await linkFor(c);
      await c.press(c.card(thread), 'stop');
      await c.waitFor('the run to stop', async () => (await runStatus(c)) === 'stopped');
      expect((await connectThrough(link, browser('ada@tracker'))).status).toBe(200);
      const asked = await question(c);
      expect((await c.pressPrivate(asked, 'connection-use')).join('\n')).toContain('Connected `tracker`');
      expect(await runStatus(c)).toBe('stopped');
      expect(server.calls).toEqual([]);
    });

    it('Pause holds the step even once the requester connects; Resume runs it as them', async () => {
      const { c, server } = await stage('low');
      const thread = await c.mention('who am I on the tracker?');
      const link = await linkFor(c);
      await c.waitFor(
        'the step to wait',
        async () => (await c.store.listEvents((await onlyRun(c)).id, ['connectionNeeded'])).length === 1,
      );
      await c.press(c.card(thread), 'pause');
      await c.waitFor('the run to pause', async () => (await runStatus(c)) === 'paused');
      expect((await connectThrough(link, browser('ada@tracker'))).status).toBe(200);
      await c.pressPrivate(await question(c), 'connection-use');
      // Connected, and the run heard it: still nothing runs while it is paused.
      await c.waitFor(
        'the wait to end',
        async () => (await c.store.listEvents((await onlyRun(c)).id, ['connected'])).length === 1,
      );
      expect(server.calls).toEqual([]);
      expect(await runStatus(c)).toBe('paused');

      const paused = await c.waitFor(
        'Resume on the card',
        () => c.card(thread).actions.includes('resume') && c.card(thread),
      );
      await c.press(paused, 'resume');
      await c.waitFor('the run to complete', async () => (await runStatus(c)) === 'completed');
      expect(server.calls.map((call) => call.subject)).toEqual(['ada@tracker']);
    });

    it('a workspace server: only an approver connects it; a run waits for them and goes on as the workspace, not re-planned', async () => {
      const { c, server, bossConnects } = await workspaceStage();
      // Ada is no approver: she sees that an approver connects it, and gets no link.
      expect((await c.command('connections', 'ada')).join('\n')).toMatch(
        /`ws`: not connected; Connect for the workspace/,
      );
      const refused = (await c.command('connections connect ws', 'ada')).join('\n');
      expect(refused).toContain('only an approver can connect or disconnect it');
      expect(linkIn(refused)).toBeUndefined();

      // Ada's run waits for an approver, the thread says so, and nobody is sent a link; Boss connects it: it goes on.
      const thread = await c.mention('who am I on the tracker?');
      await c.waitFor('the thread to hear it waits', () =>
        c.replies(thread).find((m) => m.text.includes('an approver must connect it for the workspace')),
      );
      expect(c.card(thread).text).toMatch(/ws\.whoami`? as the workspace/);
      expect(c.told('ada').some((m) => linkIn(m.text))).toBe(false);
      expect(server.calls).toEqual([]);
      await bossConnects();
      await c.waitFor('the run to complete', async () => (await runStatus(c)) === 'completed');
      expect(server.calls.map((call) => call.subject)).toEqual(['boss@tracker']);
      expect(c.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(1);
    });

    it('a workspace wait: a status reply says an approver must connect it; Stop ends the run, and a connection made afterwards starts nothing', async () => {
      const { c, server, bossConnects } = await workspaceStage();
      const thread = await c.mention('who am I on the tracker?');
      await c.waitFor(
        'the step to wait',
        async () => (await c.store.listEvents((await onlyRun(c)).id, ['connectionNeeded'])).length === 1,
      );
      await c.reply(thread, 'how is it going?', 'bob');
      const said = await c.waitFor('the status', () => c.replies(thread).find((m) => m.text.includes('Waiting for')));
      expect(said.text).toContain('Waiting for an approver to connect ws for the workspace');
      await c.press(c.card(thread), 'stop');
      await c.waitFor('the run to stop', async () => (await runStatus(c)) === 'stopped');
      await bossConnects();
      expect(await runStatus(c)).toBe('stopped');
      expect(server.calls).toEqual([]);
    });

    it('a workspace wait: Pause holds the step even once an approver connects it; Resume runs it as the workspace', async () => {
      const { c, server, bossConnects } = await workspaceStage();
      const thread = await c.mention('who am I on the tracker?');
      await c.waitFor(
        'the step to wait',
        async () => (await c.store.listEvents((await onlyRun(c)).id, ['connectionNeeded'])).length === 1,
      );
      await c.press(c.card(thread), 'pause');
      await c.waitFor('the run to pause', async () => (await runStatus(c)) === 'paused');
      await bossConnects();
      await c.waitFor(
        'the wait to end',
        async () => (await c.store.listEvents((await onlyRun(c)).id, ['connected'])).length === 1,
      );
      expect(server.calls).toEqual([]);
      expect(await runStatus(c)).toBe('paused');
      const paused = await c.waitFor(
        'Resume on the card',
        () => c.card(thread).actions.includes('resume') && c.card(thread),
      );
      await c.press(paused, 'resume');
      await c.waitFor('the run to complete', async () => (await runStatus(c)) === 'completed');
      expect(server.calls.map((call) => call.subject)).toEqual(['boss@tracker']);
    });

    it('Cancel at review of a plan that would wait on a connection: nobody is asked to connect, nothing runs', async () => {
      const { c, server } = await stage('medium');
      const thread = await c.mention('who am I on the tracker?');
      const card: Shown = await c.waitFor(
        'the plan card',
        () => c.card(thread).actions.includes('cancel') && c.card(thread),
      );
      expect(card.text).toMatch(/tracker\.whoami`? as /);
      await c.press(card, 'cancel');
      await c.waitFor('the run to be cancelled', async () => (await runStatus(c)) === 'cancelled');
      expect(c.told('ada').some((m) => linkIn(m.text))).toBe(false);
      expect(server.calls).toEqual([]);
    });
  });
}
