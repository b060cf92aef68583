/**
 * Guards (test/chat/guards-spec.ts) on Discord: an approver by role may decide, and a long report comes as at most
 * three messages; what only Discord has (gateway resumes, role mentions, huge outputs) is in
 * test/e2e/discord-guards.test.ts.
 */
import { expect } from 'vitest';
import { OPS_ROLE } from '../e2e/discord-harness.ts';
import { discordChat } from './discord-chat.ts';
import { guardsSpec } from './guards-spec.ts';

guardsSpec('discord', discordChat, {
  // Bob holds the Ops role: as an approver by role, his press counts.
  approverApproves: ({ h }, card) =>
    h.press(h.discord.messages.get(card.id)!, 'approve', { user: h.bob, roles: [OPS_ROLE] }),
  strangerRefused({ h }, { amend }) {
    // Amend was answered by a deferred update, not a modal, and nothing public was posted about it.
    expect(h.discord.interaction(amend.id)!.callbackType).toBe(6);
  },
  decidedOnce({ h }) {
    expect(h.calls.map((c) => c.name)).toEqual(['everything.echo']);
  },
  longReport(_, report) {
    // The long report came as three messages, the last one saying what was cut.
    expect(report).toHaveLength(3);
    expect(report[2]!.text).toMatch(/cut: [\d,]+ more characters/);
  },
});
