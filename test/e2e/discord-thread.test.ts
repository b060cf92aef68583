/**
 * Replies in a run's Discord thread end to end (mirrors slack-thread.test.ts and slack-mention-only.test.ts): with
 * the Message Content intent a plain reply reaches Steward while the card is live; without it only a reply that
 * mentions Steward does, and asking for an intent the app may not have fails at start with a sentence.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundHandler } from '../../src/engine/channel.ts';
import { DiscordChannel } from '../../src/bot/discord/discord-channel.ts';
import { startFakeDiscord } from '../fakes/fake-discord-server.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const roles = (harness: DiscordHarness) => harness.llm.requests.map((r) => r.role);
const say = (message: string, summary: string) =>
  planReply([{ id: 'say', tool: 'everything.echo', args: { message } }], { summary });
const slowThenSay = (message: string) =>
  planReply([
    { id: 'one', tool: 'everything.trigger-long-running-operation', args: { duration: 2, steps: 4 } },
    { id: 'two', tool: 'everything.echo', args: { message }, dependsOn: ['one'] },
  ]);

describe('discord thread replies, end to end on postgres', () => {
  it('a reply while the plan waits for review amends the same card', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [say('hi', 'Say hi'), say('hi and bye', 'Say hi and bye')], classifier: ['amend'] }),
    });
    const thread = await h.mention('say hi');
    const card = await h.waitFor('the card', () => h!.card(thread));

    await h.reply(thread, 'also say bye');
    await h.waitFor('revision 1 on the card', () => shownText(h!.card(thread).message).includes('revision 1'));
    expect(h.card(thread).message.id).toBe(card.message.id);
    expect(shownText(h.card(thread).message)).toContain('Say hi and bye');
    expect(roles(h)).toEqual(['planner', 'classifier', 'planner']);
    expect(h.llm.requests[2]!.lastUserText).toContain('also say bye');
  });

  it('a status question while running is answered in the thread from the database, with no planner call', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [slowThenSay('done')], classifier: ['status'], synthesizer: ['Done.'] }),
    });
    const thread = await h.mention('slow job then say done');
    await h.waitFor('the running card', () => shownText(h!.card(thread).message).includes('▶️ Running'));

    await h.reply(thread, 'how is it going?', { author: h.bob });
    const answer = await h.waitFor('the status answer', () =>
      h!.replies(thread).find((m) => /steps finished/.test(shownText(m.message))),
    );
    expect(shownText(answer.message)).toMatch(/0\/2 steps finished/);
    expect(roles(h)).toEqual(['planner', 'classifier']);
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Done.')));
    await h.steward.idle();
  });

  it('an amendment by reply while running re-plans only the steps not yet run; the card keeps what ran', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: [slowThenSay('hi'), slowThenSay('bye')],
        classifier: ['amend'],
        synthesizer: ['Said bye.'],
      }),
    });
    const thread = await h.mention('slow job then say hi');
    await h.waitFor('the running card', () => shownText(h!.card(thread).message).includes('⏳'));
    const run = await onlyRun(h);

    await h.reply(thread, 'make the last step say bye instead');
    await h.waitFor('revision 1 on the card', () => shownText(h!.card(thread).message).includes('revision 1'));
    // Step one kept its progress: it is not shown as not yet started in the new revision.
    expect(shownText(h.card(thread).message)).not.toMatch(/⚪ \*\*1\.\*\*/);
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said bye.')));
    await h.steward.idle();
    const attempts = await h.store.listStepAttempts(run.id);
    expect(attempts.filter((a) => a.stepId === 'one')).toHaveLength(1);
    expect(attempts.find((a) => a.stepId === 'two')).toMatchObject({ status: 'succeeded', args: { message: 'bye' } });
  });

  it('chatter classified as unrelated is left alone, and replies after the run ended are not for Steward', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [slowThenSay('x')], classifier: ['unrelated'], synthesizer: ['Done.'] }),
    });
    const thread = await h.mention('slow job then say x');
    await h.waitFor('the running card', () => shownText(h!.card(thread).message).includes('▶️ Running'));
    const before = h.replies(thread).length;
    await h.reply(thread, 'nice weather today', { author: h.bob });
    expect(roles(h)).toEqual(['planner', 'classifier']);
    expect(h.replies(thread)).toHaveLength(before);

    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Done.')));
    await h.steward.idle();
    await h.waitFor('the final card', () => shownText(h!.card(thread).message).includes('✅ Completed'));
    const after = h.replies(thread).length;
    await h.reply(thread, 'thanks!');
    expect(roles(h)).toEqual(['planner', 'classifier', 'synthesizer']);
    expect(h.replies(thread)).toHaveLength(after);
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toHaveLength(1);
  });
});

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
