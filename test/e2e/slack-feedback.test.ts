/**
 * Issue 32: feedback buttons under a report (Slack's `feedback_buttons` in a `context_actions` block, checked by the
 * fake as Slack's reference describes them). Presses are stored with the run, each person's last one counts, and the
 * dashboard's run page says who thought what.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { runPage } from '../../src/web/run-page.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import type { FakeMessage } from '../fakes/fake-slack-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createBlockAction, interactionBody } from './slack-requests.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echo = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

type Feedback = {
  type: string;
  action_id: string;
  positive_button: { value: string };
  negative_button: { value: string };
};

/** The feedback buttons element on a message (throws when it has none). */
function feedbackButtons(m: FakeMessage): Feedback {
  const block = m.blocks.find((b) => b.type === 'context_actions') as { elements: Feedback[] } | undefined;
  const found = block?.elements.find((e) => e.type === 'feedback_buttons');
  if (!found) throw new Error('no feedback buttons on the report');
  return found;
}

/** Presses 👍 (`good`) or 👎 on a report as `user`, as Slack sends a feedback_buttons press. */
async function rate(harness: SlackHarness, report: FakeMessage, user: string, rating: 'good' | 'bad') {
  const buttons = feedbackButtons(report);
  const value = (rating === 'good' ? buttons.positive_button : buttons.negative_button).value;
  const payload = {
    ...createBlockAction({
      user,
      actionId: buttons.action_id,
      value,
      channel: report.channel,
      messageTs: report.ts,
      threadTs: report.threadTs,
      triggerId: harness.slack.newTriggerId(),
      botUserId: harness.slack.botUserId,
    }),
    actions: [{ type: 'feedback_buttons', action_id: buttons.action_id, block_id: 'fb', value, action_ts: '1.0' }],
  };
  const res = await harness.post(interactionBody(payload), 'application/x-www-form-urlencoded');
  expect(res.status).toBe(200);
  await harness.channel.settled();
}

describe('feedback on a report', () => {
  it('👍 and 👎 are stored with the run, the last press of each person counts, and the run page shows them', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [echo], synthesizer: 'Said hi.' }),
    });
    const harness = h;
    const thread = await harness.mention('say hi');
    const report = await harness.waitFor('the report', () =>
      harness.replies(thread).find((m) => messageText(m).includes('Said hi.')),
    );
    await harness.steward.idle();
    const runId = await onlyRunId(harness);
    expect(feedbackButtons(report).action_id).toBe('steward.feedback');

    await rate(harness, report, 'U0ADA', 'good');
    await rate(harness, report, 'U0BOB', 'good');
    await rate(harness, report, 'U0ADA', 'bad');
    expect((await harness.store.listEvents(runId, ['feedback'])).map((e) => e.payload)).toEqual([
      { rating: 'good', by: { id: 'U0ADA', channel: 'slack', name: 'u0ada' } },
      { rating: 'good', by: { id: 'U0BOB', channel: 'slack', name: 'u0bob' } },
      { rating: 'bad', by: { id: 'U0ADA', channel: 'slack', name: 'u0ada' } },
    ]);

    const dashboard = new PgDashboard(harness.db.db, { baseUrl: 'https://steward.example.com' });
    const detail = await dashboard.runDetail({ channel: 'slack', id: 'U0BOSS', approver: true }, runId);
    const page = (await runPage(detail!, new Date(), 'nonce')).toString();
    expect(page).toContain('Feedback: 👎 by u0ada, 👍 by u0bob');
  });

  it('a workspace that refuses the feedback block still gets every report, without the buttons', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [echo, echo], synthesizer: ['Said hi.', 'Said hi again.'] }),
    });
    const harness = h;
    harness.slack.refuse = (method, args) =>
      method.startsWith('chat.') && JSON.stringify(args.blocks ?? []).includes('context_actions')
        ? 'invalid_blocks'
        : undefined;
    for (const [ask, said] of [
      ['say hi', 'Said hi.'],
      ['say hi again', 'Said hi again.'],
    ] as const) {
      const thread = await harness.mention(ask);
      const report = await harness.waitFor('the report', () =>
        harness.replies(thread).find((m) => messageText(m).includes(said)),
      );
      expect(() => feedbackButtons(report)).toThrow(/no feedback buttons/);
    }
    await harness.steward.idle();
    expect(harness.logs.filter((l) => l.includes('refused the feedback buttons'))).toHaveLength(1);
  });
});
