/** The composition root with DISCORD_TOKEN set, alone and beside Slack, on PGlite, as `npm start` would run it. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { startFakeDiscord, type FakeDiscord } from '../fakes/fake-discord-server.ts';
import { byRole, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack-server.ts';
import { seedPglite } from '../helpers/databases.ts';
import { EVERYTHING_SCRIPT } from '../helpers/mcp-servers.ts';
import { parsePromText } from '../helpers/prom-text.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply } from './harness.ts';
import { createMention, eventEnvelope, sendSigned } from './slack-requests.ts';

let cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
  cleanup = [];
});

const echo = () => planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }]);

async function world(o: { planner: number; allowMessageContent?: boolean }) {
  const dir = mkdtempSync(join(tmpdir(), 'steward-discord-app-'));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  await seedPglite(dir);
  writeFileSync(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'], risk: 'medium' } },
    }),
  );
  const llm: FakeLlm = await startFakeLlm(byRole({ planner: Array.from({ length: o.planner }, echo) }));
  cleanup.push(() => llm.close());
  const discord: FakeDiscord = await startFakeDiscord({ allowMessageContent: o.allowMessageContent ?? false });
  cleanup.push(() => discord.close());
  const out = new PassThrough();
  const printed: string[] = [];
  out.on('data', (c: Buffer) => printed.push(c.toString()));
  const env = {
    OPENAI_BASE_URL: llm.baseURL,
    // Quick answers off: these scripts have no butler turn (test/e2e/quick-answers.test.ts turns them on).
    STEWARD_QUICK_ANSWERS: 'off',
    STEWARD_MODEL: 'm',
    DATA_DIR: dir,
    MCP_CONFIG: join(dir, 'mcp.json'),
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_GUILD_ID: discord.guildId,
  };
  const start = async (more: Record<string, string> = {}): Promise<App> => {
    const app = await startApp({ env: { ...env, ...more }, input: new PassThrough(), output: out });
    cleanup.push(() => app.close());
    return app;
  };
  return { discord, start, printed: () => printed.join(''), dir };
}

describe('the composition root on Discord', () => {
  it('serves Discord: /steward is registered in the guild, and a mention gets a plan card in a thread', async () => {
    const w = await world({ planner: 1 });
    const app = await w.start();
    expect(w.printed()).toContain('Discord: connected as Steward');
    expect(app.platforms.discord).toBeDefined();
    expect(app.platforms.console).toBeUndefined();
    expect(w.discord.registeredCommands(w.discord.guildId)).toEqual([
      expect.objectContaining({ name: 'steward', type: 1 }),
      expect.objectContaining({ name: 'Ask Steward', type: 3 }),
    ]);
    // No Message Content intent asked for by default: mentions still arrive with their text.
    expect(w.discord.intents & (1 << 15)).toBe(0);
    const mention = w.discord.messageCreate({ content: 'say hi', mentionsBot: true });
    w.discord.dispatch('MESSAGE_CREATE', mention);
    const card = await waitUntil(
      'the plan card in the thread',
      () => w.discord.messagesIn(mention.id).find((m) => (m.message.embeds ?? []).length > 0),
      { timeoutMs: 15_000 },
    );
    expect(JSON.stringify(card.message.embeds)).toContain('everything.echo');
    expect(card.message.embeds?.[0]?.footer?.text).toContain('mentioning @Steward');
  });

  it('serves Slack and Discord from one process: each request is answered on its own platform', async () => {
    const w = await world({ planner: 2 });
    const slack: FakeSlack = await startFakeSlack();
    cleanup.push(() => slack.close());
    const app = await w.start({
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: 'sekrit-123456',
      SLACK_API_URL: slack.apiUrl,
      PORT: '0',
    });
    expect(w.printed()).toMatch(/Slack: listening on port \d+/);
    expect(w.printed()).toContain('Discord: connected');
    const mention = w.discord.messageCreate({ content: 'say hi', mentionsBot: true });
    w.discord.dispatch('MESSAGE_CREATE', mention);
    const slackMention = createMention({ text: 'say hi' }, slack.botUserId);
    const res = await sendSigned(
      `http://127.0.0.1:${app.platforms.slack?.port}/slack/events`,
      'sekrit-123456',
      eventEnvelope(slackMention, slack.botUserId),
      'application/json',
    );
    expect(res.status).toBe(200);
    await waitUntil(
      'a card on each platform',
      () =>
        w.discord.messagesIn(mention.id).some((m) => (m.message.embeds ?? []).length > 0) &&
        slack.callsOf('chat.postMessage').some((c) => c.args.thread_ts === slackMention.ts),
      { timeoutMs: 15_000 },
    );
    // Each card went to its own platform only.
    expect(JSON.stringify(slack.calls.map((c) => c.args))).not.toContain(mention.id);
    expect(w.discord.calls.some((c) => JSON.stringify(c.body ?? '').includes(slackMention.ts))).toBe(false);
  });

  it("counts Discord's 429s on /metrics by HTTP method and route, with no id in the label", async () => {
    const w = await world({ planner: 1 });
    const app = await w.start({ STEWARD_HEALTH_PORT: '0' });
    w.discord.throttle({ method: 'POST', route: '/channels/:channel/messages' }, { times: 1, retryAfterSeconds: 0.2 });
    const mention = w.discord.messageCreate({ content: 'say hi', mentionsBot: true });
    w.discord.dispatch('MESSAGE_CREATE', mention);
    await waitUntil(
      'the plan card, after its 429',
      () => w.discord.messagesIn(mention.id).find((m) => (m.message.embeds ?? []).length > 0),
      { timeoutMs: 15_000 },
    );
    const throttled = w.discord.callsTo('POST', '/channels/:channel/messages').filter((c) => c.status === 429);
    expect(throttled).toHaveLength(1);
    const text = await (await fetch(`http://127.0.0.1:${app.health?.port}/metrics`)).text();
    const limited = parsePromText(text).samples.filter((s) => s.name === 'steward_outbox_rate_limited_total');
    expect(limited).toEqual([
      {
        name: 'steward_outbox_rate_limited_total',
        labels: { platform: 'discord', method: 'POST /channels/:id/messages' },
        value: 1,
      },
    ]);
    expect(text).not.toContain(mention.channel_id);
  });

  it('a bad token or a Message Content intent the app may not use stops start-up with a sentence saying what to do', async () => {
    const w = await world({ planner: 0, allowMessageContent: false });
    await expect(w.start({ DISCORD_TOKEN: 'not-the-token' })).rejects.toThrow(/Discord refused DISCORD_TOKEN/);
    await expect(w.start({ DISCORD_MESSAGE_CONTENT: 'on' })).rejects.toThrow(
      /Message Content intent.*DISCORD_MESSAGE_CONTENT=off/,
    );
    expect(w.printed()).not.toContain(w.discord.token);
  });
});
