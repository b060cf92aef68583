/**
 * Replies in a run's Discord thread without the Message Content intent (mirrors slack-mention-only.test.ts; replies
 * with it are test/chat/thread-spec.ts): only a reply that mentions Steward reaches it, and asking for an intent the
 * app may not have fails at start with a sentence.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundHandler } from '../../src/engine/channel.ts';
import { DiscordChannel } from '../../src/bot/discord/discord-channel.ts';
import { startFakeDiscord } from '../fakes/fake-discord-server.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const roles = (harness: DiscordHarness) => harness.llm.requests.map((r) => r.role);
const say = (message: string, summary: string) =>
  planReply([{ id: 'say', tool: 'everything.echo', args: { message } }], { summary });

describe('discord without the Message Content intent, end to end on postgres', () => {
  it('a plain reply in the thread reaches nothing; a reply that mentions Steward amends the plan', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      messageContent: false,
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [say('hi', 'Say hi'), say('hi and bye', 'Say hi and bye')], classifier: ['amend'] }),
    });
    const thread = await h.mention('say hi');
    const card = await h.waitFor('the card', () => h!.card(thread));

    // Discord sends a message that does not mention the bot with empty content: there is nothing to act on.
    await h.reply(thread, 'also say bye');
    expect(roles(h)).toEqual(['planner']);
    expect(h.replies(thread)).toEqual([]);
    expect(shownText(h.card(thread).message)).toContain('revision 0');

    await h.reply(thread, 'also say bye', { mention: true });
    await h.waitFor('revision 1 on the card', () => shownText(h!.card(thread).message).includes('revision 1'));
    expect(h.card(thread).message.id).toBe(card.message.id);
    expect(shownText(h.card(thread).message)).toContain('Say hi and bye');
    expect(roles(h)).toEqual(['planner', 'classifier', 'planner']);
    // The mention itself is not part of what the planner was asked.
    expect(h.llm.requests[2]!.lastUserText).toContain('also say bye');
    expect(h.llm.requests[2]!.lastUserText).not.toContain(`<@${h.discord.botUser.id}>`);
  });

  it('asking for the intent when the app may not have it fails at start with a sentence saying what to do', async () => {
    const discord = await startFakeDiscord({ allowMessageContent: false });
    const logs: string[] = [];
    const channel = new DiscordChannel({
      token: discord.token,
      apiUrl: discord.apiUrl,
      guildId: discord.guildId,
      messageContent: true,
      log: (level, message) => logs.push(`${level} ${message}`),
    });
    try {
      // Start fails at log-in, before any event could reach the handler.
      const error = await channel.start({} as InboundHandler).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(error?.message).toMatch(
        /^Discord refused the Message Content intent: turn it on .* DISCORD_MESSAGE_CONTENT=off/,
      );
      expect(error?.message).not.toContain(discord.token);
      expect(discord.identifies).toBe(0);
    } finally {
      await channel.stop();
      await discord.close();
    }
  });
});
