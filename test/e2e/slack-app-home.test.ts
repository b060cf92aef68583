/**
 * Steward's App Home tab through the real Bolt app: opening it publishes the person's view (their runs with status and
 * a link, their review preference, their workflows), choosing a preference there stores it and shows it, and text a
 * person typed cannot ping anyone or make a link in the view.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { allTexts } from '../bot/slack/fixtures.ts';
import { planReply } from './harness.ts';
import { messageText, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createAppHomeOpened, createHomeSelect, eventEnvelope, interactionBody } from './slack-requests.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echo = (message: string) =>
  planReply([{ id: 'say', tool: 'everything.echo', args: { message } }], { summary: `Say ${message}` });

/** What a person typed, as Slack sends it in an event (its three escapes applied). */
const TYPED = 'say hi <!channel> *bold* <https://evil.test|click>';
const SENT = TYPED.replace(/</g, '&lt;').replace(/>/g, '&gt;');

type View = { blocks: Record<string, unknown>[] };

async function openHome(harness: SlackHarness, user: string, tab: 'home' | 'messages' = 'home'): Promise<void> {
  const event = createAppHomeOpened({ user, tab });
  const res = await harness.post(eventEnvelope(event, harness.slack.botUserId), 'application/json');
  expect(res.status).toBe(200);
  await harness.channel.settled();
}

async function chooseReview(harness: SlackHarness, user: string, value: string): Promise<void> {
  const view = harness.slack.homeViews.get(user);
  if (!view) throw new Error(`${user} has no Home view`);
  const payload = createHomeSelect({
    user,
    actionId: 'steward.home-review',
    value,
    view,
    triggerId: harness.slack.newTriggerId(),
  });
  const res = await harness.post(interactionBody(payload), 'application/x-www-form-urlencoded');
  expect(res.status).toBe(200);
  await harness.channel.settled();
}

/** The chosen option of the view's review menu. */
function chosenReview(view: View): unknown {
  const menu = view.blocks.map((b) => b.accessory as Record<string, unknown> | undefined).find((a) => a?.options);
  return (menu?.initial_option as { value?: string } | undefined)?.value;
}

/** Text objects of one type (`mrkdwn`: what Slack parses for mentions and links). */
function textsOfType(value: unknown, type: 'mrkdwn' | 'plain_text'): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => textsOfType(v, type));
  if (!value || typeof value !== 'object') return [];
  const o = value as Record<string, unknown>;
  const own = o.type === type && typeof o.text === 'string' ? [o.text] : [];
  return [...own, ...Object.values(o).flatMap((v) => textsOfType(v, type))];
}

describe('the Slack App Home tab, end to end on postgres', () => {
  it("shows a person's runs with status and link, changes their review preference there, and shows hostile text inert", async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [echo('hi'), echo('again')], synthesizer: ['Said hi.', 'Said again.'] }),
    });
    // A low-risk plan starts at once under the default preference, and completes.
    const thread = await h.mention(SENT);
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said hi.')));
    const [run] = await h.steward.recentRuns({ id: 'U0ADA', channel: 'slack' }, 10);
    expect(run).toMatchObject({ status: 'completed', request: TYPED });

    // The Messages tab publishes nothing; the Home tab publishes Ada's view.
    await openHome(h, 'U0ADA', 'messages');
    expect(h.slack.callsOf('views.publish')).toEqual([]);
    await openHome(h, 'U0ADA');
    const published = h.slack.callsOf('views.publish');
    expect(published.map((c) => [c.args.user_id, c.response.ok])).toEqual([['U0ADA', true]]);
    const view = h.slack.homeViews.get('U0ADA') as View;
    const texts = allTexts(view.blocks).join('\n');
    const permalink = `https://test.slack.com/archives/C0GENERAL/p${thread.replace('.', '')}`;
    expect(texts).toContain(`✅ *finished*`);
    expect(texts).toContain(`<${permalink}|Open the thread> · run \`${run!.id.slice(0, 8)}\``);
    expect(texts).toContain('Your workflows');
    expect(chosenReview(view)).toBe('risky');

    // The request shows as typed, in plain text only: no broadcast, no link, no bold markup made from it.
    expect(textsOfType(view.blocks, 'plain_text')).toContain(TYPED);
    for (const text of textsOfType(view.blocks, 'mrkdwn')) {
      expect(text).not.toContain('<!channel>');
      expect(text).not.toContain('evil.test');
      expect(text).not.toContain('*bold*');
    }

    // Bob sees only his own runs.
    await openHome(h, 'U0BOB');
    expect(allTexts((h.slack.homeViews.get('U0BOB') as View).blocks).join('\n')).toContain('You have no runs yet');

    // A value that is no preference (a forged payload) changes nothing and publishes nothing.
    const before = h.slack.callsOf('views.publish').length;
    await chooseReview(h, 'U0ADA', 'everything');
    expect(await h.store.getReviewPreference({ id: 'U0ADA', channel: 'slack' })).toBeNull();
    expect(h.slack.callsOf('views.publish')).toHaveLength(before);

    // Ada chooses "every plan": it is stored, and her view is published again showing it.
    await chooseReview(h, 'U0ADA', 'all');
    expect(await h.store.getReviewPreference({ id: 'U0ADA', channel: 'slack' })).toBe('all');
    await h.waitFor(
      'the view showing the new choice',
      () => chosenReview(h!.slack.homeViews.get('U0ADA') as View) === 'all',
    );
    expect(h.slack.callsOf('views.publish').filter((c) => c.args.user_id === 'U0ADA')).toHaveLength(2);

    // Her next low-risk plan waits for her review, and her Home lists that run as it starts.
    const second = await h.mention('say hi again');
    const card = await h.waitFor('the second card', () => {
      const c = h!.card(second);
      return messageText(c).includes('waiting for review') && c;
    });
    expect(h.buttonValue(card, 'approve')).toBeTruthy();
    const refreshed = await h.waitFor('the refreshed Home', () => {
      const t = allTexts((h!.slack.homeViews.get('U0ADA') as View).blocks).join('\n');
      return t.includes('say hi again') && t;
    });
    expect(refreshed).toContain('📋 *waiting for review*');
    expect(refreshed).toContain('✅ *finished*');

    // Approved, it runs to its end, and her Home shows it finished without her opening the tab again.
    await h.press(card, 'approve');
    await h.waitFor('the second report', () => h!.replies(second).find((m) => messageText(m).includes('Said again.')));
    await h.waitFor('both runs finished on her Home', () => {
      const t = allTexts((h!.slack.homeViews.get('U0ADA') as View).blocks).join('\n');
      return t.split('✅ *finished*').length === 3;
    });
  });

  it("lists the person's workflows with their schedules", async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [echo('hi')], synthesizer: ['Said hi.'] }),
    });
    const thread = await h.mention('say hi');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said hi.')));
    const ada = { id: 'U0ADA', name: 'u0ada', channel: 'slack' };
    const conversation = { channel: 'slack', key: `C0GENERAL:${thread}` };
    expect((await h.steward.workflowCommand({ actor: ada, conversation, text: 'save digest' })).text).toMatch(/^Saved/);
    const scheduled = await h.steward.workflowCommand({
      actor: ada,
      conversation,
      text: 'schedule digest "0 9 * * MON" Europe/Berlin',
    });
    expect(scheduled.text).toMatch(/^Scheduled digest/);

    await openHome(h, 'U0ADA');
    const texts = allTexts((h.slack.homeViews.get('U0ADA') as View).blocks).join('\n');
    expect(texts).toMatch(
      /\*digest\* · version 1 · fires run on the approval given at save\n• `0 9 \* \* MON` in Europe\/Berlin, next \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    );
    await openHome(h, 'U0BOB');
    expect(allTexts((h.slack.homeViews.get('U0BOB') as View).blocks).join('\n')).toContain('No workflows yet');
  });
});
