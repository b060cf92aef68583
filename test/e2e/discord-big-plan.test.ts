/**
 * A big plan stays reviewable on Discord: a card that must shorten its steps to fit an embed says so and offers
 * Full plan, which answers privately with every step and its arguments whole. Read as a reviewer would: a 60-step
 * plan whose arguments differ in their last words (who each message goes to).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SHORTENED_NOTE } from '../../src/bot/discord/discord-render.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { echo, reviewed } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const LONG = 'Please send the quarterly figures, with the notes from the review meeting attached, to ';
const recipient = (i: number) => `person-${i}@example.com`;

describe('discord: a big plan stays reviewable', () => {
  it('a 60-step card says it is shortened, and Full plan shows every argument whole, privately, to whoever presses', async () => {
    const steps = Array.from({ length: 60 }, (_, i) => echo(`send_${i}`, `${LONG}${recipient(i)}`));
    h = await startDiscordHarness({
      db: 'pglite',
      servers: [reviewed()],
      script: byRole({ planner: [planReply(steps, { summary: 'Send the figures' })], synthesizer: ['-'] }),
    });
    const thread = await h.mention('send the figures to everyone');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const shown = shownText(card.message);
    expect(steps.filter((_, i) => !shown.includes(recipient(i))).length).toBeGreaterThan(0);
    expect(shown).toContain(SHORTENED_NOTE);
    expect(h.buttons(card)).toContain('plan');

    const press = await h.press(card, 'plan', { user: h.bob });
    const pages = await h.waitFor('every page of the plan', () => {
      const texts = h!.privateTexts(press);
      const last = texts.at(-1) ?? '';
      const of = /Full plan \((\d+) of (\d+)\)/.exec(last);
      return (texts.length > 0 && (!of || of[1] === of[2]) && texts) || undefined;
    });
    const all = pages.join('\n');
    for (const [i] of steps.entries()) {
      expect(all).toContain(recipient(i));
      expect(all).toContain(`send_${i}`);
    }
    expect(all).toContain('Only you see this.');
  }, 60_000);

  it('a small plan shown whole offers no Full plan and says nothing about shortening', async () => {
    h = await startDiscordHarness({
      db: 'pglite',
      servers: [reviewed()],
      script: byRole({ planner: [planReply([echo('say', 'hello')], { summary: 'Say hello' })], synthesizer: ['-'] }),
    });
    const thread = await h.mention('say hello');
    const card = await h.waitFor('the card', () => h!.card(thread));
    expect(shownText(card.message)).not.toContain(SHORTENED_NOTE);
    expect(h.buttons(card)).not.toContain('plan');
  });
});
