/**
 * A big plan stays reviewable on Slack: a card that must shorten its steps to fit Slack's limits says so, and
 * "⋯ › Full plan" opens every step with its arguments whole, only for the person who asked for it. Read as a
 * reviewer would: what the card shows, then what the modal shows, for a 60-step plan whose arguments differ in
 * their last words (who each message goes to).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SHORTENED_NOTE } from '../../src/bot/slack/slack-render.ts';
import { viewProblems } from '../bot/slack/block-kit-limits.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { echo, reviewed } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { chooseMore } from './slack-controls.ts';
import { messageText, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const LONG = 'Please send the quarterly figures, with the notes from the review meeting attached, to ';
const recipient = (i: number) => `person-${i}@example.com`;

describe('slack: a big plan stays reviewable', () => {
  it.each([
    ['step lines', false],
    ['a plan block', true],
  ])(
    'with %s, a 60-step card says it is shortened and Full plan shows every argument whole, only to the presser',
    async (_shape, planBlocks) => {
      const steps = Array.from({ length: 60 }, (_, i) => echo(`send_${i}`, `${LONG}${recipient(i)}`));
      h = await startSlackHarness({
        db: 'pglite',
        servers: [reviewed()],
        script: byRole({ planner: [planReply(steps, { summary: 'Send the figures' })], synthesizer: ['-'] }),
        planBlocks: { channel: planBlocks },
      });
      const thread = await h.mention('send the figures to everyone');
      const card = await h.waitFor('the card', () => h!.card(thread));
      const shown = JSON.stringify(card.blocks);
      // The card cannot hold 60 addresses whole: some are missing, and the card says so.
      expect(steps.filter((_, i) => !shown.includes(recipient(i))).length).toBeGreaterThan(0);
      expect(messageText(card)).toContain(SHORTENED_NOTE);

      const before = h.slack.callsOf('views.open').length;
      const posted = h.slack.callsOf('chat.postMessage').length;
      const privately = h.slack.callsOf('chat.postEphemeral').length;
      await chooseMore(h, card, 'plan', 'U0BOB');
      const opened = await h.waitFor('the full plan', () => h!.slack.callsOf('views.open')[before]);
      expect(opened.response.ok).toBe(true);
      const view = opened.args.view as Record<string, unknown>;
      expect(viewProblems(view)).toEqual([]);
      const text = JSON.stringify(view);
      for (const [i] of steps.entries()) {
        expect(text).toContain(recipient(i));
        expect(text).toContain(`send_${i}`);
      }
      // A modal opens only for the person whose trigger it is: nothing was posted for it, in the channel or privately.
      expect(h.slack.callsOf('chat.postMessage')).toHaveLength(posted);
      expect(h.slack.callsOf('chat.postEphemeral')).toHaveLength(privately);
    },
    60_000,
  );

  it('a small plan shown whole says nothing about shortening', async () => {
    h = await startSlackHarness({
      db: 'pglite',
      servers: [reviewed()],
      script: byRole({ planner: [planReply([echo('say', 'hello')], { summary: 'Say hello' })], synthesizer: ['-'] }),
    });
    const thread = await h.mention('say hello');
    const card = await h.waitFor('the card', () => h!.card(thread));
    expect(messageText(card)).not.toContain(SHORTENED_NOTE);
  });
});
