/** The main flow (test/chat/flow-spec.ts) on Slack, with what only Slack shows: its mention syntax and modals. */
import { expect } from 'vitest';
import { flowSpec } from './flow-spec.ts';
import { slackChat } from './slack-chat.ts';

flowSpec('slack', slackChat, {
  pings: '<!channel> <@U0EVE>',
  reported({ h }, { thread, report }) {
    // Only "Save as workflow" (the run completed) and the history / help menu stay on the final card.
    expect(
      h
        .card(thread)
        .blocks.filter((b) => b.type === 'actions')
        .flatMap((b) => (b.elements as { action_id: string }[]).map((e) => e.action_id)),
    ).toEqual(['steward.save-workflow', 'steward.more']);
    // Mentions in the report are defused: shown as text, never sent as Slack's syntax.
    expect(report.text).toContain('&lt;!channel&gt; &lt;@U0EVE&gt;');
    for (const c of h.slack.calls) expect(JSON.stringify(c.args)).not.toMatch(/<!channel>|<@U0EVE>/);
  },
  amendOpened({ h }, { runId }) {
    const opened = h.slack.callsOf('views.open');
    expect(opened[0]!.response.ok).toBe(true);
    expect(JSON.parse((opened[0]!.args.view as { private_metadata: string }).private_metadata)).toEqual({
      runId,
      revision: 0,
    });
  },
});
