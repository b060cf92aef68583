/**
 * Guards (test/chat/guards-spec.ts) on Slack; what only Slack has (signatures, event retries, message subtypes, a
 * press naming no run) is in test/e2e/slack-guards.test.ts.
 */
import { expect } from 'vitest';
import { guardsSpec } from './guards-spec.ts';
import { slackChat } from './slack-chat.ts';

guardsSpec('slack', slackChat, {
  strangerRefused({ h }, { approve }) {
    // The refusals are the only thing Slack was asked to show: nothing public, no modal.
    expect(h.slack.calls.slice(Number(approve.id)).map((c) => c.method)).toEqual([
      'chat.postEphemeral',
      'chat.postEphemeral',
    ]);
  },
});
