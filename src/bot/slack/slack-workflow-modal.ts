/**
 * "Save as workflow" on the card of a completed run (pure): the button, the modal asking for the name (and whether
 * every fire waits for approval), reading its submission back, and the private answer. The modal carries the run and
 * revision like every card control, and the thread the card is in, where the answer goes.
 */
import type { types, ViewErrorsResponseAction } from '@slack/bolt';
import { isOneWord, saveCommandText, WORKFLOW_NAME_MAX } from '../workflow-words.ts';
import {
  encodeCardRef,
  SAVE_WORKFLOW_ACTION,
  SAVE_WORKFLOW_INPUTS,
  SAVE_WORKFLOW_VIEW,
  type CardRef,
} from './slack-actions.ts';
import { workflowAnswerText } from './slack-command-text.ts';
import type { SlackMessage } from './slack-render.ts';
import { safeMrkdwn } from './slack-text.ts';

/** Characters a section's text holds (Slack's limit is 3,000). */
const SECTION_MAX = 2_900;

/** The run a save modal is for, and the thread its card is in. */
export interface SaveTarget extends CardRef {
  channel: string;
  threadTs: string;
}

/** What a submitted save modal asks for: the command text the engine takes. */
export interface SaveRequest {
  target: SaveTarget;
  text: string;
}

/** The button on a completed run's card; its value is the card's run and revision, as on every button. */
export function saveWorkflowButton(ref: CardRef): types.Button {
  return {
    type: 'button',
    action_id: SAVE_WORKFLOW_ACTION,
    text: { type: 'plain_text', text: 'Save as workflow' },
    value: encodeCardRef(ref),
  };
}

/** The modal asking for the workflow's name, with a checkbox for approving every fire. */
export function renderSaveWorkflowModal(target: SaveTarget, summary: string): types.ModalView {
  return {
    type: 'modal',
    callback_id: SAVE_WORKFLOW_VIEW,
    private_metadata: JSON.stringify(target),
    title: { type: 'plain_text', text: 'Save as workflow' },
    submit: { type: 'plain_text', text: 'Save' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `Save the approved plan of this run to run it again, or on a schedule: ${safeMrkdwn(summary, 1_000)}`,
          verbatim: true,
        },
      },
      {
        type: 'input',
        block_id: SAVE_WORKFLOW_INPUTS.name.block,
        label: { type: 'plain_text', text: 'Name' },
        hint: { type: 'plain_text', text: 'One word: lower-case letters, digits, - and _, starting with a letter.' },
        element: {
          type: 'plain_text_input',
          action_id: SAVE_WORKFLOW_INPUTS.name.element,
          placeholder: { type: 'plain_text', text: 'digest' },
          min_length: 1,
          max_length: WORKFLOW_NAME_MAX,
        },
      },
      {
        type: 'input',
        block_id: SAVE_WORKFLOW_INPUTS.everyFire.block,
        optional: true,
        label: { type: 'plain_text', text: 'Review' },
        element: {
          type: 'checkboxes',
          action_id: SAVE_WORKFLOW_INPUTS.everyFire.element,
          options: [
            {
              text: { type: 'plain_text', text: 'Approve every fire' },
              description: { type: 'plain_text', text: 'Each run of the workflow waits for a person first.' },
              value: 'every-fire',
            },
          ],
        },
      },
    ],
  };
}

/** The values of a submitted modal as Slack sends them (only what this modal reads). */
export type SaveModalValues = Record<
  string,
  Record<string, { value?: string | null; selected_options?: { value?: string }[] | null } | undefined> | undefined
>;

/**
 * A submitted save modal as the `save` command for the engine, or the answer that keeps the modal open with what is
 * wrong under the name; null when the modal is not one of ours.
 */
export function readSaveWorkflow(
  metadata: string,
  values: SaveModalValues,
): SaveRequest | ViewErrorsResponseAction | null {
  const target = decodeSaveTarget(metadata);
  if (!target) return null;
  const { name, everyFire } = SAVE_WORKFLOW_INPUTS;
  const typed = values[name.block]?.[name.element]?.value?.trim() ?? '';
  if (!isOneWord(typed))
    return { response_action: 'errors', errors: { [name.block]: 'One word, such as digest or nightly-report.' } };
  const checked = values[everyFire.block]?.[everyFire.element]?.selected_options ?? [];
  return {
    target,
    text: saveCommandText(
      typed,
      checked.some((o) => o.value === 'every-fire'),
    ),
  };
}

/** The engine's answer to a save, shown privately in the card's thread. */
export function renderWorkflowAnswer(answer: string): SlackMessage {
  const section = safeMrkdwn(answer, SECTION_MAX);
  return {
    text: workflowAnswerText(answer),
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: section, verbatim: true } }],
  };
}

function decodeSaveTarget(metadata: string): SaveTarget | null {
  try {
    const parsed = JSON.parse(metadata) as Record<string, unknown> | null;
    if (!parsed || typeof parsed !== 'object') return null;
    const { runId, revision, channel, threadTs } = parsed;
    if (typeof runId !== 'string' || !runId || typeof revision !== 'number' || !Number.isInteger(revision)) return null;
    if (typeof channel !== 'string' || !channel || typeof threadTs !== 'string' || !threadTs) return null;
    return { runId, revision, channel, threadTs };
  } catch {
    return null;
  }
}
