/** Assistants (test/chat/assistants-spec.ts) on Discord: a person asks one by `/steward ask request: ops: …`. */
import { expect } from 'vitest';
import { onlyRun } from '../e2e/harness.ts';
import { assistantsSpec } from './assistants-spec.ts';
import { discordChat } from './discord-chat.ts';

assistantsSpec('Discord', discordChat, {
  async setUp({ h }) {
    // The subcommand's option also takes the command with its name repeated, as a person may type it.
    const id = await h.slash('assistant', { command: 'assistant ops grant everything.get-sum deny' }, { user: h.boss });
    expect(await h.waitFor('the answer', () => h.privateTexts(id).find(Boolean))).toBe(
      '"ops": deny the tool everything.get-sum.',
    );
  },
  async ask(c, name, request) {
    await c.h.slash('ask', { request: `${name}: ${request}` });
    const run = await c.waitFor('the run', () => onlyRun(c).catch(() => undefined));
    return run.conversation.key.split(':')[1]!;
  },
});
