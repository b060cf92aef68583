/**
 * Never silent on Discord: a requester Steward cannot answer in a thread is told by direct message, and a private
 * answer past a press token's life comes by DM. A planner that fails is test/chat/thread-spec.ts, on both platforms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echo = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

describe('discord: the requester is never left without an answer, end to end on postgres', () => {
  it('when Discord refuses Steward the thread, the requester is told by direct message', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [echo] }),
    });
    const mention = h.discord.messageCreate({ content: 'say hi', mentionsBot: true });
    // Steward may start the thread but not post in it (a permission taken away there).
    h.discord.refuse(
      { method: 'POST', route: new RegExp(`/channels/${mention.id}/messages$`) },
      { times: 1_000, status: 403, code: 50013, message: 'Missing Permissions' },
    );
    h.discord.dispatch('MESSAGE_CREATE', mention);
    const run = await h.waitFor('the run', () => onlyRun(h!));
    await h.waitFor('the failed run', async () => (await h!.store.getRun(run.id))?.status === 'failed');
    const told = await h.waitFor('the direct message', () =>
      [...h!.discord.messages.values()].find(
        (m) => m.message.author.id === h!.discord.botUser.id && shownText(m.message).includes('Please ask again'),
      ),
    );
    const dm = h.discord.callsTo('POST', '/users/@me/channels');
    expect(dm.map((c) => c.body)).toEqual([{ recipient_id: h.ada.id }]);
    expect(told.message.channel_id).not.toBe(mention.id);
    expect(shownText(told.message)).toContain('Missing Permissions');
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner']);
  });

  it('a private answer past the 15 minutes a press token lives comes by direct message, never on the old token', async () => {
    let skew = 0;
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [echo] }),
      now: () => Date.now() + skew,
    });
    const thread = await h.mention('say hi');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const run = await onlyRun(h);
    const press = await h.press(card, 'history');
    await h.waitFor('the history, privately', () => h!.privateTexts(press).length === 1);
    expect(h.discord.callsTo('POST', '/users/@me/channels')).toEqual([]);

    // Sixteen minutes on, something private for Ada comes up with no new press: the old token is not used.
    skew = 16 * 60_000;
    await h.steward.history(run.id, { id: h.ada.id, channel: 'discord' });
    const dm = await h.waitFor('a direct message', () => h!.discord.callsTo('POST', '/users/@me/channels')[0]);
    expect(dm.body).toEqual({ recipient_id: h.ada.id });
    expect(
      h.discord.interactionResponses(press).filter((c) => c.at - h!.discord.interaction(press)!.dispatchedAt > 60_000),
    ).toEqual([]);
    expect(h.privateTexts(press)).toHaveLength(1);
  });
});
