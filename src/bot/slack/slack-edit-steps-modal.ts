/**
 * The step-by-step edit modal (pure), for a plan whose JSON is too long for one Slack text box: one box per step
 * not yet run (empty it to drop the step) and one for steps to add. Steps that started get no box and stay as they
 * are. Used only when every box fits; otherwise the presser is told why, never shown a cut plan.
 */
import type { types, ViewErrorsResponseAction } from '@slack/bolt';
import type { EditablePlan } from '../../engine/channel.ts';
import type { Result } from '../../engine/result.ts';
import type { Json } from '../../engine/types.ts';
import { encodeCardRef, type CardRef } from './slack-actions.ts';
import { EDIT_TEXT_MAX, readEditText } from './slack-edit-modal.ts';
import { cutText, safeMrkdwn } from './slack-text.ts';

/** Callback id of the step-by-step edit modal. */
export const EDIT_STEPS_VIEW = 'steward.edit-steps';
/** Block id of the box for new steps. */
export const NEW_STEPS_BLOCK = 'new-steps';
const STEP_BLOCK = 'step:';
const ELEMENT = 'json';
// A modal holds at most 100 blocks: the intro, the note on started steps and the box for new steps take three.
const MAX_BOXES = 97;

type StepJson = Record<string, Json> & { id: string };
/** What a view submission holds, by block and element. */
export type ViewValues = Record<string, Record<string, { value?: string | null }>>;

/** The modal, or null when a step's JSON alone is too long for a box or the steps are too many. */
export function renderStepsModal(ref: CardRef, editable: EditablePlan): types.ModalView | null {
  const started = new Set(editable.started);
  const open = stepsOf(editable).filter((s) => !started.has(s.id));
  if (open.length > MAX_BOXES) return null;
  const boxes = open.map((s) => ({ id: s.id, text: fitting(s) }));
  if (boxes.some((b) => b.text === null)) return null;
  const intro = `Revision ${ref.revision}. This plan is too long for one box, so each step not yet run has its own: change it, or empty it to drop the step. Add steps as a JSON list in the last box. Everything is checked when you save.`;
  const blocks: types.KnownBlock[] = [{ type: 'section', text: { type: 'mrkdwn', text: intro } }];
  const kept =
    started.size > 0
      ? `Steps that started stay as they are: ${editable.started.join(', ')}`
      : 'No step has started yet.';
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: safeMrkdwn(kept, 1_000), verbatim: true }] });
  for (const b of boxes) blocks.push(box(`${STEP_BLOCK}${b.id}`, `Step ${b.id}`, b.text ?? ''));
  blocks.push(box(NEW_STEPS_BLOCK, 'Steps to add (a JSON list)', ''));
  return {
    type: 'modal',
    callback_id: EDIT_STEPS_VIEW,
    private_metadata: encodeCardRef(ref),
    title: { type: 'plain_text', text: 'Edit the plan' },
    submit: { type: 'plain_text', text: 'Save' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks,
  };
}

/**
 * The boxes read back as an edit of the steps, in the stored plan's order: steps without a box (started) as stored,
 * emptied boxes dropped, new steps at the end. Errors are keyed by the box they concern.
 */
export function readStepsEdit(values: ViewValues, stored: EditablePlan): Result<Json, Record<string, string>> {
  const errors: Record<string, string> = {};
  const steps: Json[] = [];
  for (const step of stepsOf(stored)) {
    const entry = values[`${STEP_BLOCK}${step.id}`]?.[ELEMENT];
    if (!entry) steps.push(step);
    else if (entry.value?.trim()) {
      const parsed = readEditText(entry.value);
      if (parsed.ok) steps.push(parsed.value);
      else errors[`${STEP_BLOCK}${step.id}`] = parsed.error;
    }
  }
  const added = values[NEW_STEPS_BLOCK]?.[ELEMENT]?.value?.trim();
  if (added) {
    const parsed = readEditText(added);
    if (parsed.ok && Array.isArray(parsed.value)) steps.push(...parsed.value);
    else errors[NEW_STEPS_BLOCK] = parsed.ok ? 'New steps go in a JSON list: [{"id": …}, …].' : parsed.error;
  }
  return Object.keys(errors).length > 0 ? { ok: false, error: errors } : { ok: true, value: { steps } };
}

/** The engine's refusal, shown under the box of the step it names (else under the box for new steps). */
export function stepsErrors(message: string, values: ViewValues): ViewErrorsResponseAction {
  const named = Object.keys(values).find(
    (block) => block.startsWith(STEP_BLOCK) && new RegExp(`\\b${block.slice(STEP_BLOCK.length)}\\b`).test(message),
  );
  return { response_action: 'errors', errors: { [named ?? NEW_STEPS_BLOCK]: cutText(message, 1_000) } };
}

/** Errors keyed by box, as Slack's answer. */
export function boxErrors(errors: Record<string, string>): ViewErrorsResponseAction {
  const cut = Object.fromEntries(Object.entries(errors).map(([k, v]) => [k, cutText(v, 1_000)]));
  return { response_action: 'errors', errors: cut };
}

function stepsOf(editable: EditablePlan): StepJson[] {
  const steps = (editable.plan as { steps?: unknown }).steps;
  return Array.isArray(steps) ? (steps as StepJson[]) : [];
}

function fitting(step: StepJson): string | null {
  const pretty = JSON.stringify(step, null, 2);
  if (pretty.length <= EDIT_TEXT_MAX) return pretty;
  const compact = JSON.stringify(step);
  return compact.length <= EDIT_TEXT_MAX ? compact : null;
}

function box(blockId: string, label: string, text: string): types.InputBlock {
  return {
    type: 'input',
    block_id: blockId,
    optional: true,
    label: { type: 'plain_text', text: cutText(label, 2_000) },
    element: {
      type: 'plain_text_input',
      action_id: ELEMENT,
      multiline: true,
      max_length: EDIT_TEXT_MAX,
      ...(text ? { initial_value: text } : {}),
    },
  };
}
