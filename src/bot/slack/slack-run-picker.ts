/**
 * The run picker as a Slack message (pure): one section per run with its own button, whose value carries the run
 * and revision as a card's buttons do, so a press goes through the same listener and the engine's same checks
 * (its action id carries its place too, since Slack refuses repeated action ids in one message).
 */
import type { types } from '@slack/bolt';
import type { RunPicker } from '../run-picker.ts';
import { encodeCardRef, listedDecisionActionId } from './slack-actions.ts';
import { decisionButtons } from './slack-buttons.ts';
import type { SlackMessage } from './slack-render.ts';
import { safeMrkdwn } from './slack-text.ts';

/** The picker's blocks: the question, a line and a button per run, and how many were left out. */
export function renderRunPicker(picker: RunPicker): SlackMessage {
  const rows: types.KnownBlock[] = picker.entries.map((entry, index) => {
    const [button] = decisionButtons([entry.action], encodeCardRef(entry), 0);
    return {
      type: 'section',
      text: { type: 'mrkdwn', text: safeMrkdwn(entry.line, 300) },
      ...(button && { accessory: { ...button, action_id: listedDecisionActionId(entry.action, index) } }),
    };
  });
  const more: types.KnownBlock[] = picker.more
    ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: safeMrkdwn(picker.more, 200) }] }]
    : [];
  return {
    text: picker.intro,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: safeMrkdwn(picker.intro, 300) } }, ...rows, ...more],
  };
}
