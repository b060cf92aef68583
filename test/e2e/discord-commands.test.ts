/**
 * `/steward` and direct messages end to end on Discord (mirrors slack-commands.test.ts and slack-dm.test.ts): help,
 * `ask` posting the request with a thread for the run, run lists linking to their threads, and a DM as a conversation
 * of its own. Registration and the review and suggestion preferences are test/chat/preferences-spec.ts.
 */
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, recordWorkflowRequests } from './harness.ts';
import { OPS_ROLE, shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const say = (message: string, summary = `Say ${message}`) =>
  planReply([{ id: 'say', tool: 'everything.echo', args: { message } }], { summary });
/** The one private answer an interaction got, once it is no longer "thinking". */
const privately = (harness: DiscordHarness, id: string) =>
  harness.waitFor('the private answer', () => harness.privateTexts(id).find(Boolean));

describe('the /steward command, end to end on postgres', () => {
  it('help answers privately, naming the subcommands', async () => {
    h = await startDiscordHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    const posted = () => h!.discord.messagesIn(h!.discord.channelId).filter((m) => !m.ephemeral).length;
    const before = posted();
    const helpText = await privately(h, await h.slash('help'));
    for (const sub of ['/steward ask', '/steward status', '/steward runs', '/steward review', '/steward suggestions'])
      expect(helpText).toContain(sub);
    expect(posted()).toBe(before);
  });

  it('ask posts who asked what, starts a thread on that message with the card in it; status and runs list it privately with a link', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [say('hi')], synthesizer: ['Said hi.'] }),
    });
    const none = await h.slash('status');
    expect(await privately(h, none)).toContain('You have no runs in progress.');

    const ask = await h.slash('ask', { request: 'say hi @everyone' });
    const top = await h.waitFor('the request in the channel', () =>
      h!.discord.messagesIn(h!.discord.channelId).find((m) => m.interactionId === ask && m.message.content),
    );
    expect(top.ephemeral).toBe(false);
    expect(top.message.content).toMatch(new RegExp(`^<@${h.ada.id}> asked: say hi `));
    expect(top.message.content).not.toMatch(/(^|[^\\\u200b])@everyone/);
    const thread = await h.waitFor('the thread on the request', () =>
      h!.discord.threads.find((t) => t.id === top.message.id),
    );
    expect('parent_id' in thread && thread.parent_id).toBe(h.discord.channelId);
    expect(thread.name).toBe('say hi @everyone');
    const card = await h.waitFor('the card in the thread', () => h!.card(thread.id));
    expect(shownText(card.message)).toContain('Say hi');
    expect(h.llm.requests[0]!.lastUserText).toContain('say hi @everyone');
    const run = await onlyRun(h);

    const link = `https://discord.com/channels/${h.discord.guildId}/${thread.id}`;
    const status = await privately(h, await h.slash('status'));
    expect(status).toContain('**Your runs in progress**');
    expect(status).toContain(`📋 **waiting for review** · [Say hi](${link})`);
    const bobs = await privately(h, await h.slash('status', {}, { user: h.bob }));
    expect(bobs).toContain('You have no runs in progress.');

    await h.press(card, 'approve');
    await h.waitFor('the report', () => h!.replies(thread.id).find((m) => shownText(m.message).includes('Said hi.')));
    await h.steward.idle();
    expect(await privately(h, await h.slash('status'))).toContain('You have no runs in progress.');
    const runs = await privately(h, await h.slash('runs'));
    expect(runs).toContain('**Your latest runs**');
    expect(runs).toContain(`[Say hi](${link})`);
    expect((await h.store.getRun(run.id))!.status).toBe('completed');
  });
});

describe('/steward dashboard, end to end on postgres', () => {
  it('answers only the asker with a sign-in link bound to them', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({}),
      dashboardUrl: 'https://steward.example.com',
    });
    const text = await privately(h, await h.slash('dashboard', {}, { user: h.bob }));
    const token = /<https:\/\/steward\.example\.com\/signin\/([\w-]+)>/.exec(text)?.[1];
    expect(token).toBeTruthy();
    const links = new PgDashboard(h.db.db, { baseUrl: 'https://steward.example.com' });
    expect(await links.consumeLink(token!, new Date())).toMatchObject({
      channel: 'discord',
      id: h.bob.id,
      approverRoles: [],
    });
    // Holding the Ops role (an approver role here) as they ask: the link says so, and the dashboard shows every run.
    const asOps = await privately(h, await h.slash('dashboard', {}, { user: h.bob, roles: [OPS_ROLE] }));
    const opsToken = /<https:\/\/steward\.example\.com\/signin\/([\w-]+)>/.exec(asOps)?.[1];
    expect(await links.consumeLink(opsToken!, new Date())).toMatchObject({ id: h.bob.id, approverRoles: [OPS_ROLE] });
  });
});

describe('/steward workflow, end to end on postgres', () => {
  it('is registered with the others; its command goes to the workflow commands and is answered only to the asker', async () => {
    h = await startDiscordHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    const registered = h.discord.registeredCommands(h.discord.guildId) as Array<{
      options: Array<{ name: string; options?: Array<{ name: string; required?: boolean }> }>;
    }>;
    const workflow = registered[0]!.options.find((o) => o.name === 'workflow');
    expect(workflow?.options).toEqual([expect.objectContaining({ name: 'command', required: true })]);
    const help = await privately(h, await h.slash('help'));
    for (const form of ['save <name>', 'workflows', 'workflow <name>', 'fork <name> <new name>', 'schedule <name>'])
      expect(help).toContain(`\`${form}`);

    const asked = recordWorkflowRequests(h.steward);
    const posted = () => h!.discord.messagesIn(h!.discord.channelId).filter((m) => !m.ephemeral).length;
    const before = posted();
    // Nothing to save or schedule yet: each answer says so, to the asker alone.
    const typed = ['save digest', 'schedule digest "0 9 * * MON" Europe/Berlin', 'workflows', 'fork a b'];
    const answers = [
      /^You have no run with an approved plan to save yet/,
      /^There is no workflow named "digest"\./,
      /^No workflows yet\./,
      /^There is no workflow named "a"\./,
    ];
    for (const [i, command] of typed.entries()) {
      const id = await h.slash('workflow', { command });
      expect(await privately(h, id)).toMatch(answers[i]!);
    }
    // Anything else is not sent on: help says what a workflow command starts with.
    expect(await privately(h, await h.slash('workflow', { command: 'frobnicate' }))).toMatch(
      /^A workflow command starts with save, workflows, workflow, fork or schedule\./,
    );
    // The words as typed, from the person, about the conversation the command was used in.
    expect(asked.map(({ actor, ...rest }) => ({ actor: `${actor.channel}:${actor.id}`, ...rest }))).toEqual(
      typed.map((text) => ({
        actor: `discord:${h!.ada.id}`,
        conversation: { channel: 'discord', key: `${h!.discord.guildId}:${h!.discord.channelId}` },
        text,
      })),
    );
    expect(posted()).toBe(before);
    expect(h.llm.requests).toEqual([]);
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toEqual([]);
  });
});

describe('discord direct messages, end to end on postgres', () => {
  it('a DM without a mention gets its card in the DM; a reply there amends; /steward ask there starts a second run', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({
        planner: [say('hi', 'Say hi'), say('hi and bye', 'Say hi and bye'), say('yo', 'Say yo')],
        classifier: ['amend'],
      }),
    });
    const dm = await h.dm('say hi');
    const card = await h.waitFor('the card in the DM', () => h!.card(dm));
    expect(shownText(card.message)).toContain('Say hi');
    // Nothing went to the server's channel or a thread.
    expect(h.discord.threads).toEqual([]);

    await h.dm('also say bye');
    await h.waitFor('revision 1 on the card', () => shownText(h!.card(dm).message).includes('revision 1'));
    expect(h.card(dm).message.id).toBe(card.message.id);
    expect(shownText(h.card(dm).message)).toContain('Say hi and bye');
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'classifier', 'planner']);

    // `ask` is a new request even though the DM's run is still waiting: no classifier, a second run and card.
    const ask = await h.slash('ask', { request: 'say yo' }, { channelId: dm });
    await h.waitFor('the second card', () =>
      h!.discord
        .messagesIn(dm)
        .some((m) => m.message.id !== card.message.id && shownText(m.message).includes('Say yo')),
    );
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'classifier', 'planner', 'planner']);
    expect(h.discord.messagesIn(dm).find((m) => m.interactionId === ask)?.message.content).toMatch(/asked: say yo/);
    const runs = await h.db.db.selectFrom('runs').select(['id', 'status']).execute();
    expect(runs).toHaveLength(2);
    expect(runs.map((r) => r.status)).toEqual(['awaiting_review', 'awaiting_review']);
    // The first card was not touched by the new request.
    expect(shownText(h.card(dm).message)).toContain('Say hi and bye');
  });
});

describe('/steward prompt, end to end on postgres (issue 29)', () => {
  it("lists server-everything's prompts privately, and posts a request started from one, marked as the server's words, with a thread for its run", async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [say('sunny')] }),
    });
    const listed = await privately(h, await h.slash('prompt'));
    expect(listed).toContain("names and descriptions are the servers' words");
    expect(listed).toContain('everything/args-prompt city=… [state=…]: A prompt with two arguments');
    const missing = await privately(h, await h.slash('prompt', { choose: 'everything/args-prompt' }));
    expect(missing).toBe('The prompt everything/args-prompt needs city=….');

    const chose = await h.slash('prompt', { choose: 'everything/args-prompt city=Paris state="Île de France"' });
    const top = await h.waitFor('the request in the channel', () =>
      h!.discord
        .messagesIn(h!.discord.channelId)
        .find((m) => m.interactionId === chose && !m.ephemeral && m.message.content.includes('>>>')),
    );
    expect(top.message.content).toBe(
      `<@${h.ada.id}> Started from the prompt everything/args-prompt: the text below is that MCP server's words, not yours or Steward's; the plan made from it is reviewed as any other.\n>>> What's weather in Paris, Île de France?`,
    );
    const thread = await h.waitFor('the thread on the request', () =>
      h!.discord.threads.find((t) => t.id === top.message.id),
    );
    await h.waitFor('the card in the thread', () => h!.card(thread.id));
    expect(h.llm.requests[0]!.lastUserText).toContain("What's weather in Paris, Île de France?");
    expect((await onlyRun(h)).request).toBe("What's weather in Paris, Île de France?");
  });
});
