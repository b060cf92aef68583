import { describe, expect, it } from 'vitest';
import { feedbackBlock, feedbackOf, withoutFeedback } from '../../../src/bot/slack/slack-feedback.ts';
import { renderReport } from '../../../src/bot/slack/slack-thread-render.ts';
import { blockProblems } from './block-kit-limits.ts';

const ada = { id: 'U0ADA', channel: 'slack' };

describe('feedback buttons', () => {
  it('a report carries them within Block Kit limits; the fake refuses a malformed context_actions block', () => {
    const report = renderReport({ kind: 'report', runId: 'run-1', status: 'completed', text: 'Done.' });
    expect(report.blocks.at(-1)).toEqual(feedbackBlock('run-1'));
    expect(blockProblems(report.blocks, 50).problems).toEqual([]);
    expect(withoutFeedback(report).blocks.some((b) => b.type === 'context_actions')).toBe(false);

    const element = feedbackBlock('run-1').elements[0]!;
    const broken = [
      { type: 'context_actions', elements: [] },
      { type: 'context_actions', elements: Array.from({ length: 6 }, () => element) },
      { type: 'context_actions', elements: [{ ...element, negative_button: undefined }] },
      {
        type: 'context_actions',
        elements: [{ type: 'button', action_id: 'x', text: { type: 'plain_text', text: 'x' } }],
      },
      {
        type: 'context_actions',
        elements: [
          {
            ...element,
            positive_button: {
              text: { type: 'plain_text', text: '👍' },
              value: 'v',
              accessibility_label: 'x'.repeat(76),
            },
          },
        ],
      },
    ];
    for (const block of broken) expect(blockProblems([block], 50).problems, JSON.stringify(block)).not.toEqual([]);
  });

  it('a press gives the run and the rating; anything else is not feedback', () => {
    expect(feedbackOf({ type: 'feedback_buttons', action_id: 'steward.feedback', value: 'bad:run-1' }, ada)).toEqual({
      runId: 'run-1',
      actor: ada,
      rating: 'bad',
    });
    expect(feedbackOf({ type: 'button', action_id: 'steward.feedback', value: 'bad:run-1' }, ada)).toBeNull();
    expect(feedbackOf({ type: 'feedback_buttons', action_id: 'steward.feedback', value: 'meh:run-1' }, ada)).toBeNull();
  });
});
