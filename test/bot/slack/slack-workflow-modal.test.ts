/** "Save as workflow" on Slack, as pure rendering: the button on a completed card, the modal, its submission. */
import { describe, expect, it } from 'vitest';
import { createLiveCard, withReport, withRunStatus } from '../../../src/bot/live-card-state.ts';
import { decodeCardRef, SAVE_WORKFLOW_ACTION } from '../../../src/bot/slack/slack-actions.ts';
import { renderCard } from '../../../src/bot/slack/slack-render.ts';
import {
  readSaveWorkflow,
  renderSaveWorkflowModal,
  renderWorkflowAnswer,
  type SaveModalValues,
} from '../../../src/bot/slack/slack-workflow-modal.ts';
import type { RunStatus } from '../../../src/engine/types.ts';
import { blockProblems, viewErrorsProblems, viewProblems } from './block-kit-limits.ts';
import { allTexts, createPlanCard } from './fixtures.ts';

const NOW = 1_700_000_000_000;
const RUN = '0c5f8d1e-3b7a-4c2e-9f60-1a2b3c4d5e6f';
const target = { runId: RUN, revision: 2, channel: 'C0OPS', threadTs: '1700000000.000100' };

type Button = { action_id: string; value: string; text: { text: string } };
function buttonsOf(blocks: unknown[]): Button[] {
  return (blocks as Array<{ type: string; elements?: Button[] }>).flatMap((b) =>
    b.type === 'actions' ? (b.elements ?? []) : [],
  );
}

function ended(status: RunStatus, autoStarted = false) {
  const live = createLiveCard(
    createPlanCard({ runId: RUN, revision: 2, needsReview: !autoStarted, ...(autoStarted && { autoStarted }) }),
    NOW,
  );
  const report = { kind: 'report' as const, runId: RUN, status, text: 'done' };
  return withReport(withRunStatus(live, { kind: 'runStatus', runId: RUN, status, actions: [] }, NOW), report, NOW);
}

function submitted(name: string, everyFire: boolean): SaveModalValues {
  return {
    'workflow-name': { name: { value: name } },
    'workflow-review': { 'every-fire': { selected_options: everyFire ? [{ value: 'every-fire' }] : [] } },
  };
}

describe('Save as workflow on a Slack card', () => {
  it('is offered on the card of a completed run only, carrying its run and revision', () => {
    const message = renderCard(ended('completed'), NOW);
    const save = buttonsOf(message.blocks).find((b) => b.action_id === SAVE_WORKFLOW_ACTION);
    expect(save?.text.text).toBe('Save as workflow');
    expect(decodeCardRef(save?.value)).toEqual({ runId: RUN, revision: 2 });
    expect(SAVE_WORKFLOW_ACTION.length).toBeLessThanOrEqual(255);
    expect(blockProblems(message.blocks, 50).problems).toEqual([]);
    // Beside "ask me first" on a card that started unreviewed.
    expect(buttonsOf(renderCard(ended('completed', true), NOW).blocks).map((b) => b.action_id)).toEqual([
      SAVE_WORKFLOW_ACTION,
      'steward.ask-first',
      'steward.more',
    ]);
    for (const status of ['failed', 'stopped', 'cancelled'] as const)
      expect(buttonsOf(renderCard(ended(status), NOW).blocks).map((b) => b.action_id)).not.toContain(
        SAVE_WORKFLOW_ACTION,
      );
    const waiting = createLiveCard(createPlanCard({ runId: RUN }), NOW);
    expect(buttonsOf(renderCard(waiting, NOW).blocks).map((b) => b.action_id)).not.toContain(SAVE_WORKFLOW_ACTION);
  });

  it('opens a modal asking for the name and whether every fire waits for approval, within Slack limits', () => {
    const modal = renderSaveWorkflowModal(target, `Digest <!channel> ${'x'.repeat(5_000)}`);
    expect(viewProblems(modal)).toEqual([]);
    expect(modal.title.text).toBe('Save as workflow');
    const texts = allTexts(modal.blocks).join('\n');
    expect(texts).toContain('Digest &lt;!channel&gt;');
    expect(texts).toContain('Approve every fire');
    expect(modal.private_metadata!.length).toBeLessThanOrEqual(3_000);
  });

  it('a submission is the save command for that run and thread; every-fire when the box is ticked', () => {
    const modal = renderSaveWorkflowModal(target, 'Digest');
    expect(readSaveWorkflow(modal.private_metadata!, submitted('  digest ', false))).toEqual({
      target,
      text: 'save digest',
    });
    expect(readSaveWorkflow(modal.private_metadata!, submitted('Nightly-Report', true))).toEqual({
      target,
      text: 'save Nightly-Report every-fire',
    });
  });

  it('a name of several words keeps the modal open and says so; a foreign modal is left alone', () => {
    const modal = renderSaveWorkflowModal(target, 'Digest');
    const refused = readSaveWorkflow(modal.private_metadata!, submitted('my digest', false));
    expect(refused).toEqual({
      response_action: 'errors',
      errors: { 'workflow-name': 'One word, such as digest or nightly-report.' },
    });
    expect(viewErrorsProblems(refused, modal)).toEqual([]);
    expect(readSaveWorkflow(modal.private_metadata!, {})).toMatchObject({ response_action: 'errors' });
    for (const metadata of ['', 'nope', '{"runId":"r","revision":1}', JSON.stringify({ ...target, revision: 'x' })])
      expect(readSaveWorkflow(metadata, submitted('digest', false))).toBeNull();
  });

  it("shows the engine's answer escaped and within a section's limit", () => {
    const answer = renderWorkflowAnswer(`Saved <!here> & <@U0EVE> ${'y'.repeat(10_000)}`);
    expect(blockProblems(answer.blocks, 50).problems).toEqual([]);
    expect((answer.blocks[0] as { text: { text: string } }).text.text).toMatch(
      /^Saved &lt;!here&gt; &amp; &lt;@U0EVE&gt; y/,
    );
  });
});
