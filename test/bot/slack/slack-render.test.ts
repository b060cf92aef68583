import { describe, expect, it } from 'vitest';
import { decodeCardRef } from '../../../src/bot/slack/slack-actions.ts';
import {
  createLiveCard,
  withNewRevision,
  withProgress,
  withReport,
  withRunStatus,
} from '../../../src/bot/slack/slack-card-state.ts';
import type { PlanCard } from '../../../src/engine/messages.ts';
import { renderCard, type SlackMessage } from '../../../src/bot/slack/slack-render.ts';
import {
  renderAmendModal,
  renderBreakpoint,
  renderNotice,
  renderReport,
} from '../../../src/bot/slack/slack-thread-render.ts';
import { blockProblems, viewProblems } from './block-kit-limits.ts';
import { allTexts, createPlanCard, createProgress, createStep } from './fixtures.ts';

const NOW = 1_700_000_000_000;
const MB = 'x'.repeat(1_000_000);

function expectWithinLimits(message: SlackMessage): void {
  const { problems, textLength } = blockProblems(message.blocks, 50);
  expect(problems).toEqual([]);
  expect(textLength).toBeLessThanOrEqual(12_000);
  expect(message.text.length).toBeLessThanOrEqual(40_000);
}

function buttons(message: SlackMessage): Array<{ action_id: string; value?: string; text: { text: string } }> {
  return message.blocks.flatMap((b) => (b.type === 'actions' ? (b.elements as never[]) : []));
}

describe('slack card renderer', () => {
  it('a plan waiting for review shows its steps and Approve / Amend / Cancel carrying run and revision', () => {
    const card = createPlanCard({
      revision: 2,
      warnings: ['tool fetch talks to the model'],
      breakpoints: ['step_1'],
      suggestedBreakpoints: ['step_2'],
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
    expect(text).toContain('suggested breakpoint before');
    expect(buttons(message).map((b) => [b.action_id, b.text.text])).toEqual([
      ['steward.approve', 'Approve'],
      ['steward.amend', 'Amend (3 left)'],
      ['steward.cancel', 'Cancel'],
    ]);
    for (const b of buttons(message)) expect(decodeCardRef(b.value)).toEqual({ runId: card.runId, revision: 2 });
  });

  it('an auto-started card says so and offers "ask me first next time"; running shows Pause / Stop and progress', () => {
    let live = createLiveCard(createPlanCard({ needsReview: false, risk: 'low', actions: ['pause', 'stop'] }), NOW);
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

  it('steps held mid-run: finished steps shown done, the real amendment count, Approve and Stop', () => {
    // Once the footer of such a card said "No amendments left" while 3 remained, and Stop was gone.
    let live = createLiveCard(createPlanCard({ needsReview: false, actions: ['pause', 'stop'] }), NOW);
    live = withProgress(live, createProgress({ status: 'succeeded', finished: 1 }), NOW + 1_000);
    const base = createPlanCard();
    const held = createPlanCard({
      revision: 1,
      actions: ['approve', 'stop'],
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
    expect(text).toContain('3 amendment(s) left');
    expect(text).not.toContain('No amendments left');
    expect(buttons(message).map((b) => b.action_id)).toEqual(['steward.approve', 'steward.stop', 'steward.ask-first']);
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
