/** Thread replies (test/chat/thread-spec.ts) on Discord; without the Message Content intent: discord-thread.test.ts. */
import { expect } from 'vitest';
import { discordChat } from './discord-chat.ts';
import { threadSpec } from './thread-spec.ts';

threadSpec('discord', discordChat, {
  plannerFailed({ h }, thread) {
    // Told where Steward showed it was working: it typed in the request's thread, and only there.
    const typing = h.discord.callsTo('POST', '/channels/:channel/typing');
    expect(typing.map((c) => c.path)).toEqual([expect.stringContaining(`/channels/${thread}/typing`)]);
  },
});
