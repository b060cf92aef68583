/** Assistants (test/chat/assistants-spec.ts) on Discord: a person asks one by `/steward ask request: ops: …`. */
import { onlyRun } from '../e2e/harness.ts';
import { assistantsSpec } from './assistants-spec.ts';
import { discordChat } from './discord-chat.ts';

assistantsSpec('Discord', discordChat, {
  async ask(c, name, request) {
    await c.h.slash('ask', { request: `${name}: ${request}` });
    const run = await c.waitFor('the run', () => onlyRun(c).catch(() => undefined));
    return run.conversation.key.split(':')[1]!;
  },
});
