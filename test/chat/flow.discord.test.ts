/**
 * The main flow (test/chat/flow-spec.ts) on Discord, with what only Discord shows: the thread started on the request,
 * typing before the first message, interaction answers within 3 s, and its mention syntax.
 */
import { expect } from 'vitest';
import { discordChat } from './discord-chat.ts';
import { flowSpec } from './flow-spec.ts';

flowSpec('discord', discordChat, {
  pings: '@everyone <@123456789012345678>',
  requested({ h }, thread) {
    // The thread belongs to the request's message, and Steward showed it was working before its first message.
    const created = h.discord.threads.find((t) => t.id === thread)!;
    expect('parent_id' in created && created.parent_id).toBe(h.discord.channelId);
    expect(created.name).toBe('run the slow job and tell me');
    const typing = h.discord.callsTo('POST', '/channels/:channel/typing');
    expect(typing.length).toBeGreaterThanOrEqual(1);
    expect(typing[0]!.tick).toBeLessThan(h.discord.callsTo('POST', '/channels/:channel/messages')[0]!.tick);
  },
  approved({ h }, press) {
    // Answered well within Discord's 3 s, by a deferred update (the card itself is edited afterwards).
    const interaction = h.discord.interaction(press.id)!;
    expect(h.discord.interactionResponses(press.id)[0]!.at - interaction.dispatchedAt).toBeLessThan(3_000);
    expect(interaction.callbackType).toBe(6);
  },
  reported({ h }, { report }) {
    // The report's mentions are inert text (and the harness fails on any message that could ping).
    expect(h.discord.messages.get(report.id)!.message.content).not.toMatch(/(^|[^\\])@everyone/);
  },
  amendOpened({ h }, { press }) {
    expect(h.discord.interaction(press.id)!.callbackType).toBe(9);
    expect(h.lastModal()!.title.length).toBeLessThanOrEqual(45);
  },
});
