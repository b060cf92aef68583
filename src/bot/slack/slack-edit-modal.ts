/**
 * The edit modal (pure): the run's whole stored plan as JSON in one text box, and the answers to its submission.
 * Slack's text box holds 3,000 characters; a plan that does not fit is refused with a sentence, never cut.
 */
import type { types, ViewErrorsResponseAction } from '@slack/bolt';
import type { EditablePlan } from '../../engine/channel.ts';
import type { Result } from '../../engine/result.ts';
import type { Json } from '../../engine/types.ts';
import { EDIT_INPUT, EDIT_VIEW, encodeCardRef, type CardRef } from './slack-actions.ts';
import { cutText, safeMrkdwn } from './slack-text.ts';

/** The most characters Slack's plain_text_input holds. */
export const EDIT_TEXT_MAX = 3_000;
const ERROR_MAX = 1_000;

/** The plan as the box shows it: indented when that fits, else on one line; null when even that is too long. */
export function editText(plan: Json): string | null {
  const pretty = JSON.stringify(plan, null, 2);
  if (pretty.length <= EDIT_TEXT_MAX) return pretty;
  const compact = JSON.stringify(plan);
  return compact.length <= EDIT_TEXT_MAX ? compact : null;
}

/** Why a plan too long for Slack's text box cannot be edited here, and what to do instead. */
export function tooBigToEdit(plan: Json): string {
  const chars = JSON.stringify(plan).length.toLocaleString('en-US');
  return (
    `This plan is ${chars} characters of JSON, more than the 3,000 a Slack text box holds, so it cannot be edited ` +
    'here without cutting it. Use *Amend* to say in words what should change, or *Hold after steps…* to check ' +
    'results before the run goes on.'
  );
}

/** The modal for editing the plan of a card; the run and revision travel in `private_metadata`. */
export function renderEditModal(ref: CardRef, editable: EditablePlan, text: string): types.ModalView {
  const blocks: types.KnownBlock[] = [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `Revision ${ref.revision}. Change the JSON and save: it is checked like any plan, and anything wrong is shown here before the plan changes.`,
      },
    },
  ];
  if (editable.started.length > 0)
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: safeMrkdwn(`Steps that started must stay as they are: ${editable.started.join(', ')}`, 1_000),
          verbatim: true,
        },
      ],
    });
  blocks.push({
    type: 'input',
    block_id: EDIT_INPUT.block,
    label: { type: 'plain_text', text: 'The plan as JSON' },
    element: {
      type: 'plain_text_input',
      action_id: EDIT_INPUT.element,
      multiline: true,
      initial_value: text,
      min_length: 2,
      max_length: EDIT_TEXT_MAX,
    },
  });
  return {
    type: 'modal',
    callback_id: EDIT_VIEW,
    private_metadata: encodeCardRef(ref),
    title: { type: 'plain_text', text: 'Edit the plan' },
    submit: { type: 'plain_text', text: 'Save' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks,
  };
}

/** The submitted text as JSON, or the parser's complaint as a sentence. */
export function readEditText(text: string): Result<Json> {
  try {
    return { ok: true, value: JSON.parse(text) as Json };
  } catch (err) {
    const why = (err as Error).message.replace(/\s+/g, ' ');
    return { ok: false, error: `That is not valid JSON: ${why}. Nothing changed.` };
  }
}

/** The view_submission answer that keeps the modal open and shows `message` under the JSON box. */
export function editErrors(message: string): ViewErrorsResponseAction {
  return { response_action: 'errors', errors: { [EDIT_INPUT.block]: cutText(message, ERROR_MAX) } };
}
