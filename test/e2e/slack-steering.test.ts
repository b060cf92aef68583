/**
 * The Slack card's steering controls end to end: Edit plan's modals (the whole plan, or a box per step) and their
 * errors, a Stop answered only once stored, History and Help from the overflow menu, refusals, and the review
 * preference from a private message. Setting breakpoints from the card is test/chat/breakpoints-spec.ts, on both
 * platforms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { viewErrorsProblems } from '../bot/slack/block-kit-limits.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { echo, everythingStdioConfig, reviewed } from '../helpers/mcp-servers.ts';
import { planReply, waitForStoredEnd } from './harness.ts';
import { chooseMore, pickBreakpoints, pressPrivate, privateText, submitEdit, submitSteps } from './slack-controls.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const lastPrivate = (harness: SlackHarness, user: string) =>
  harness.slack
    .callsOf('chat.postEphemeral')
    .filter((c) => c.args.user === user && c.response.ok === true)
    .at(-1);

describe('slack steering controls, end to end on postgres', () => {
  it('Edit plan opens the stored plan as JSON; bad JSON or an invalid plan is shown in the modal and changes nothing; a valid edit becomes the next revision', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({
        planner: [planReply([echo('say', 'hello')], { summary: 'Say hello' })],
        synthesizer: ['Said it.'],
      }),
    });
    const thread = await h.mention('say hello');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const runId = await onlyRunId(h);

    expect(await h.press(card, 'edit-plan')).toBe(200);
    const opened = h.slack.callsOf('views.open').at(-1)!;
    expect(opened.response.ok).toBe(true);
    const box = JSON.stringify(opened.args.view);
    const stored = (await h.store.getRun(runId))!.plan;
    const initial = (JSON.parse(box) as { blocks: Array<{ element?: { initial_value?: string } }> }).blocks.find(
      (b) => b.element?.initial_value,
    )!.element!.initial_value!;
    // The whole plan as stored (its rationale and defaults too), not the card's shortened preview.
    expect(JSON.parse(initial)).toEqual(stored);
    expect(initial).toContain('"rationale": "because"');

    const bad = await submitEdit(h, initial.replace('"steps"', '"steps" ['));
    expect(bad.status).toBe(200);
    expect(bad.ms).toBeLessThan(3_000);
    expect(viewErrorsProblems(bad.answer, bad.view)).toEqual([]);
    expect(String((bad.answer!.errors as Record<string, string>).plan)).toMatch(
      /^That is not valid JSON: .*Nothing changed\.$/,
    );

    const invalid = await submitEdit(h, initial.replace('everything.echo', 'everything.nope'));
    expect(viewErrorsProblems(invalid.answer, invalid.view)).toEqual([]);
    expect(String((invalid.answer!.errors as Record<string, string>).plan)).toMatch(
      /^That edit was refused: .*everything\.nope/,
    );
    expect((await h.store.getRun(runId))!).toMatchObject({ revision: 0, status: 'awaiting_review' });
    expect(await h.store.listDecisions(runId)).toEqual([]);
    expect(messageText(h.card(thread))).toContain('revision 0');

    const good = await submitEdit(h, initial.replace('"hello"', '"hello from the modal"'));
    expect(good).toMatchObject({ status: 200, answer: null });
    await h.waitFor('revision 1 on the card', () => messageText(h!.card(thread)).includes('revision 1'));
    expect(messageText(h.card(thread))).toContain('hello from the modal');
    expect(messageText(h.card(thread))).toContain('📋 Plan waiting for review');

    // The old modal (revision 0) and a press on the old revision are refused: the plan moved on.
    const stale = await submitEdit(h, initial.replace('"hello"', '"again"'));
    expect(String((stale.answer!.errors as Record<string, string>).plan)).toContain('now at revision 1');
    await h.press(card, 'edit-plan', { value: JSON.stringify({ runId, revision: 0 }) });
    expect(privateText(lastPrivate(h, 'U0ADA')!)).toContain(
      'This card shows revision 0, but the plan is now at revision 1',
    );
    await pickBreakpoints(h, card, ['say'], { blockId: `steward.controls ${JSON.stringify({ runId, revision: 0 })}` });
    await h.waitFor('the stale pick refused', () =>
      h!
        .replies(thread)
        .find((m) => messageText(m).includes('That card shows revision 0, but the plan is now at revision 1')),
    );
    expect((await h.store.getRun(runId))!.breakpoints).toEqual([]);

    await h.press(h.card(thread), 'approve');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said it.')));
    await h.steward.idle();
    expect(JSON.stringify((await waitForStoredEnd(h.store, runId, 'say')).output)).toContain('hello from the modal');
    expect((await h.store.listDecisions(runId)).map((d) => [d.action, d.revision, d.accepted])).toEqual([
      ['edit', 0, true],
      ['breakpoint', 0, false],
      ['approve', 1, true],
    ]);
  });

  it('mid-run, Edit plan may change the steps not yet run; a change to a started step is refused in the modal', async () => {
    const plan = planReply([
      { id: 'slow', tool: 'everything.trigger-long-running-operation', args: { duration: 3, steps: 6 } },
      echo('after', 'first words', ['slow']),
    ]);
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Done.'] }),
    });
    const thread = await h.mention('slow, then talk');
    const runId = await onlyRunId(h);
    await h.waitFor('the slow step to run', async () =>
      (await h!.store.listStepAttempts(runId)).some((a) => a.stepId === 'slow' && a.status === 'running'),
    );
    await h.waitFor('the running card', () => messageText(h!.card(thread)).includes('▶️ Running'));

    await h.press(h.card(thread), 'edit-plan');
    const view = JSON.stringify(h.slack.callsOf('views.open').at(-1)!.args.view);
    expect(view).toContain('Steps that started must stay as they are: slow');
    const text = JSON.stringify((await h.store.getRun(runId))!.plan, null, 2);

    const touched = await submitEdit(h, text.replace('"duration": 3', '"duration": 1'));
    expect(String((touched.answer!.errors as Record<string, string>).plan)).toContain(
      'step slow already ran (or is running) and cannot be changed',
    );
    const good = await submitEdit(h, text.replace('first words', 'edited words'));
    expect(good.answer).toBeNull();
    await h.waitFor('revision 1 on the card', () => messageText(h!.card(thread)).includes('revision 1'));
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Done.')));
    await h.steward.idle();
    expect(JSON.stringify((await waitForStoredEnd(h.store, runId, 'after')).output)).toContain('edited words');
    expect((await h.store.listDecisions(runId)).map((d) => [d.action, d.accepted])).toEqual([['edit', true]]);
  });

  it('a Stop press is answered once the run is stored as stopping (or after 2.5 s waiting for it), never before: a kill in between leaves it unanswered, not lost', async () => {
    const plan = planReply([
      { id: 'slow', tool: 'everything.trigger-long-running-operation', args: { duration: 30, steps: 30 } },
      echo('after', 'never', ['slow']),
    ]);
    // The move to `stopping` waits at a gate this test opens.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    class GatedStore extends PgRunStore {
      override async transition(...args: Parameters<PgRunStore['transition']>): Promise<boolean> {
        if (args[2] === 'stopping') await gate;
        return super.transition(...args);
      }
    }
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Stopped.'] }),
      store: (db) => new GatedStore(db),
    });
    const thread = await h.mention('slow, then talk');
    const runId = await onlyRunId(h);
    await h.waitFor('the slow step to run', async () =>
      (await h!.store.listStepAttempts(runId)).some((a) => a.stepId === 'slow' && a.status === 'running'),
    );
    await h.waitFor('the running card', () => messageText(h!.card(thread)).includes('▶️ Running'));

    try {
      const pressedAt = Date.now();
      const status = await h.press(h.card(thread), 'stop', { answerOnly: true });
      const answeredAfter = Date.now() - pressedAt;
      // Answered while the record still waits: only once the listener's 2.5 s wait for it ran out, never at once.
      expect(status).toBe(200);
      expect(answeredAfter, 'Slack was answered before the Stop was stored').toBeGreaterThanOrEqual(2_400);
      expect((await h.store.listDecisions(runId)).map((d) => d.action)).toEqual([]);
      // The Stop reached the driver meanwhile: its call was cancelled at once.
      expect((await h.store.listStepAttempts(runId)).find((a) => a.stepId === 'slow')?.status).toBe('cancelled');
    } finally {
      open();
    }
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Stopped.')));
    expect((await h.store.getRun(runId))?.status).toBe('stopped');
  });

  it('a plan too long for one box opens a box per step: change one, drop one, add one, and a mistake is shown under its box', async () => {
    const steps = Array.from({ length: 40 }, (_, i) => echo(`s${i}`, `message number ${i} `.repeat(5)));
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [planReply(steps)] }),
    });
    const thread = await h.mention('forty echoes');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const runId = await onlyRunId(h);
    expect(JSON.stringify((await h.store.getRun(runId))!.plan).length).toBeGreaterThan(3_000);

    await h.press(card, 'edit-plan');
    const view = h.slack.callsOf('views.open').at(-1)!;
    expect(view.response.ok).toBe(true);
    const blocks = (view.args.view as { blocks: Array<{ block_id?: string; element?: { initial_value?: string } }> })
      .blocks;
    const box = (id: string) => blocks.find((b) => b.block_id === `step:${id}`)!.element!.initial_value!;
    expect(blocks.filter((b) => b.block_id?.startsWith('step:'))).toHaveLength(40);
    const values = (v: Record<string, string>) =>
      Object.fromEntries(
        blocks
          .filter((b) => b.block_id?.startsWith('step:') || b.block_id === 'new-steps')
          .map((b) => [
            b.block_id!,
            { json: { type: 'plain_text_input', value: v[b.block_id!] ?? b.element?.initial_value ?? '' } },
          ]),
      );

    const broken = await submitSteps(h, values({ 'step:s3': '{"id": "s3",' }));
    expect(viewErrorsProblems(broken.answer, broken.view)).toEqual([]);
    expect(Object.keys(broken.answer!.errors as object)).toEqual(['step:s3']);
    const unknown = await submitSteps(
      h,
      values({ 'step:s5': box('s5').replace('everything.echo', 'everything.nope') }),
    );
    expect(JSON.stringify(unknown.answer)).toContain('everything.nope');
    expect((await h.store.getRun(runId))!.revision).toBe(0);

    const added = JSON.stringify([echo('extra', 'added in Slack', ['s38'])]);
    const good = await submitSteps(
      h,
      values({
        'step:s3': box('s3').replace('message number 3', 'changed number 3'),
        'step:s39': '',
        'new-steps': added,
      }),
    );
    expect(good.answer).toBeNull();
    await h.waitFor('revision 1 on the card', () => messageText(h!.card(thread)).includes('revision 1'));
    const plan = (await h.store.getRun(runId))!.plan!;
    expect(plan.steps.map((s) => s.id)).toEqual([...steps.slice(0, 39).map((s) => s.id), 'extra']);
    expect(JSON.stringify(plan.steps[3])).toContain('changed number 3');
  });

  it('a step too long for any Slack text box is not opened cut: the presser is told the size and what to do instead', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [planReply([echo('long', 'x'.repeat(3_100))])] }),
    });
    const thread = await h.mention('one long echo');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const runId = await onlyRunId(h);
    const size = JSON.stringify((await h.store.getRun(runId))!.plan).length;

    await h.press(card, 'edit-plan');
    expect(h.slack.callsOf('views.open')).toEqual([]);
    const told = privateText(lastPrivate(h, 'U0ADA')!);
    expect(told).toContain(`This plan is ${size.toLocaleString('en-US')} characters of JSON, more than the 3,000`);
    expect(told).toContain('*Amend*');
    expect((await h.store.getRun(runId))!).toMatchObject({ revision: 0, status: 'awaiting_review' });
  });

  it('someone who may not decide is refused privately on Edit, the picker and the modal; history and help are shown only to the presser', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [planReply([echo('say', 'hi')])], synthesizer: ['Said hi.'] }),
    });
    const thread = await h.mention('say hi');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const runId = await onlyRunId(h);

    await h.press(card, 'edit-plan', { user: 'U0BOB' });
    expect(h.slack.callsOf('views.open')).toEqual([]);
    expect(privateText(lastPrivate(h, 'U0BOB')!)).toContain('Only <@U0ADA> or an approver can edit this run');
    await pickBreakpoints(h, card, ['say'], { user: 'U0BOB' });
    await h.waitFor('the refusal', () => privateText(lastPrivate(h!, 'U0BOB')!).includes('can breakpoint this run'));
    expect((await h.store.getRun(runId))!.breakpoints).toEqual([]);

    // Even a modal Bob should never have had is checked on submission.
    await h.press(card, 'edit-plan');
    const text = JSON.stringify((await h.store.getRun(runId))!.plan);
    const forged = await submitEdit(h, text.replace('"hi"', '"bob was here"'), 'U0BOB');
    expect(String((forged.answer!.errors as Record<string, string>).plan)).toContain(
      'Only U0ADA or an approver can edit',
    );
    expect((await h.store.getRun(runId))!.revision).toBe(0);

    await h.press(card, 'approve');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said hi.')));
    await h.steward.idle();
    const posted = h.slack.callsOf('chat.postMessage').length;
    await chooseMore(h, h.card(thread), 'history', 'U0BOB');
    const history = await h.waitFor(
      'the history',
      () => lastPrivate(h!, 'U0BOB')?.args.text?.toString().includes('History') && lastPrivate(h!, 'U0BOB')!,
    );
    expect(history.args).toMatchObject({ channel: 'C0GENERAL', thread_ts: thread });
    expect(privateText(history)).toMatch(/U0BOB|u0bob/);
    expect(privateText(history)).toContain('approve on revision 0: accepted');
    expect(privateText(history)).toContain('edit on revision 0: refused');
    await chooseMore(h, h.card(thread), 'help', 'U0ADA');
    expect(privateText(lastPrivate(h, 'U0ADA')!)).toContain('Steering a run from its card');
    expect(h.slack.callsOf('chat.postMessage')).toHaveLength(posted);
  });

  it('"Ask me first next time" can be undone from its confirmation, and the review preference set from help', async () => {
    const plan = planReply([echo('say', 'hi')]);
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan, plan, plan], synthesizer: ['Said hi.', 'Said hi.', 'Said hi.'] }),
    });
    const ada = { id: 'U0ADA', channel: 'slack' };
    const first = await h.mention('say hi');
    await h.waitFor('the report', () => h!.replies(first).find((m) => messageText(m).includes('Said hi.')));
    await h.press(h.card(first), 'ask-first');
    expect(await h.store.getReviewPreference(ada)).toBe('all');

    const second = await h.mention('say hi again');
    await h.waitFor('a card waiting for review', () =>
      messageText(h!.card(second)).includes('📋 Plan waiting for review'),
    );

    await pressPrivate(h, lastPrivate(h, 'U0ADA')!, 'steward.review');
    expect(await h.store.getReviewPreference(ada)).toBe('risky');
    expect(privateText(lastPrivate(h, 'U0ADA')!)).toContain('medium- and high-risk plans');
    const third = await h.mention('and once more');
    await h.waitFor('the third report', () => h!.replies(third).find((m) => messageText(m).includes('Said hi.')));
    // It started without waiting: its card was first posted running.
    const posted = h.slack.callsOf('chat.postMessage').find((c) => c.args.thread_ts === third)!;
    expect(JSON.stringify(posted.args.blocks)).toContain('▶️ Running');

    await chooseMore(h, h.card(third), 'help');
    await pressPrivate(h, lastPrivate(h, 'U0ADA')!, 'steward.review', 'none');
    expect(await h.store.getReviewPreference(ada)).toBe('none');
    expect(privateText(lastPrivate(h, 'U0ADA')!)).toContain('only high-risk plans');
  });
});
