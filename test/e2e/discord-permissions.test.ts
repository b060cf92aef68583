/**
 * Steward in a channel where a server's moderators took permissions from it (the fake computes them from roles and the
 * channel's overwrites and refuses calls without them, 403 / 50013, as Discord does): it answers where it can, tells
 * the person what is missing and who can grant it, logs the missing permission by name, and never makes the call
 * Discord would refuse (the harness's close fails on any refused call).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PermissionFlagsBits as P } from 'discord.js';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const sayHi = () =>
  startDiscordHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({
      planner: [planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' })],
      synthesizer: ['Said hi.'],
    }),
  });

/** A moderator's overwrite for @everyone in the harness's channel (it applies to the bot, whatever its role grants). */
function deny(harness: DiscordHarness, permissions: bigint): void {
  harness.discord.setOverwrite(harness.discord.channelId, { id: harness.discord.guildId, type: 0, deny: permissions });
}

/** Mentions Steward in the channel (not waiting for a thread, which may never come). */
function mention(harness: DiscordHarness, text: string): string {
  const message = harness.discord.messageCreate({ content: text, mentionsBot: true });
  harness.discord.dispatch('MESSAGE_CREATE', message);
  return message.id;
}

const runIn = (harness: DiscordHarness, channelId: string) =>
  harness.db.db
    .selectFrom('runs')
    .select('id')
    .where('conversation_key', '=', `${harness.discord.guildId}:${channelId}`)
    .executeTakeFirst();

describe('discord permissions, end to end on postgres', () => {
  it('without Create Public Threads, says so in the channel, names the permission, and runs the request there', async () => {
    h = await sayHi();
    deny(h, P.CreatePublicThreads);
    expect(h.discord.botPermissionsIn(h.discord.channelId)! & P.CreatePublicThreads).toBe(0n);
    mention(h, 'say hi');
    const channel = h.discord.channelId;
    const notice = await h.waitFor('the notice in the channel', () =>
      h!.discord.messagesIn(channel).find((m) => m.message.content.includes("can't start a thread")),
    );
    expect(notice.message.content).toContain('**Create Public Threads**');
    expect(notice.message.content).toContain("channel's settings");
    await h.waitFor('the run in the channel', () => runIn(h!, channel));
    await h.waitFor('the report', () =>
      h!.discord.messagesIn(channel).find((m) => shownText(m.message).includes('Said hi.')),
    );
    expect(h.discord.threads).toEqual([]);
    expect(h.logs.some((l) => /missing Create Public Threads; answering in the channel/.test(l))).toBe(true);
    expect(h.discord.calls.filter((c) => c.status === 403)).toEqual([]);
  });

  it('a thread Discord refuses for a permission the gateway had not shown yet: the same notice, the run in the channel', async () => {
    h = await sayHi();
    const thread = { method: 'POST', route: '/channels/:channel/messages/:message/threads' };
    h.discord.refuse(thread, { times: 1, status: 403, code: 50013, message: 'Missing Permissions' });
    mention(h, 'say hi');
    const channel = h.discord.channelId;
    const notice = await h.waitFor('the notice in the channel', () =>
      h!.discord.messagesIn(channel).find((m) => m.message.content.includes("can't start a thread")),
    );
    expect(notice.message.content).toContain('**Create Public Threads**');
    await h.waitFor('the report', () =>
      h!.discord.messagesIn(channel).find((m) => shownText(m.message).includes('Said hi.')),
    );
    expect(h.discord.callsTo(thread.method, thread.route).map((c) => c.status)).toEqual([403]);
  });

  it('without Send Messages in Threads, starts no thread it could not write in and answers in the channel', async () => {
    h = await sayHi();
    deny(h, P.SendMessagesInThreads);
    mention(h, 'say hi');
    const channel = h.discord.channelId;
    const notice = await h.waitFor('the notice in the channel', () =>
      h!.discord.messagesIn(channel).find((m) => m.message.content.includes("can't start a thread")),
    );
    expect(notice.message.content).toContain('**Send Messages in Threads**');
    await h.waitFor('the report', () =>
      h!.discord.messagesIn(channel).find((m) => shownText(m.message).includes('Said hi.')),
    );
    expect(h.discord.threads).toEqual([]);
    expect(h.discord.calls.filter((c) => c.status === 403)).toEqual([]);
  });

  it('able to write neither in a thread nor in the channel, tells the person by DM what to grant and starts nothing', async () => {
    h = await sayHi();
    deny(h, P.SendMessagesInThreads | P.SendMessages);
    mention(h, 'say hi');
    const dm = await h.waitFor('a direct message to the person', () => h!.discord.dmChannelOf(h!.ada.id));
    const told = await h.waitFor('the explanation', () => h!.discord.messagesIn(dm)[0]);
    expect(told.message.content).toContain('**Send Messages in Threads** and **Send Messages**');
    expect(told.message.content).toContain(`<#${h.discord.channelId}>`);
    expect(told.message.content).toContain('did not start your request');
    expect(
      h.logs.some((l) => l.includes('missing Send Messages in Threads, Send Messages; the request was not started')),
    ).toBe(true);
    await h.steward.idle();
    expect(h.discord.threads).toEqual([]);
    expect(await runIn(h, h.discord.channelId)).toBeUndefined();
    expect(h.llm.requests).toEqual([]);
    expect(h.discord.calls.filter((c) => c.status === 403)).toEqual([]);
  });

  it('/steward ask without Create Public Threads: a private note names the permission; the run goes in the channel', async () => {
    h = await sayHi();
    deny(h, P.CreatePublicThreads);
    const id = await h.slash('ask', { request: 'say hi' });
    const note = await h.waitFor('the private note', () =>
      h!.privateTexts(id).find((t) => t.includes("can't start a thread")),
    );
    expect(note).toContain('**Create Public Threads**');
    await h.waitFor('the report in the channel', () =>
      h!.discord.messagesIn(h!.discord.channelId).find((m) => shownText(m.message).includes('Said hi.')),
    );
    expect(h.discord.threads).toEqual([]);
    expect(h.discord.calls.filter((c) => c.status === 403)).toEqual([]);
  });
});
