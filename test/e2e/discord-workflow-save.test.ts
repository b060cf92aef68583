/**
 * "Save as workflow" through the real discord.js client: the button on a completed run's card, the name form it
 * opens for the requester or an approver (a bystander is told privately), and the submission reaching the workflow
 * commands, whose answer comes back privately.
 */
import type { APIUser } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCustomId } from '../../src/bot/discord/discord-actions.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, recordWorkflowRequests } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const say = (message: string) =>
  planReply([{ id: 'say', tool: 'everything.echo', args: { message } }], { summary: `Say ${message}` });

/**
 * Submits the form opened last from the card in `thread`, as Discord sends it: from that message, in that thread
 * (the harness's `submitModal` leaves the channel at the server's text channel).
 */
async function submitInThread(harness: DiscordHarness, thread: string, name: string, user?: APIUser) {
  const customId = harness.lastModal()?.custom_id;
  if (!customId) throw new Error('no modal was opened');
  const card = harness.card(thread);
  const fields = { 'workflow-name': name };
  const payload = harness.discord.modalSubmit({
    customId,
    fields,
    messageId: card.message.id,
    channelId: thread,
    user,
  });
  harness.discord.dispatch('INTERACTION_CREATE', payload);
  const id = String(payload.id);
  await harness.waitFor('the form to be answered', () => harness.discord.interaction(id)?.callbackType !== undefined);
  await harness.channel.settled();
  return id;
}

describe('Save as workflow on Discord, end to end on postgres', () => {
  it('on a completed run, opens a name form for the requester or an approver and answers the save privately', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [say('hi')], synthesizer: ['Said hi.'] }),
    });
    const thread = await h.mention('say hi');
    const card = await h.waitFor('the card', () => h!.card(thread));
    expect(h.buttons(card)).not.toContain('wfsave');
    await h.press(card, 'approve');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said hi.')));
    await h.waitFor('the save button', () => h!.buttons(card).includes('wfsave'));
    expect(h.buttons(card)).toEqual(['wfsave']);
    const run = await onlyRun(h);
    const asked = recordWorkflowRequests(h.steward);
    const privately = (id: string) => h!.waitFor('the private answer', () => h!.privateTexts(id).find(Boolean));
    const modals = () => h!.discord.calls.filter((c) => (c.body as { type?: number } | null)?.type === 9).length;

    // A bystander is told privately and gets no form.
    const bobs = await h.press(card, 'wfsave', { user: h.bob });
    expect(await privately(bobs)).toBe(
      'Only the person who asked for this run or an approver can save it as a workflow.',
    );
    expect(modals()).toBe(0);

    // The requester gets the form; a name of two words is refused privately and nothing reaches the engine.
    await h.press(card, 'wfsave');
    expect(parseCustomId(h.lastModal()?.custom_id)).toEqual({ kind: 'wfsave-modal', runId: run.id, revision: 0 });
    const twoWords = await submitInThread(h, thread, 'my digest');
    expect(await privately(twoWords)).toMatch(
      /^The name is one word, such as digest or nightly-report\. Nothing was saved\./,
    );
    expect(asked).toEqual([]);

    const posted = () => h!.discord.messagesIn(thread).filter((m) => !m.ephemeral).length;
    const before = posted();
    await h.press(card, 'wfsave');
    const saved = await submitInThread(h, thread, 'digest');
    expect(await privately(saved)).toMatch(/^Saved workflow "digest" \(version 1\) from run /);
    expect(asked.map(({ actor, ...rest }) => ({ actor: `${actor.channel}:${actor.id}`, ...rest }))).toEqual([
      {
        actor: `discord:${h.ada.id}`,
        conversation: { channel: 'discord', key: `${h.discord.guildId}:${thread}` },
        text: 'save digest',
        runId: run.id,
      },
    ]);
    expect(posted()).toBe(before);

    // An approver may save someone else's run too.
    await h.press(card, 'wfsave', { user: h.boss });
    const boss = await submitInThread(h, thread, 'digest-2', h.boss);
    expect(await privately(boss)).toMatch(/^Saved workflow "digest-2" \(version 1\) from run /);
    expect(asked.map((r) => [r.actor.id, r.text, r.runId])).toEqual([
      [h.ada.id, 'save digest', run.id],
      [h.boss.id, 'save digest-2', run.id],
    ]);
  });
});
