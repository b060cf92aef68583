/**
 * `/steward review` and `suggestions` (test/chat/preferences-spec.ts) on Discord, where `/steward` is registered for
 * the server at start.
 */
import { expect } from 'vitest';
import { discordChat } from './discord-chat.ts';
import { preferencesSpec } from './preferences-spec.ts';

preferencesSpec('discord', discordChat, {
  started({ h }) {
    const registered = h.discord.registeredCommands(h.discord.guildId) as {
      name: string;
      options: { name: string }[];
    }[];
    expect(registered.map((c) => c.name)).toEqual(['steward']);
    expect(registered[0]!.options.map((o) => o.name)).toEqual([
      'ask',
      'status',
      'runs',
      'review',
      'suggestions',
      'workflow',
      'assistant',
      'dashboard',
      'help',
    ]);
  },
});
