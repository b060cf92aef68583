/** Thread replies (test/chat/thread-spec.ts) on Slack; its loading status and 👀 sign: slack-never-silent.test.ts. */
import { expect } from 'vitest';
import { slackChat } from './slack-chat.ts';
import { threadSpec } from './thread-spec.ts';

threadSpec('slack', slackChat, {
  async plannerFailed({ h }) {
    // The "is planning…" sign is gone.
    await h.channel.settled();
    expect(h.slack.statuses.size).toBe(0);
  },
});
