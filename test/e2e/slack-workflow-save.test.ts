/**
 * "Save as workflow" through the real Bolt app: the button on a completed run's card, the modal it opens for the
 * requester or an approver (a bystander is told privately), and the submission reaching the workflow commands, whose
 * answer is shown privately in the card's thread.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, recordWorkflowRequests } from './harness.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createViewSubmission, interactionBody } from './slack-requests.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echo = (message: string) =>
  planReply([{ id: 'say', tool: 'everything.echo', args: { message } }], { summary: `Say ${message}` });

/** Submits the modal opened last with a name and the every-fire box; resolves with Slack's HTTP answer. */
async function submitSave(harness: SlackHarness, name: string, everyFire: boolean, user = 'U0ADA') {
  const opened = harness.slack.callsOf('views.open').at(-1);
  if (!opened) throw new Error('no modal was opened');
  const payload = createViewSubmission({
    user,
    view: opened.args.view as Record<string, unknown>,
    values: {
      'workflow-name': { name: { type: 'plain_text_input', value: name } },
      'workflow-review': {
        'every-fire': {
          type: 'checkboxes',
          selected_options: everyFire ? [{ text: { type: 'plain_text', text: 'x' }, value: 'every-fire' }] : [],
        },
      },
    },
  });
  const res = await harness.post(interactionBody(payload), 'application/x-www-form-urlencoded');
  const body = await res.text();
  await harness.channel.settled();
  return { status: res.status, body };
}

describe('Save as workflow on Slack, end to end on postgres', () => {
  it('on a completed run, opens a modal for the requester or an approver and answers the save privately in the thread', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [echo('hi')], synthesizer: ['Said hi.'] }),
    });
    const thread = await h.mention('say hi');
    const waiting = await h.waitFor('the plan card', () => h!.card(thread));
    expect(() => h!.buttonValue(waiting, 'save-workflow')).toThrow(/no save-workflow button/);
    await h.press(waiting, 'approve');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said hi.')));
    const card = await h.waitFor('the completed card with its save button', () => {
      const c = h!.card(thread);
      return messageText(c).includes('Completed') && h!.buttonValue(c, 'save-workflow') && c;
    });
    const runId = await onlyRunId(h);
    const ephemerals = () => h!.slack.callsOf('chat.postEphemeral');
    const asked = recordWorkflowRequests(h.steward);

    // A bystander is told privately and gets no modal.
    await h.press(card, 'save-workflow', { user: 'U0BOB' });
    const refused = await h.waitFor('the refusal', () => ephemerals().find((c) => c.args.user === 'U0BOB'));
    expect(refused.args).toMatchObject({ channel: 'C0GENERAL', thread_ts: thread });
    expect(JSON.stringify(refused.args)).toContain('Only the person who asked for this run or an approver');
    expect(h.slack.callsOf('views.open')).toEqual([]);

    // The requester gets the modal; a name of two words keeps it open with the reason.
    await h.press(card, 'save-workflow');
    const opened = await h.waitFor('the save modal', () => h!.slack.callsOf('views.open')[0]);
    expect(opened.response.ok).toBe(true);
    expect(opened.args.view).toMatchObject({ callback_id: 'steward.save-workflow' });
    expect(JSON.parse((opened.args.view as { private_metadata: string }).private_metadata)).toMatchObject({
      runId,
      channel: 'C0GENERAL',
      threadTs: thread,
    });
    const twoWords = await submitSave(h, 'my digest', false);
    expect(JSON.parse(twoWords.body)).toMatchObject({
      response_action: 'errors',
      errors: { 'workflow-name': /One word/ },
    });

    const before = ephemerals().length;
    const posted = h.slack.callsOf('chat.postMessage').length;
    expect((await submitSave(h, 'digest', true)).status).toBe(200);
    const answer = await h.waitFor('the answer', () =>
      ephemerals()
        .slice(before)
        .find((c) => c.args.user === 'U0ADA'),
    );
    expect(answer.args).toMatchObject({ channel: 'C0GENERAL', thread_ts: thread });
    expect(answer.args.text).toMatch(
      /^Saved workflow "digest" \(version 1\) from run .*each fire will wait for approval/,
    );
    expect(asked).toEqual([
      {
        actor: { id: 'U0ADA', name: 'u0ada', channel: 'slack' },
        conversation: { channel: 'slack', key: `C0GENERAL:${thread}` },
        text: 'save digest every-fire',
        runId,
      },
    ]);
    // Nothing of it was posted where others see it.
    expect(h.slack.callsOf('chat.postMessage').length).toBe(posted);

    // An approver may save someone else's run too.
    await h.press(h.card(thread), 'save-workflow', { user: 'U0BOSS' });
    await h.waitFor("the approver's modal", () => h!.slack.callsOf('views.open').length === 2);
    await submitSave(h, 'digest-2', false, 'U0BOSS');
    const boss = await h.waitFor("the approver's answer", () => ephemerals().find((c) => c.args.user === 'U0BOSS'));
    expect(boss.args.text).toMatch(/^Saved workflow "digest-2" \(version 1\)/);
    expect(asked.map((r) => [r.actor.id, r.text, r.runId])).toEqual([
      ['U0ADA', 'save digest every-fire', runId],
      ['U0BOSS', 'save digest-2', runId],
    ]);
  });
});
