/**
 * `/steward review` and `suggestions` (test/chat/preferences-spec.ts) on Discord, where `/steward` is registered for
 * the server at start.
 */
import { expect } from 'vitest';
import { STEWARD_COMMAND } from '../../src/bot/discord/discord-command-text.ts';
import { discordChat } from './discord-chat.ts';
import { preferencesSpec } from './preferences-spec.ts';

preferencesSpec('discord', discordChat, {
  started({ h }) {
    const registered = h.discord.registeredCommands(h.discord.guildId) as {
      name: string;
      options: { name: string }[];
    }[];
    expect(registered.map((c) => c.name)).toEqual(['steward', 'Ask Steward']);
    // What Discord received is the command as defined (its options are checked in discord-command-text.test.ts).
    expect(registered[0]!.options.map((o) => o.name)).toEqual(STEWARD_COMMAND.options?.map((o) => o.name));
  },
});
