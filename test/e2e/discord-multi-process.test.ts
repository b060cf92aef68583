/**
 * Two Steward processes on one database and one bot token: Discord gives each of their gateway sessions every event.
 * The first to claim a message or a press in the database acts on it; the other leaves it alone.
 */
import { waitUntil } from '../helpers/wait.ts';
import { afterEach, expect, it } from 'vitest';
import { DiscordChannel } from '../../src/bot/discord/discord-channel.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig, mcpConfig } from '../helpers/mcp-servers.ts';
import { createSteward, planReply, recordingTools, type RecordedCall } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
let stopOther: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopOther?.();
  await h?.close();
  h = undefined;
  stopOther = undefined;
});

it('two processes on one bot token: a mention starts one run, a press is answered and decided once', async () => {
  const plan = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });
  const reviewed = everythingStdioConfig({ overrides: { risk: 'medium' } });
  h = await startDiscordHarness({
    db: 'postgres',
    servers: [reviewed],
    script: byRole({ planner: [plan], synthesizer: ['Said hi.'] }),
  });
  // The second process: its own store (owner), MCP host, engine and gateway session, on the same database.
  const { host } = await McpHost.connect(mcpConfig(reviewed));
  const calls: RecordedCall[] = [];
  const logs: string[] = [];
  const channel = new DiscordChannel({
    token: h.discord.token,
    apiUrl: h.discord.apiUrl,
    guildId: h.discord.guildId,
    messageContent: true,
    log: (level, m) => logs.push(`${level} ${m}`),
  });
  const steward = createSteward({
    llm: h.llm,
    tools: recordingTools(host, calls),
    store: new PgRunStore(h.db.db),
    notifier: channel,
    log: (level, m) => logs.push(`${level} ${m}`),
    settings: { approvers: [] },
    signals: h.db.signals,
  });
  await channel.start(steward);
  // As the app starts it: without its ownership watch, a run this process took would keep a lease it never renews
  // and never hear of a press the other process forwards to it (the report then waited for the lease to lapse).
  await steward.recover();
  stopOther = async () => {
    await steward.shutdown();
    await channel.stop();
    await host.close();
  };
  // The first process recovers as the app does too. Without its watch, a run it took never heard of a press the
  // other process claimed and forwarded: the report waited for the lease to lapse and the other to take the run over
  // (it failed at 20 s in two full CI runs, December 2026, whenever the processes split the mention and the press).
  await h.steward.recover();
  expect(h.discord.identifies).toBe(2);

  const thread = await h.mention('say hi');
  const card = await h.waitFor('the card', () => h!.card(thread));
  await Promise.all([h.channel.settled(), channel.settled()]);
  expect(await h.db.db.selectFrom('runs').select('id').execute()).toHaveLength(1);
  expect(h.discord.threads).toHaveLength(1);
  expect(h.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(1);

  const press = await h.press(card, 'approve');
  // Whichever process claims the press, the run's owner hears of it at once: no waiting for a lease to lapse.
  await waitUntil('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said hi.')), {
    details: () => `process A:\n${h!.logs.join('\n')}\nprocess B:\n${logs.join('\n')}`,
  });
  await Promise.all([h.steward.idle(), steward.idle()]);
  // One answer to Discord for the press (a second would be refused: already acknowledged), one decision, one call.
  expect(h.discord.interactionResponses(press).filter((c) => c.route.endsWith('/callback'))).toHaveLength(1);
  expect(h.discord.calls.filter((c) => c.code === 40060)).toEqual([]);
  const [run] = await h.db.db.selectFrom('runs').select('id').execute();
  expect((await h.store.listDecisions(run!.id)).map((d) => [d.action, d.accepted])).toEqual([['approve', true]]);
  expect([...h.calls, ...calls].map((c) => c.name)).toEqual(['everything.echo']);
});
