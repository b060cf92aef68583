/**
 * Stop and Cancel ask first on Discord, as Slack's confirm dialogs do: Discord has no confirm dialog, so a misclick on
 * a card's red button would end a run at once. The question is private to the presser; "Keep it" changes nothing;
 * Yes sends the decision; a Yes left over from before the run ended is refused like any stale press.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { createAuditServer, onlyRun, planReply, type AuditServer } from './harness.ts';
import { echo, reviewed } from '../helpers/mcp-servers.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
let audit: AuditServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  audit?.remove();
  audit = undefined;
});

const stopsRecorded = (harness: DiscordHarness) =>
  harness.db.db.selectFrom('decisions').select(['action', 'accepted']).where('action', '=', 'stop').execute();

describe('discord: Stop and Cancel ask first', () => {
  it('Stop asks the presser privately; "Keep it" leaves the call running; Yes stops it; a second Yes is refused', async () => {
    audit = createAuditServer();
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [audit.config()],
      script: byRole({
        planner: [planReply([{ id: 'long', tool: 'audit.sleep', args: { ms: 30_000 } }])],
        synthesizer: ['Stopped on purpose.'],
      }),
    });
    const a = audit;
    const thread = await h.mention('sleep for a long time');
    await h.waitFor('the long call at the server', () => a.entries().some((e) => e.type === 'call'));
    const run = await onlyRun(h);
    await h.waitFor('the card offering Stop', () => h!.buttons(h!.card(thread)).includes('stop'));

    const first = await h.press(h.card(thread), 'stop', { confirm: false });
    const question = h.question(first)!;
    expect(question.ephemeral).toBe(true);
    expect(h.discord.interaction(first)!.userId).toBe(h.ada.id);
    expect(shownText(question.message)).toContain('Stop this run?');
    expect(h.buttons(question)).toEqual(['stop-yes', 'keep']);
    // A second question open at the same time, answered later, after the run ended.
    const second = h.question(await h.press(h.card(thread), 'stop', { confirm: false }))!;

    await h.press(question, 'keep');
    expect(shownText(h.discord.messages.get(question.message.id)!.message)).toBe('Nothing changed.');
    expect(h.buttons(question)).toEqual([]);
    expect(await stopsRecorded(h)).toEqual([]);
    expect((await h.store.getRun(run.id))!.status).toBe('running');
    expect(a.entries().some((e) => e.type === 'cancelled')).toBe(false);

    await h.press(h.card(thread), 'stop');
    await h.waitFor('the cancellation at the server', () => a.entries().some((e) => e.type === 'cancelled'), 5_000);
    await h.waitFor(
      'the report',
      () => h!.replies(thread).find((m) => shownText(m.message).includes('Stopped on purpose.')),
      30_000,
    );

    const late = await h.press(second, 'stop-yes');
    const refusal = await h.waitFor(
      'the late Yes refused',
      () => h!.privateTexts(late).length > 0 && h!.privateTexts(late),
    );
    expect(refusal).toEqual(['⚠️ This run has already ended (stopped); nothing changed.']);
    await h.steward.idle();
    expect((await h.store.getRun(run.id))!.status).toBe('stopped');
    expect((await stopsRecorded(h)).filter((d) => d.accepted)).toHaveLength(1);
  }, 90_000);

  it('Cancel asks first; "Keep it" leaves the plan waiting; Yes cancels it with nothing run; someone who may not decide is refused with no question', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [planReply([echo('say', 'hello')], { summary: 'Say hello' })], synthesizer: ['-'] }),
    });
    const thread = await h.mention('say hello');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const run = await onlyRun(h);

    const refused = await h.press(card, 'cancel', { user: h.bob });
    expect(h.question(refused)).toBeUndefined();
    await h.waitFor('the refusal', () => h!.privateTexts(refused).length > 0);

    const asked = await h.press(card, 'cancel', { confirm: false });
    const question = h.question(asked)!;
    expect(shownText(question.message)).toContain('Cancel this plan?');
    await h.press(question, 'keep');
    expect((await h.store.getRun(run.id))!.status).toBe('awaiting_review');

    const again = h.question(await h.press(card, 'cancel', { confirm: false }))!;
    await h.press(again, 'cancel-yes');
    expect(shownText(h.discord.messages.get(again.message.id)!.message)).toBe(
      'Cancel sent; the card shows what it did.',
    );
    await waitForStatus(h, run.id, 'cancelled');
    expect(h.calls.length).toBe(0);
  }, 60_000);
});

async function waitForStatus(harness: DiscordHarness, runId: string, status: string): Promise<void> {
  await harness.waitFor(`the run ${status}`, async () => (await harness.store.getRun(runId))?.status === status);
}
