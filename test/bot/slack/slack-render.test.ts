import { describe, expect, it } from 'vitest';
import { decodeCardRef, refOfBlockId } from '../../../src/bot/slack/slack-actions.ts';
import {
  createLiveCard,
  withBreakpoints,
  withNewRevision,
  withProgress,
  withReport,
  withRunStatus,
} from '../../../src/bot/live-card-state.ts';
import { PICKER_TEXT_BUDGET, renderHelp, renderPreferenceSet } from '../../../src/bot/slack/slack-controls.ts';
import {
  EDIT_TEXT_MAX,
  editErrors,
  editText,
  readEditText,
  renderEditModal,
  tooBigToEdit,
} from '../../../src/bot/slack/slack-edit-modal.ts';
import { readStepsEdit, renderStepsModal, stepsErrors } from '../../../src/bot/slack/slack-edit-steps-modal.ts';
import type { PlanCard } from '../../../src/engine/messages.ts';
import { renderCard, type SlackMessage } from '../../../src/bot/slack/slack-render.ts';
import {
  renderAmendModal,
  renderBreakpoint,
  renderNotice,
  renderReport,
} from '../../../src/bot/slack/slack-thread-render.ts';
import { blockProblems, viewErrorsProblems, viewProblems } from './block-kit-limits.ts';
import { callProgressDetail } from '../../../src/engine/run/call-progress.ts';
import { allTexts, createPlanCard, createProgress, createStep } from './fixtures.ts';

const NOW = 1_700_000_000_000;
const MB = 'x'.repeat(1_000_000);

function expectWithinLimits(message: SlackMessage): void {
  const { problems, textLength } = blockProblems(message.blocks, 50);
  expect(problems).toEqual([]);
  expect(textLength).toBeLessThanOrEqual(12_000);
  expect(message.text.length).toBeLessThanOrEqual(40_000);
}

/** The decision row's buttons (the steering controls sit in a row of their own, see `controls`). */
function buttons(message: SlackMessage): Array<{ action_id: string; value?: string; text: { text: string } }> {
  return message.blocks.flatMap((b) =>
    b.type === 'actions' && !b.block_id?.startsWith('steward.controls') ? (b.elements as never[]) : [],
  );
}

describe('slack card renderer', () => {
  it('a plan waiting for review shows its steps and Approve / Amend / Cancel carrying run and revision', () => {
    const card = createPlanCard({
      revision: 2,
      warnings: ['tool fetch talks to the model'],
      breakpoints: ['step_1'],
      breakpointsBefore: ['step_2'],
    });
    const message = renderCard(createLiveCard(card, NOW), NOW);
    expectWithinLimits(message);
    const text = allTexts(message.blocks).join('\n');
    expect(text).toContain('Plan waiting for review · revision 2');
    expect(text).toContain('`step_2` `everything.echo`');
    expect(text).toContain('after step_1');
    expect(text).toContain('Requested by <@U0ADA>');
    expect(text).toContain('⚠️ *Before you approve*\n• tool fetch talks to the model');
    expect(text).toContain('breakpoint after');
    expect(text).toContain('breakpoint before');
    expect(buttons(message).map((b) => [b.action_id, b.text.text])).toEqual([
      ['steward.approve', 'Approve'],
      ['steward.amend', 'Amend (3 left)'],
      ['steward.cancel', 'Cancel'],
    ]);
    for (const b of buttons(message)) expect(decodeCardRef(b.value)).toEqual({ runId: card.runId, revision: 2 });
  });

  it('an auto-started card says so and offers "ask me first next time"; running shows Pause / Stop and progress', () => {
    let live = createLiveCard(
      createPlanCard({ needsReview: false, autoStarted: true, risk: 'low', actions: ['pause', 'stop'] }),
      NOW,
    );
    live = withProgress(live, createProgress({ status: 'succeeded', finished: 1 }), NOW + 1_000);
    live = withProgress(live, createProgress({ stepId: 'step_2', status: 'running', finished: 1 }), NOW + 2_000);
    const message = renderCard(live, NOW + 65_000);
    expectWithinLimits(message);
    const text = allTexts(message.blocks).join('\n');
    expect(text).toContain('Low risk: started at once, without review');
    expect(text).toContain('Step 1/2');
    expect(text).toContain('⏱️ 1 min 05 s');
    expect(text).toMatch(/✅ \*1\.\*/);
    expect(text).toMatch(/⏳ \*2\.\*/);
    expect(buttons(message).map((b) => b.action_id)).toEqual(['steward.pause', 'steward.stop', 'steward.ask-first']);
  });

  it("a running step's line shows its server's latest progress, its message escaped as any tool text (both forms)", () => {
    let live = createLiveCard(createPlanCard({ needsReview: false, actions: ['pause', 'stop'] }), NOW);
    const detail = callProgressDetail('srv.copy', { progress: 3, total: 8, message: '*all* done <!channel> <@U1>' });
    live = withProgress(live, createProgress({ stepId: 'step_1', status: 'running', detail }), NOW);
    const lines = renderCard(live, NOW);
    expectWithinLimits(lines);
    const text = allTexts(lines.blocks).join('\n');
    // mrkdwn has no escape for `*`: as for any tool text, only what could ping or link is made inert.
    expect(text).toContain('⏳ *1.* `step_1`');
    expect(text).toContain('— running: calling srv.copy: 3 / 8, *all* done &lt;!channel&gt; &lt;@U1&gt;');
    // A task card's output is a plain text element, which Slack never parses.
    const plan = renderCard(live, NOW, { planBlocks: true });
    expectWithinLimits(plan);
    const task = plan.blocks.flatMap((b) => (b.type === 'plan' ? (b.tasks as { output?: unknown }[]) : []))[0];
    expect(task?.output).toEqual({
      type: 'rich_text',
      elements: [
        {
          type: 'rich_text_section',
          elements: [{ type: 'text', text: 'calling srv.copy: 3 / 8, *all* done <!channel> <@U1>' }],
        },
      ],
    });
  });

  it('paused shows Resume / Stop; a finished run keeps no decision buttons and a fixed elapsed time', () => {
    let live = createLiveCard(createPlanCard(), NOW);
    live = withRunStatus(
      live,
      { kind: 'runStatus', runId: live.card.runId, status: 'running', actions: ['pause', 'stop'] },
      NOW,
    );
    live = withRunStatus(
      live,
      { kind: 'runStatus', runId: live.card.runId, status: 'paused', actions: ['resume', 'stop'] },
      NOW + 1_000,
    );
    expect(buttons(renderCard(live, NOW)).map((b) => b.action_id)).toEqual(['steward.resume', 'steward.stop']);
    live = withReport(live, { kind: 'report', runId: live.card.runId, status: 'stopped', text: 'done' }, NOW + 3_000);
    const message = renderCard(live, NOW + 999_000);
    expect(buttons(message)).toEqual([]);
    expect(allTexts(message.blocks).join('\n')).toContain('⏱️ 3 s');
  });

  it('steps held mid-run: finished steps shown done, the real amendment count, Approve, Amend and Stop', () => {
    // Once the footer of such a card said "No amendments left" while 3 remained, and Stop was gone.
    let live = createLiveCard(
      createPlanCard({ needsReview: false, autoStarted: true, actions: ['pause', 'stop'] }),
      NOW,
    );
    live = withProgress(live, createProgress({ status: 'succeeded', finished: 1 }), NOW + 1_000);
    const base = createPlanCard();
    const held = createPlanCard({
      revision: 1,
      actions: ['approve', 'amend', 'stop'],
      amendmentsLeft: 3,
      steps: [{ ...base.steps[0]!, status: 'succeeded', detail: '' }, base.steps[1]!],
      note: 'Step step_2 (everything.echo) was added or changed by an amendment written after seeing tool outputs.',
    });
    const message = renderCard(withNewRevision(live, held, NOW + 2_000), NOW + 3_000);
    expectWithinLimits(message);
    const text = allTexts(message.blocks).join('\n');
    expect(text).toContain('✋ Steps waiting for approval · revision 1');
    expect(text).toMatch(/✅ \*1\.\*/);
    expect(text).toMatch(/⚪ \*2\.\*/);
    expect(text).toContain('Step 1/2');
    expect(text).toContain('Amend changes the steps not yet run (3 left).');
    expect(text).not.toContain('No amendments left');
    expect(buttons(message).map((b) => b.action_id)).toEqual([
      ...['steward.approve', 'steward.amend', 'steward.stop', 'steward.ask-first'],
    ]);
  });

  it('at first review the footer counts the amendments left, and says none only when none are', () => {
    const footer = (amendmentsLeft: number, actions: PlanCard['actions']) =>
      allTexts(renderCard(createLiveCard(createPlanCard({ amendmentsLeft, actions }), NOW), NOW).blocks).join('\n');
    expect(footer(2, ['approve', 'amend', 'cancel'])).toContain('2 amendment(s) left.');
    expect(footer(0, ['approve', 'cancel'])).toContain('No amendments left.');
  });

  it.each([
    ['fetch_the_quarterly_numbers_for_region_', 'high'],
    ['echo_', 'medium'],
  ] as const)('a 60-step plan (ids %s…) shows every step and stays within Block Kit limits', (prefix, risk) => {
    const steps = Array.from({ length: 60 }, (_, i) =>
      createStep(i + 1, {
        id: `${prefix}${i + 1}`,
        target: 'some-long-server-name.some-long-tool-name-that-goes-on',
        argsPreview: JSON.stringify({ query: 'q'.repeat(280) }),
        description: 'd'.repeat(400),
        dependsOn: i > 0 ? [`${prefix}${i}`] : [],
        risk,
      }),
    );
    const message = renderCard(
      createLiveCard(
        createPlanCard({ steps, layers: steps.map((s) => [s.id]), risks: Array(50).fill('may change data') }),
        NOW,
      ),
      NOW,
    );
    expectWithinLimits(message);
    expect(message.blocks.length).toBeLessThanOrEqual(20);
    const text = allTexts(message.blocks).join('\n');
    expect(text).toContain('*60.*');
    expect(text).not.toContain('more step(s)');
  });

  it('a 1 MB output, summary and argument preview, or 500 steps, still render a valid card with a note', () => {
    const huge = createPlanCard({
      summary: MB,
      steps: [createStep(1, { argsPreview: MB, description: MB, id: MB })],
      layers: [[MB]],
      risks: [MB],
      warnings: [MB, MB],
      note: MB,
      breakpoints: [MB],
    });
    let live = createLiveCard(huge, NOW);
    live = withProgress(live, createProgress({ stepId: MB, status: 'failed', detail: MB }), NOW);
    expectWithinLimits(renderCard(live, NOW));
    const many = Array.from({ length: 500 }, (_, i) => createStep(i + 1));
    const message = renderCard(
      createLiveCard(createPlanCard({ steps: many, layers: [many.map((s) => s.id)] }), NOW),
      NOW,
    );
    expectWithinLimits(message);
    expect(allTexts(message.blocks).join('\n')).toMatch(/…and \d+ more step\(s\)/);
  });

  it('mentions and links from plan text or tool output are escaped so they ping nobody', () => {
    const evil = 'hi <!channel> <!here> <@U0EVE> <https://x.test|click> & more';
    let live = createLiveCard(
      createPlanCard({
        summary: evil,
        risks: [evil],
        steps: [createStep(1, { description: evil, argsPreview: evil })],
      }),
      NOW,
    );
    live = withProgress(live, createProgress({ status: 'failed', detail: evil }), NOW);
    const texts = [
      ...allTexts(renderCard(live, NOW).blocks),
      ...allTexts(renderReport({ kind: 'report', runId: 'r', status: 'completed', text: evil }).blocks),
    ];
    for (const t of texts) {
      expect(t).not.toMatch(/<!|<@U0EVE|<https/);
    }
    expect(texts.join('\n')).toContain('&lt;!channel&gt;');
    expect(texts.join('\n')).toContain('&amp; more');
  });

  it('a 1 MB report is cut with a note, never rejected; notices, breakpoints and the modal stay within limits', () => {
    const report = renderReport({
      kind: 'report',
      runId: 'run-1',
      status: 'completed',
      text: `## Result\n**bold**\n${'line of output\n'.repeat(70_000)}`,
    });
    expectWithinLimits(report);
    const text = allTexts(report.blocks).join('\n');
    expect(text).toContain('*Result*');
    expect(text).toMatch(
      /Cut to fit in Slack: the whole text is \d+ characters long\. The full report is stored with run run-1\./,
    );
    expectWithinLimits(renderNotice({ kind: 'notice', level: 'warning', text: MB }));
    const hold = renderBreakpoint({
      kind: 'breakpoint',
      runId: 'r',
      revision: 1,
      stepId: 's',
      before: false,
      output: `\`\`\`${MB}`,
      actions: ['resume', 'stop', 'edit'],
    });
    expectWithinLimits(hold);
    expect(buttons(hold).map((b) => b.action_id)).toEqual(['steward.resume', 'steward.stop']);
    expect(viewProblems(renderAmendModal({ runId: 'r'.repeat(36), revision: 3 }, MB))).toEqual([]);
  });
});

type Element = {
  type: string;
  action_id: string;
  value?: string;
  options?: Array<{ text: { text: string }; value: string }>;
  initial_options?: Array<{ value: string }>;
};

/** The steering controls row of a card. */
function controls(message: SlackMessage): { blockId: string; elements: Element[] } {
  const row = message.blocks.find((b) => b.type === 'actions' && b.block_id?.startsWith('steward.controls'));
  if (row?.type !== 'actions') throw new Error('no controls row');
  return { blockId: row.block_id!, elements: row.elements as Element[] };
}

const byId = (row: { elements: Element[] }, id: string) => row.elements.find((e) => e.action_id === `steward.${id}`);

describe('slack card steering controls', () => {
  it('a card under review offers Edit plan, a picker of its steps with the breakpoints picked, and history / help', () => {
    const card = createPlanCard({ revision: 4, breakpoints: ['step_1'], breakpointsBefore: ['step_2'] });
    const message = renderCard(createLiveCard(card, NOW), NOW);
    expectWithinLimits(message);
    const row = controls(message);
    expect(refOfBlockId(row.blockId)).toEqual({ runId: card.runId, revision: 4 });
    expect(row.elements.map((e) => [e.type, e.action_id])).toEqual([
      ['button', 'steward.edit-plan'],
      ['multi_static_select', 'steward.breakpoints'],
      ['overflow', 'steward.more'],
    ]);
    expect(decodeCardRef(byId(row, 'edit-plan')!.value)).toEqual({ runId: card.runId, revision: 4 });
    const picker = byId(row, 'breakpoints')!;
    expect(picker.options!.map((o) => [o.text.text, o.value])).toEqual([
      ['1. step_1', 'step_1'],
      ['2. step_2', 'step_2'],
    ]);
    expect(picker.initial_options!.map((o) => o.value)).toEqual(['step_1', 'step_2']);
    expect(byId(row, 'more')!.options!.map((o) => o.value)).toEqual(['history', 'plan', 'help']);
  });

  it('a suggested breakpoint is offered with its reason, an "Add suggested breakpoints" button and how to stop the offers, gone once taken', () => {
    const why = 'you stopped a run using everything.echo before';
    const card = createPlanCard({
      revision: 3,
      suggestedBreakpoints: [{ stepId: 'step_2', tool: 'everything.echo', why }],
    });
    const offered = renderCard(createLiveCard(card, NOW), NOW);
    expectWithinLimits(offered);
    const text = allTexts(offered.blocks).join('\n');
    expect(text).toContain(
      `*Suggested breakpoints* (not set: Approve does not stop at them)\n• before step_2: ${why}\n_\`/steward suggestions off\` stops these offers._`,
    );
    expect(text).toMatch(/\*2\.\*.*breakpoint suggested before/);
    const row = controls(offered);
    expect(row.elements.map((e) => e.action_id)).toEqual([
      'steward.edit-plan',
      'steward.take-suggestions',
      'steward.breakpoints',
      'steward.more',
    ]);
    expect(decodeCardRef(byId(row, 'take-suggestions')!.value)).toEqual({ runId: card.runId, revision: 3 });
    // Not set: the picker shows no breakpoint until the person takes it; then the offer is gone and the hold shown.
    expect(byId(row, 'breakpoints')!.initial_options).toBeUndefined();
    const taken = withBreakpoints(createLiveCard(card, NOW), [{ stepId: 'step_2', when: 'before' }]);
    const after = renderCard(taken, NOW);
    expect(controls(after).elements.map((e) => e.action_id)).not.toContain('steward.take-suggestions');
    expect(allTexts(after.blocks).join('\n')).not.toContain('Suggested breakpoints');
    expect(allTexts(after.blocks).join('\n')).not.toContain('suggestions off');
    expect(allTexts(after.blocks).join('\n')).toMatch(/\*2\.\*.*breakpoint before/);
    expect(byId(controls(after), 'breakpoints')!.initial_options!.map((o) => o.value)).toEqual(['step_2']);
  });

  it('while running only steps not yet run are offered; a finished or stopping run keeps only history and help', () => {
    let live = createLiveCard(createPlanCard({ needsReview: false, actions: ['pause', 'stop'] }), NOW);
    live = withProgress(live, createProgress({ status: 'succeeded', finished: 1 }), NOW);
    const picker = byId(controls(renderCard(live, NOW)), 'breakpoints')!;
    expect(picker.options!.map((o) => o.value)).toEqual(['step_2']);
    expect(picker.initial_options).toBeUndefined();
    const stopping = withRunStatus(
      live,
      { kind: 'runStatus', runId: live.card.runId, status: 'stopping', actions: ['stop'] },
      NOW,
    );
    expect(controls(renderCard(stopping, NOW)).elements.map((e) => e.action_id)).toEqual(['steward.more']);
    const done = withReport(live, { kind: 'report', runId: live.card.runId, status: 'completed', text: 'ok' }, NOW);
    expect(controls(renderCard(done, NOW)).elements.map((e) => e.action_id)).toEqual(['steward.more']);
  });

  it('breakpoints as stored are drawn on the step lines and picked in the picker', () => {
    const live = withBreakpoints(createLiveCard(createPlanCard(), NOW), [{ stepId: 'step_2', when: 'after' }]);
    const message = renderCard(live, NOW);
    expect(byId(controls(message), 'breakpoints')!.initial_options!.map((o) => o.value)).toEqual(['step_2']);
    expect(allTexts(message.blocks).join('\n')).toMatch(/\*2\.\*.*breakpoint after/);
    const cleared = renderCard(withBreakpoints(live, []), NOW);
    expect(byId(controls(cleared), 'breakpoints')!.initial_options).toBeUndefined();
    expect(allTexts(cleared.blocks).join('\n')).not.toContain('breakpoint after');
  });

  it('a 100-step plan with 40-character ids, every step held, fits: 100 options, short labels, within Slack limits', () => {
    const steps = Array.from({ length: 100 }, (_, i) =>
      createStep(i + 1, {
        id: `fetch_the_quarterly_numbers_for_regio${String(i).padStart(3, '0')}`,
        argsPreview: JSON.stringify({ query: 'q'.repeat(280) }),
        description: 'd'.repeat(400),
      }),
    );
    const ids = steps.map((s) => s.id);
    const card = createPlanCard({ steps, layers: [ids], breakpoints: ids, risks: Array(50).fill('may change data') });
    // With a long note and warnings too the card is near Slack's total: it still fits (the picker gives way first).
    const crowded = { ...card, warnings: ['w'.repeat(900)], note: 'n'.repeat(3_000) };
    expectWithinLimits(renderCard(createLiveCard(crowded, NOW), NOW));
    const message = renderCard(createLiveCard(card, NOW), NOW);
    expectWithinLimits(message);
    const picker = byId(controls(message), 'breakpoints')!;
    expect(picker.options).toHaveLength(100);
    expect(picker.initial_options).toHaveLength(100);
    const labels = picker.options!.map((o) => o.text.text);
    expect(labels.join('').length).toBeLessThanOrEqual(PICKER_TEXT_BUDGET);
    expect(labels[99]).toMatch(/^(#100|100\. fe)/);
    // Sixty steps still get their ids, shortened.
    const sixty = renderCard(createLiveCard(createPlanCard({ steps: steps.slice(0, 60), layers: [ids] }), NOW), NOW);
    expect(byId(controls(sixty), 'breakpoints')!.options![11]!.text.text).toBe('12. fetch_the_quart…');
  });

  it('the edit modal holds the whole plan as JSON, indented when it fits; errors name its input block', () => {
    const plan = { summary: 'Say hi', steps: [{ id: 's1', tool: 'everything.echo', args: { message: 'hi' } }] };
    const text = editText(plan)!;
    expect(text).toContain('\n  "summary"');
    expect(JSON.parse(text)).toEqual(plan);
    const editable = { revision: 2, status: 'running' as const, plan, breakpoints: [], started: ['s1'] };
    const modal = renderEditModal({ runId: 'r'.repeat(36), revision: 2 }, editable, text);
    expect(viewProblems(modal)).toEqual([]);
    expect(allTexts(modal.blocks).join('\n')).toContain('Steps that started must stay as they are: s1');
    expect(JSON.stringify(modal)).toContain(JSON.stringify(text));
    expect(viewErrorsProblems(editErrors(MB), modal)).toEqual([]);
    expect(editErrors(MB).errors.plan!.length).toBeLessThanOrEqual(1_000);
  });

  it('a plan too long for indenting goes on one line; one too long for the box is refused with its size, never cut', () => {
    const steps = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ id: `s${i}`, tool: 'everything.echo', args: { message: 'hello there' } }));
    const medium = { summary: 'x', steps: steps(30) };
    expect(JSON.stringify(medium, null, 2).length).toBeGreaterThan(EDIT_TEXT_MAX);
    expect(editText(medium)).toBe(JSON.stringify(medium));
    const big = { summary: 'x', steps: steps(80) };
    expect(editText(big)).toBeNull();
    expect(tooBigToEdit(big)).toContain(
      `This plan is ${JSON.stringify(big).length.toLocaleString('en-US')} characters`,
    );
    const bad = readEditText('{"steps": [');
    expect(bad.ok ? '' : bad.error).toMatch(/^That is not valid JSON: .+\. Nothing changed\.$/);
  });

  it('a plan too long for one box gets a box per step not yet run, read back in plan order; errors land under their box', () => {
    const step = (id: string) => ({
      id,
      kind: 'tool',
      tool: 'everything.echo',
      args: { message: `hello ${id} `.repeat(8) },
    });
    const plan = { summary: 'x', steps: Array.from({ length: 40 }, (_, i) => step(`s${i}`)) };
    const editable = { revision: 1, status: 'running' as const, plan, breakpoints: [], started: ['s0', 's1'] };
    const modal = renderStepsModal({ runId: 'r'.repeat(36), revision: 1 }, editable)!;
    expect(viewProblems(modal)).toEqual([]);
    const ids = modal.blocks.flatMap((b) => (b.type === 'input' ? [b.block_id] : []));
    expect(ids).toEqual([...plan.steps.slice(2).map((s) => `step:${s.id}`), 'new-steps']);

    const values: Record<string, Record<string, { value?: string }>> = {
      'step:s2': { json: { value: JSON.stringify({ ...step('s2'), args: { message: 'changed' } }) } },
      'step:s3': { json: { value: '  ' } },
      'new-steps': { json: { value: JSON.stringify([step('extra')]) } },
    };
    for (const s of plan.steps.slice(4)) values[`step:${s.id}`] = { json: { value: JSON.stringify(s) } };
    const read = readStepsEdit(values, editable);
    const edited = (read.ok ? read.value : { steps: [] }) as { steps: Array<{ id: string; args: unknown }> };
    expect(edited.steps.map((s) => s.id)).toEqual(['s0', 's1', 's2', ...plan.steps.slice(4).map((s) => s.id), 'extra']);
    expect(edited.steps[2]!.args).toEqual({ message: 'changed' });

    const wrong = readStepsEdit(
      { ...values, 'step:s5': { json: { value: '{' } }, 'new-steps': { json: { value: '{}' } } },
      editable,
    );
    expect(wrong.ok ? [] : Object.keys(wrong.error).sort()).toEqual(['new-steps', 'step:s5']);
    expect(stepsErrors('That edit was refused: step s7: unknown tool', values).errors).toHaveProperty('step:s7');
    expect(stepsErrors('That edit was refused: a cycle', values).errors).toHaveProperty('new-steps');
    expect(viewErrorsProblems(stepsErrors('step s7: x', values), modal)).toEqual([]);

    const huge = {
      ...editable,
      plan: { summary: 'x', steps: [{ ...step('a'), args: { message: 'x'.repeat(3_100) } }] },
    };
    expect(renderStepsModal({ runId: 'r', revision: 1 }, huge)).toBeNull();
    const many = {
      ...editable,
      started: [],
      plan: { summary: 'x', steps: Array.from({ length: 98 }, (_, i) => step(`m${i}`)) },
    };
    // More steps than a form's 100 blocks hold: pages, each within Slack's limits, the menu naming the others.
    const paged = renderStepsModal({ runId: 'r', revision: 1 }, many)!;
    expect(viewProblems(paged)).toEqual([]);
    const shown = paged.blocks.flatMap((b) =>
      b.type === 'input' && b.block_id?.startsWith('step:') ? [b.block_id] : [],
    );
    expect(shown[0]).toBe('step:m0');
    expect(shown.length).toBeLessThan(98);
    expect(JSON.stringify(paged.blocks)).toContain('Page 1 of 2');
    const rest = renderStepsModal({ runId: 'r', revision: 1 }, many, `m${shown.length}`)!;
    expect(
      rest.blocks.flatMap((b) => (b.type === 'input' && b.block_id?.startsWith('step:') ? [b.block_id] : [])),
    ).toEqual(many.plan.steps.slice(shown.length).map((s) => `step:${s.id}`));
  });

  it('help and the review-preference answers stay within limits; "ask me first" comes with a way back', () => {
    for (const m of [
      renderHelp(),
      renderPreferenceSet('all'),
      renderPreferenceSet('risky'),
      renderPreferenceSet('none'),
    ])
      expectWithinLimits(m);
    const undo = renderPreferenceSet('all').blocks.flatMap((b) =>
      b.type === 'actions' ? (b.elements as Element[]) : [],
    );
    expect(undo.map((e) => [e.action_id, e.value])).toEqual([['steward.review', 'risky']]);
    const help = JSON.stringify(renderHelp());
    for (const p of ['all', 'risky', 'none']) expect(help).toContain(`"value":"${p}"`);
  });

  it('a long history notice is shown whole over several sections, not cut at the first one', () => {
    const lines = Array.from(
      { length: 60 },
      (_, i) => `2026-12-01T15:${String(i).padStart(2, '0')}:00.000Z  ada (slack) pause on revision ${i}: accepted`,
    );
    const message = renderNotice({
      kind: 'notice',
      level: 'info',
      text: `History of "x":\n${lines.join('\n')}`,
      to: { id: 'U0ADA', channel: 'slack' },
    });
    expectWithinLimits(message);
    const text = allTexts(message.blocks).join('\n');
    expect(message.blocks.length).toBeGreaterThan(1);
    expect(text).toContain('pause on revision 59: accepted');
    expect(text).not.toContain('Cut to fit');
  });

  it('the limits checker refuses menus Slack would refuse (so the tests above can fail)', () => {
    const opt = (v: string, text = v) => ({ text: { type: 'plain_text', text }, value: v });
    const menu = (e: Record<string, unknown>) => blockProblems([{ type: 'actions', elements: [e] }], 50).problems;
    expect(
      menu({
        type: 'multi_static_select',
        action_id: 'a',
        options: Array.from({ length: 101 }, (_, i) => opt(`v${i}`)),
      }),
    ).not.toEqual([]);
    expect(
      menu({ type: 'multi_static_select', action_id: 'a', options: [opt('a')], initial_options: [opt('b')] }),
    ).not.toEqual([]);
    expect(
      menu({ type: 'overflow', action_id: 'a', options: Array.from({ length: 6 }, (_, i) => opt(`v${i}`)) }),
    ).not.toEqual([]);
    expect(menu({ type: 'static_select', action_id: 'a', options: [opt('a', 'x'.repeat(76))] })).not.toEqual([]);
    expect(menu({ type: 'static_select', action_id: 'a', options: [opt('v'.repeat(151))] })).not.toEqual([]);
    expect(
      viewErrorsProblems(
        { response_action: 'errors', errors: { nope: 'x' } },
        renderAmendModal({ runId: 'r', revision: 0 }, 's'),
      ),
    ).not.toEqual([]);
  });
});

describe('a card with every field at its longest', () => {
  it('stays under the text Slack accepts: once, long notes and risks plus 20 long steps came to 12,160 characters', () => {
    // Slack refuses a message of roughly 12,000 characters of text (msg_blocks_too_long): the card would not be posted.
    const big = '<&'.repeat(5_000);
    for (const n of [1, 20, 50, 200]) {
      for (const planBlocks of [false, true]) {
        const steps = Array.from({ length: n }, (_, i) =>
          createStep(i + 1, { id: `s${i}`, argsPreview: big, description: big, target: big }),
        );
        const card = createPlanCard({
          summary: big,
          note: big,
          risks: Array<string>(10).fill(big),
          warnings: Array<string>(10).fill(big),
          steps,
          layers: [steps.map((s) => s.id)],
          breakpoints: steps.map((s) => s.id),
        });
        const live = createLiveCard(card, 0);
        const { problems, textLength } = blockProblems(renderCard(live, 5, { planBlocks }).blocks, 50);
        expect(problems).toEqual([]);
        expect(textLength).toBeLessThanOrEqual(12_000);
      }
    }
  });
});
