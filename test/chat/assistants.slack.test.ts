/** Assistants (test/chat/assistants-spec.ts) on Slack: a person asks one by mentioning `@Steward ask ops: …`. */
import { expect } from 'vitest';
import { assistantsSpec } from './assistants-spec.ts';
import { slackChat } from './slack-chat.ts';

assistantsSpec('Slack', slackChat, {
  ask: (c, name, request) => c.mention(`ask ${name}: ${request}`),
  async setUp({ h, db }) {
    // An unknown name is answered with the names there are, and starts nothing.
    await h.mention('ask nobody: say hi');
    await h.waitFor('the answer', () =>
      h.slack.calls.find((c) => JSON.stringify(c.args).includes('There is no Assistant named \\"nobody\\"')),
    );
    expect(await db.db.selectFrom('runs').select('id').execute()).toEqual([]);
  },
});
