/**
 * The buttons of a live card (pure): the engine's valid actions, plus "ask me first" on a card that started
 * unreviewed, and "Save as workflow" once the run completed.
 */
import type { types } from '@slack/bolt';
import type { DecisionAction } from '../../engine/types.ts';
import { ASK_FIRST_ACTION, decisionActionId, encodeCardRef } from './slack-actions.ts';
import { CONFIRM_WORDS, DECISION_LABELS } from '../card-words.ts';
import { isFinished, type LiveCard } from '../live-card-state.ts';
import { saveWorkflowButton } from './slack-workflow-modal.ts';

const STYLES: Partial<Record<DecisionAction, 'primary' | 'danger'>> = {
  approve: 'primary',
  resume: 'primary',
  cancel: 'danger',
  stop: 'danger',
};
const CONFIRMS: Partial<Record<DecisionAction, (typeof CONFIRM_WORDS)['stop']>> = CONFIRM_WORDS;

/** The buttons to show now; each carries the run and the revision of the card it sits on. */
export function planButtons(live: LiveCard): types.Button[] {
  const value = encodeCardRef({ runId: live.card.runId, revision: live.card.revision });
  const buttons = isFinished(live) ? [] : decisionButtons(live.actions, value, live.card.amendmentsLeft);
  if (live.status === 'completed') buttons.push(saveWorkflowButton(live.card));
  if (live.autoStarted) {
    buttons.push({
      type: 'button',
      action_id: ASK_FIRST_ACTION,
      text: { type: 'plain_text', text: 'Ask me first next time' },
      value,
    });
  }
  return buttons;
}

/** Buttons for the decisions Slack can offer, in the engine's order; others are left out. */
export function decisionButtons(
  actions: readonly DecisionAction[],
  value: string,
  amendmentsLeft: number,
): types.Button[] {
  return actions.flatMap((action) => {
    const label = action === 'amend' ? `Amend (${amendmentsLeft} left)` : DECISION_LABELS[action];
    return label ? [decisionButton(action, label, value)] : [];
  });
}

function decisionButton(action: DecisionAction, label: string, value: string): types.Button {
  const button: types.Button = {
    type: 'button',
    action_id: decisionActionId(action),
    text: { type: 'plain_text', text: label },
    value,
  };
  const style = STYLES[action];
  if (style) button.style = style;
  const confirm = CONFIRMS[action];
  if (confirm) {
    button.confirm = {
      title: { type: 'plain_text', text: confirm.title },
      text: { type: 'plain_text', text: confirm.text },
      confirm: { type: 'plain_text', text: confirm.confirm },
      deny: { type: 'plain_text', text: confirm.keep },
    };
    if (style === 'danger') button.confirm.style = 'danger';
  }
  return button;
}
