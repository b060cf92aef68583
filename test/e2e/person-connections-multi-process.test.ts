/**
 * Issue 28 across processes, through the real entry point (`src/main.ts`, Slack HTTP mode) twice on one PostgreSQL:
 * process A serves Steward's web origin (every link points at it, as a load balancer would send people there), process
 * B holds the run. A connection made through A's callback lets B's waiting run go on (the `connected:<run>` signal),
 * and B's planner sees the server's tools once someone connected through A (B had listed nothing at its start).
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { PgConnectLinks } from '../../src/store/pg-connect-links.ts';
import { byRole, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack-server.ts';
import { browser, connectThrough, linkIn } from '../helpers/connect-origin.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { freePort } from '../helpers/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { createSlackDelivery } from '../helpers/slack-delivery.ts';
import { createStewardProcess, type StewardProcess } from '../helpers/steward-process.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply } from './harness.ts';

const SIGNING_SECRET = 'person-signing-secret-0123456789';
const ADA: Actor = { channel: 'slack', id: 'U0ADA' };
const CAROL: Actor = { channel: 'slack', id: 'U0CAROL' };

describe('per-person connections across processes', () => {
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closing.reverse()) await close().catch(() => undefined);
    closing.length = 0;
  });

  it('the callback on process A lets the run that process B holds go on, as the person who connected', async () => {
    const oauth: OAuthMcpServer = await startOAuthMcpServer({ consentAs: 'nobody' });
    closing.push(() => oauth.close());
    const db: TestDatabase = await createTestDatabase('postgres');
    closing.push(() => db.close());
    const slack: FakeSlack = await startFakeSlack();
    closing.push(() => slack.close());
    const llm: FakeLlm = await startFakeLlm(
      byRole({
        planner: planReply([{ id: 'me', tool: 'tracker.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' }),
        synthesizer: 'Done.',
      }),
    );
    closing.push(() => llm.close());
    const portA = await freePort();
    const web = `http://127.0.0.1:${portA}`;
    const shared = {
      STEWARD_DASHBOARD_URL: web,
      STEWARD_DASHBOARD_HOST: '127.0.0.1',
      STEWARD_DASHBOARD_SECRET: randomBytes(32).toString('base64'),
      STEWARD_SECRETS_KEY: randomBytes(32).toString('base64'),
    };
    const processOf = async (name: string, dashboardPort: number) => {
      const p: StewardProcess = createStewardProcess({
        name,
        databaseUrl: testDatabaseUrlFor(db.name),
        llmBaseUrl: llm.baseURL,
        slack: { apiUrl: slack.apiUrl, botToken: slack.botToken, signingSecret: SIGNING_SECRET },
        mcpServers: { tracker: { url: oauth.url, auth: 'person', risk: 'low' } },
        env: { ...shared, STEWARD_DASHBOARD_PORT: String(dashboardPort) },
      });
      closing.push(() => p.close());
      await p.start();
      return p;
    };
    const a = await processOf('a', portA);
    const b = await processOf('b', await freePort());
    expect(b.log()).toContain('its tools are listed once someone connects');

    // Carol connects through A, in a browser signed in to the dashboard as her: B hears it and lists the tools.
    const carol = browser('carol@tracker');
    await carol.signIn(web, db, CAROL);
    const carolLink = await new PgConnectLinks(db.db).issue(
      { server: 'tracker', person: CAROL, runId: null },
      new Date(),
    );
    expect(await (await connectThrough(`${web}/connect/${carolLink}`, carol)).text()).toContain('Connected tracker');
    await waitUntil(
      'B to list the tools',
      () => /tools listed under a stored connection/.test(b.log() + b.currentOutput()),
      {
        details: () => `b:\n${b.currentOutput()}\n${b.log()}`,
      },
    );

    // Ada asks through B: B plans with the tools and holds the run; her link points at A.
    const delivery = createSlackDelivery({ slack, signingSecret: SIGNING_SECRET });
    const sent = await delivery.mention(() => b.eventsUrl, { text: 'who am I on the tracker?', user: ADA.id });
    expect(sent.ok).toBe(true);
    const link = await waitUntil(
      'a link for Ada',
      () =>
        slack
          .callsOf('chat.postEphemeral')
          .filter((c) => c.args.user === ADA.id)
          .map((c) => linkIn(JSON.stringify(c.args)))
          .find(Boolean),
      { details: () => `b:\n${b.log()}` },
    );
    expect(link.startsWith(`${web}/connect/`)).toBe(true);
    const rows = await db.db.selectFrom('runs').select(['status']).execute();
    expect(rows).toEqual([{ status: 'running' }]);
    expect(oauth.calls).toEqual([]);

    // Ada connects through A (her browser signed in as her): the callback on A signals; B's run goes on as her.
    const ada = browser('ada@tracker');
    await ada.signIn(web, db, ADA);
    expect(await (await connectThrough(link, ada)).text()).toContain('Connected tracker');
    await waitUntil(
      'the run to complete',
      async () => (await db.db.selectFrom('runs').select('status').executeTakeFirst())?.status === 'completed',
      { details: () => `a:\n${a.log()}\nb:\n${b.log()}` },
    );
    expect(oauth.calls.map((c) => c.subject)).toEqual(['ada@tracker']);
    expect(a.log()).toMatch(/connect: slack:U0ADA connected tracker/);
    expect(b.log()).toMatch(/its requester connected tracker; the waiting steps go on/);
    expect(a.log()).not.toMatch(/its requester connected tracker/);
    // The tokens are in neither process's log, nor in what Slack was sent.
    for (const canary of oauth.issued) {
      expect(`${a.log()}${a.output()}${b.log()}${b.output()}`).not.toContain(canary);
      expect(JSON.stringify(slack.calls)).not.toContain(canary);
    }
  });

  it('a workspace server an approver connects through A comes up on B without a restart, and B runs as the workspace', async () => {
    const oauth: OAuthMcpServer = await startOAuthMcpServer({ consentAs: 'nobody' });
    closing.push(() => oauth.close());
    const db: TestDatabase = await createTestDatabase('postgres');
    closing.push(() => db.close());
    const slack: FakeSlack = await startFakeSlack();
    closing.push(() => slack.close());
    const llm: FakeLlm = await startFakeLlm(
      byRole({
        planner: planReply([{ id: 'me', tool: 'ws.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' }),
        synthesizer: 'Done.',
      }),
    );
    closing.push(() => llm.close());
    const portA = await freePort();
    const web = `http://127.0.0.1:${portA}`;
    const shared = {
      STEWARD_DASHBOARD_URL: web,
      STEWARD_DASHBOARD_HOST: '127.0.0.1',
      STEWARD_DASHBOARD_SECRET: randomBytes(32).toString('base64'),
      STEWARD_SECRETS_KEY: randomBytes(32).toString('base64'),
    };
    const processOf = async (name: string, dashboardPort: number) => {
      const p: StewardProcess = createStewardProcess({
        name,
        databaseUrl: testDatabaseUrlFor(db.name),
        llmBaseUrl: llm.baseURL,
        slack: { apiUrl: slack.apiUrl, botToken: slack.botToken, signingSecret: SIGNING_SECRET },
        mcpServers: { ws: { url: oauth.url, auth: 'workspace', risk: 'low' } },
        env: { ...shared, STEWARD_DASHBOARD_PORT: String(dashboardPort) },
      });
      closing.push(() => p.close());
      await p.start();
      return p;
    };
    const a = await processOf('a', portA);
    const b = await processOf('b', await freePort());
    expect(b.log()).toContain('MCP server "ws" waits for an approver to connect it for the workspace');

    // The approver's link (as `/steward connections connect ws` gives it), used through A signed in as him.
    const boss: Actor = { channel: 'slack', id: 'U0BOSS' };
    const bossBrowser = browser('boss@tracker');
    await bossBrowser.signIn(web, db, boss);
    const token = await new PgConnectLinks(db.db).issue({ server: 'ws', person: boss, runId: null }, new Date());
    const page = await (await connectThrough(`${web}/connect/${token}`, bossBrowser)).text();
    expect(page).toContain('Connected ws');
    expect(page).toMatch(/everyone(&#39;|')s steps/);
    await waitUntil(
      'B to bring ws up',
      // Heard through the signal (or, had a retry of its backoff come first, that retry): no restart.
      () => /MCP server "ws" connected (for the workspace )?with 1 tools/.test(b.log() + b.currentOutput()),
      { details: () => `b:\n${b.currentOutput()}\n${b.log()}` },
    );

    // Ada (no approver) asks through B: it plans with ws's tools and runs the step with the workspace's account.
    const delivery = createSlackDelivery({ slack, signingSecret: SIGNING_SECRET });
    const sent = await delivery.mention(() => b.eventsUrl, { text: 'who am I on the tracker?', user: ADA.id });
    expect(sent.ok).toBe(true);
    await waitUntil(
      'the run to complete',
      async () => (await db.db.selectFrom('runs').select('status').executeTakeFirst())?.status === 'completed',
      { details: () => `a:\n${a.log()}\nb:\n${b.log()}` },
    );
    expect(oauth.calls.map((c) => c.subject)).toEqual(['boss@tracker']);
    for (const canary of oauth.issued) {
      expect(`${a.log()}${a.output()}${b.log()}${b.output()}`).not.toContain(canary);
      expect(JSON.stringify(slack.calls)).not.toContain(canary);
    }
  });
});
