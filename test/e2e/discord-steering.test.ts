/**
 * The Discord card's steering controls end to end (mirrors slack-steering.test.ts): Edit plan's modal (the whole
 * plan, or a box per step not yet run), its verdicts answered privately, the breakpoint select, History and Help
 * shown only to the presser, and people who may not decide refused privately. Setting breakpoints from the card is
 * test/chat/breakpoints-spec.ts, on both platforms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { echo, everythingStdioConfig, reviewed } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, waitForStoredEnd } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type ModalRow = { components: Array<{ custom_id: string; label: string; value?: string }> };
/** The text inputs of the modal Steward opened last: custom id → prefilled value. */
function modalInputs(harness: DiscordHarness): Record<string, string> {
  const rows = (harness.lastModal()?.components ?? []) as ModalRow[];
  return Object.fromEntries(rows.flatMap((r) => r.components.map((c) => [c.custom_id, c.value ?? ''])));
}
describe('discord steering controls, end to end on postgres', () => {
  it('Edit plan opens the stored plan as JSON; a JSON mistake or an invalid plan is answered privately and changes nothing; a valid edit is the next revision on the same card', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({
        planner: [planReply([echo('say', 'hello')], { summary: 'Say hello' })],
        synthesizer: ['Said it.'],
      }),
    });
    const thread = await h.mention('say hello');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const run = await onlyRun(h);

    const press = await h.press(card, 'edit');
    expect(h.discord.interaction(press)!.callbackType).toBe(9);
    const inputs = modalInputs(h);
    expect(Object.keys(inputs)).toEqual(['plan-json']);
    const initial = inputs['plan-json']!;
    // The whole plan as stored (its rationale too), not the card's shortened preview.
    expect(JSON.parse(initial)).toEqual((await h.store.getRun(run.id))!.plan);
    expect(initial).toContain('"rationale": "because"');

    const brokenText = initial.replace('"steps"', '"steps" [');
    const bad = await h.submitModal({ 'plan-json': brokenText });
    const badText = await h.waitFor('the JSON verdict', () => h!.privateTexts(bad).join('\n') || undefined);
    expect(badText).toMatch(/The plan is not valid JSON: .*Nothing changed\./);
    // What was sent comes back with the reason, so nothing typed is lost.
    expect(badText).toContain('What you sent:');
    expect(badText).toContain('"steps" [');

    const invalid = await h.submitModal({ 'plan-json': initial.replace('everything.echo', 'everything.nope') });
    const invalidText = await h.waitFor('the plan verdict', () => h!.privateTexts(invalid).join('\n') || undefined);
    expect(invalidText).toContain('everything.nope');
    expect(invalidText).toContain('Nothing changed.');
    expect((await h.store.getRun(run.id))!).toMatchObject({ revision: 0, status: 'awaiting_review' });
    expect(await h.store.listDecisions(run.id)).toEqual([]);
    expect(shownText(h.card(thread).message)).toContain('revision 0');
    // Verdicts are private: nothing was posted in the thread besides the card.
    expect(h.replies(thread)).toEqual([]);

    await h.submitModal({ 'plan-json': initial.replace('"hello"', '"hello from the modal"') });
    await h.waitFor('revision 1 on the card', () => shownText(h!.card(thread).message).includes('revision 1'));
    expect(h.card(thread).message.id).toBe(card.message.id);
    expect(shownText(h.card(thread).message)).toContain('hello from the modal');
    expect(shownText(h.card(thread).message)).toContain('📋 Plan waiting for review');

    // The form opened on revision 0 is refused now, privately: the plan moved on.
    const stale = await h.submitModal({ 'plan-json': initial.replace('"hello"', '"again"') });
    expect(await h.waitFor('the stale verdict', () => h!.privateTexts(stale).join('\n') || undefined)).toContain(
      'This card shows revision 0, but the plan is now at revision 1',
    );
    expect((await h.store.getRun(run.id))!.revision).toBe(1);

    await h.press(h.card(thread), 'approve');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said it.')));
    await h.steward.idle();
    expect(JSON.stringify((await waitForStoredEnd(h.store, run.id, 'say')).output)).toContain('hello from the modal');
    expect((await h.store.listDecisions(run.id)).map((d) => [d.action, d.revision, d.accepted])).toEqual([
      ['edit', 0, true],
      ['approve', 1, true],
    ]);
  });

  it('mid-run, an edit of a started step is refused privately; an edit of a step not yet run is the next revision', async () => {
    const plan = planReply([
      { id: 'slow', tool: 'everything.trigger-long-running-operation', args: { duration: 3, steps: 6 } },
      echo('after', 'first words', ['slow']),
    ]);
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Done.'] }),
    });
    const thread = await h.mention('slow, then talk');
    const run = await onlyRun(h);
    await h.waitFor('the slow step to run', async () =>
      (await h!.store.listStepAttempts(run.id)).some((a) => a.stepId === 'slow' && a.status === 'running'),
    );
    await h.waitFor('the running card', () => shownText(h!.card(thread).message).includes('▶️ Running'));

    await h.press(h.card(thread), 'edit');
    const text = modalInputs(h)['plan-json']!;
    const touched = await h.submitModal({ 'plan-json': text.replace('"duration": 3', '"duration": 1') });
    const refusal = await h.waitFor('the refusal', () => h!.privateTexts(touched).join('\n') || undefined);
    expect(refusal).toContain('step slow already ran (or is running) and cannot be changed');
    expect((await h.store.getRun(run.id))!.revision).toBe(0);

    await h.submitModal({ 'plan-json': text.replace('first words', 'edited words') });
    await h.waitFor('revision 1 on the card', () => shownText(h!.card(thread).message).includes('revision 1'));
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Done.')));
    await h.steward.idle();
    expect(JSON.stringify((await waitForStoredEnd(h.store, run.id, 'after')).output)).toContain('edited words');
    expect((await h.store.listDecisions(run.id)).map((d) => [d.action, d.accepted])).toEqual([['edit', true]]);
  });

  it('a plan too long for one box opens a box per step not yet run, and an edit there is the next revision', async () => {
    const long = (n: number) => `message number ${n} `.repeat(70);
    const steps = [echo('a', long(1)), echo('b', long(2), ['a']), echo('c', long(3), ['b'])];
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [planReply(steps)] }),
    });
    const thread = await h.mention('three long echoes');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const run = await onlyRun(h);
    expect(JSON.stringify((await h.store.getRun(run.id))!.plan).length).toBeGreaterThan(4_000);

    await h.press(card, 'edit');
    const inputs = modalInputs(h);
    expect(Object.keys(inputs)).toEqual(['step:a', 'step:b', 'step:c']);
    for (const value of Object.values(inputs)) expect(value.length).toBeLessThanOrEqual(4_000);

    // Change b, drop c by emptying its box.
    await h.submitModal({
      'step:a': inputs['step:a']!,
      'step:b': inputs['step:b']!.replace('message number 2', 'changed number 2'),
      'step:c': '',
    });
    await h.waitFor('revision 1 on the card', () => shownText(h!.card(thread).message).includes('revision 1'));
    const plan = (await h.store.getRun(run.id))!.plan!;
    expect(plan.steps.map((s) => s.id)).toEqual(['a', 'b']);
    expect(JSON.stringify(plan.steps[1])).toContain('changed number 2');
  });

  it('mid-run, a long plan opens boxes only for the steps not yet run; the started step stays as stored', async () => {
    const long = (n: number) => `message number ${n} `.repeat(120);
    const plan = planReply([
      { id: 'slow', tool: 'everything.trigger-long-running-operation', args: { duration: 3, steps: 6 } },
      echo('b', long(2), ['slow']),
      echo('c', long(3), ['b']),
    ]);
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Done.'] }),
    });
    const thread = await h.mention('slow, then two long echoes');
    const run = await onlyRun(h);
    await h.waitFor('the slow step to run', async () =>
      (await h!.store.listStepAttempts(run.id)).some((a) => a.stepId === 'slow' && a.status === 'running'),
    );
    await h.waitFor('the running card', () => shownText(h!.card(thread).message).includes('▶️ Running'));

    await h.press(h.card(thread), 'edit');
    const inputs = modalInputs(h);
    expect(Object.keys(inputs)).toEqual(['step:b', 'step:c']);
    await h.submitModal({ 'step:b': inputs['step:b']!.replace('message number 2', 'changed number 2'), 'step:c': '' });
    await h.waitFor('revision 1 on the card', () => shownText(h!.card(thread).message).includes('revision 1'));
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Done.')));
    await h.steward.idle();
    const attempts = await h.store.listStepAttempts(run.id);
    expect(attempts.map((a) => a.stepId)).toEqual(['slow', 'b']);
    expect(JSON.stringify(attempts[1]!.output)).toContain('changed number 2');
  });

  it('a plan that cannot fit in a form is refused privately with its size and a pointer to Amend; no modal opens', async () => {
    const steps = Array.from({ length: 8 }, (_, i) => echo(`s${i}`, `message ${i} `.repeat(60)));
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [planReply(steps)] }),
    });
    const thread = await h.mention('eight long echoes');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const run = await onlyRun(h);
    const size = JSON.stringify((await h.store.getRun(run.id))!.plan).length;

    const press = await h.press(card, 'edit');
    expect(h.lastModal()).toBeUndefined();
    const told = h.privateTexts(press).join('\n');
    expect(told).toContain(`This plan is ${size.toLocaleString('en-US')} characters of JSON`);
    expect(told).toContain('**Amend**');
    expect((await h.store.getRun(run.id))!).toMatchObject({ revision: 0, status: 'awaiting_review' });
    expect(h.replies(thread)).toEqual([]);
  });

  it('someone who may not decide is refused privately on Edit, the select and the modal; History and Help are shown only to the presser', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [planReply([echo('say', 'hi')])], synthesizer: ['Said hi.'] }),
    });
    const thread = await h.mention('say hi');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const run = await onlyRun(h);
    const refusal = new RegExp(`Only <@${h.ada.id}> or an approver can`);

    const edit = await h.press(card, 'edit', { user: h.bob });
    expect(h.lastModal()).toBeUndefined();
    await h.waitFor('the edit refusal', () => refusal.test(h!.privateTexts(edit).join('\n')));
    const pick = await h.select(card, 'bp', ['say'], { user: h.bob });
    await h.waitFor('the select refusal', () => refusal.test(h!.privateTexts(pick).join('\n')));
    expect((await h.store.getRun(run.id))!.breakpoints).toEqual([]);

    // Even a modal Bob should never have had is checked on submission.
    await h.press(card, 'edit');
    const text = modalInputs(h)['plan-json']!;
    const forged = await h.submitModal({ 'plan-json': text.replace('"hi"', '"bob was here"') }, { user: h.bob });
    await h.waitFor('the modal refusal', () => /or an approver can edit/.test(h!.privateTexts(forged).join('\n')));
    expect((await h.store.getRun(run.id))!.revision).toBe(0);
    expect(h.replies(thread)).toEqual([]);

    const history = await h.press(h.card(thread), 'history', { user: h.bob });
    const shown = await h.waitFor('the history', () => h!.privateTexts(history).find((t) => t.includes('History')));
    expect(shown).toContain('edit on revision 0: refused');
    expect(shown).toContain('breakpoint on revision 0: refused');
    const help = await h.press(h.card(thread), 'help', { user: h.bob });
    expect(h.privateTexts(help).join('\n')).toContain('**On a plan card**');
    // Neither was posted where others see it.
    expect(h.replies(thread)).toEqual([]);

    await h.press(h.card(thread), 'approve');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said hi.')));
    await h.steward.idle();
    // The forged submission was refused before it became a decision: it left no trace but Bob's private answer.
    expect((await h.store.listDecisions(run.id)).map((d) => [d.actor.id, d.action, d.accepted])).toEqual([
      [h.bob.id, 'edit', false],
      [h.bob.id, 'breakpoint', false],
      [h.ada.id, 'approve', true],
    ]);
  });
});
