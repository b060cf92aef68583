/**
 * Feedback buttons under a report: Slack's `feedback_buttons` element in a `context_actions` block (@slack/types
 * `FeedbackButtons`, https://docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element). A press
 * arrives as a block action whose value is the pressed button's; it is stored with the run (last one per person counts).
 */
import type { types } from '@slack/bolt';
import type { InboundFeedback } from '../../engine/channel.ts';
import type { Actor } from '../../engine/types.ts';

/** The action id of the feedback buttons. */
export const FEEDBACK_ACTION = 'steward.feedback';

/** The block with 👍 and 👎 for a run's report. */
export function feedbackBlock(runId: string): types.ContextActionsBlock {
  return {
    type: 'context_actions',
    elements: [
      {
        type: 'feedback_buttons',
        action_id: FEEDBACK_ACTION,
        positive_button: {
          text: { type: 'plain_text', text: '👍' },
          accessibility_label: 'This report was useful',
          value: `good:${runId}`,
        },
        negative_button: {
          text: { type: 'plain_text', text: '👎' },
          accessibility_label: 'This report was not useful',
          value: `bad:${runId}`,
        },
      },
    ],
  };
}

/** The feedback a block action gives, or null when it is not a press of the feedback buttons. */
export function feedbackOf(
  action: { type?: string; action_id?: string; value?: unknown },
  actor: Actor,
): InboundFeedback | null {
  if (action.type !== 'feedback_buttons' || action.action_id !== FEEDBACK_ACTION || typeof action.value !== 'string')
    return null;
  const m = /^(good|bad):([\w-]{1,100})$/.exec(action.value);
  return m ? { runId: m[2]!, actor, rating: m[1] as 'good' | 'bad' } : null;
}

/** A message without its feedback buttons (for a workspace that refuses the block). */
export function withoutFeedback<T extends { blocks: types.KnownBlock[] }>(message: T): T {
  return { ...message, blocks: message.blocks.filter((b) => b.type !== 'context_actions') };
}
