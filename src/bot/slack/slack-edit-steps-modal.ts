/**
 * The step-by-step edit modal (pure), for a plan whose JSON is too long for one Slack text box: one box per step
 * not yet run (empty it to drop the step) and one for steps to add. Steps that started get no box and stay as they
 * are. A form holds at most 100 blocks and 250 kB (Slack refuses a bigger view with `view_too_large`: views.open and
 * views.update reference), so the steps of a big plan come in pages: each page says which steps it holds, the others
 * stay as they are when it is saved, and a menu opens the form at another page. A step whose JSON alone is too long
 * for a box is never shown cut: the presser is told why.
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
/** Action id of the menu that opens the step-by-step form at another page (the option's value: the page's first step). */
export const EDIT_STEPS_PAGE_ACTION = 'steward.edit-steps-page';
/** The most a view's JSON may weigh, in UTF-8 bytes: Slack refuses more than 250 kB with `view_too_large`. */
export const VIEW_MAX_BYTES = 250_000;
/** Block id of the box for new steps. */
export const NEW_STEPS_BLOCK = 'new-steps';
const STEP_BLOCK = 'step:';
const ELEMENT = 'json';
// A modal holds at most 100 blocks: the intro, the note on started steps, the page menu and the box for new steps
// take four.
const MAX_BOXES = 96;
// What a page's menu may weigh at most (up to 100 options of a label and a step id), kept free on every page.
const MENU_RESERVE_BYTES = 24_000;

type StepJson = Record<string, Json> & { id: string };
/** What a view submission holds, by block and element. */
export type ViewValues = Record<string, Record<string, { value?: string | null }>>;

/**
 * The modal at the page holding step `from` (the first page without it), or null when a step's JSON alone is too long
 * for a box.
 */
export function renderStepsModal(ref: CardRef, editable: EditablePlan, from?: string): types.ModalView | null {
  const started = new Set(editable.started);
  const open = stepsOf(editable).filter((s) => !started.has(s.id));
  const boxes: Box[] = [];
  for (const s of open) {
    const text = fitting(s);
    if (text === null) return null;
    boxes.push({ id: s.id, block: box(`${STEP_BLOCK}${s.id}`, `Step ${s.id}`, text) });
  }
  const pages = pagesOf(ref, editable, boxes);
  const page = pages.find((p) => p.some((b) => b.id === from)) ?? pages[0] ?? [];
  return stepsView(ref, editable, page, pages);
}

interface Box {
  id: string;
  block: types.InputBlock;
}

/** The boxes in pages, each as many as fit beside the rest of the form (at least one). */
function pagesOf(ref: CardRef, editable: EditablePlan, boxes: readonly Box[]): Box[][] {
  const budget = VIEW_MAX_BYTES - MENU_RESERVE_BYTES - bytesOf(stepsView(ref, editable, [], []));
  const pages: Box[][] = [];
  let page: Box[] = [];
  let used = 0;
  for (const b of boxes) {
    const size = bytesOf(b.block) + 1;
    if (page.length > 0 && (page.length >= MAX_BOXES || used + size > budget)) {
      pages.push(page);
      page = [];
      used = 0;
    }
    page.push(b);
    used += size;
  }
  if (page.length > 0 || pages.length === 0) pages.push(page);
  return pages;
}

function stepsView(
  ref: CardRef,
  editable: EditablePlan,
  page: readonly Box[],
  pages: readonly Box[][],
): types.ModalView {
  const paged = pages.length > 1;
  const intro = paged
    ? `Revision ${ref.revision}. This plan is too big for one form, so it comes in pages: each step not yet run has its own box here; change it, or empty it to drop the step. Add steps as a JSON list in the last box. Everything is checked when you save.`
    : `Revision ${ref.revision}. This plan is too long for one box, so each step not yet run has its own: change it, or empty it to drop the step. Add steps as a JSON list in the last box. Everything is checked when you save.`;
  const blocks: types.KnownBlock[] = [{ type: 'section', text: { type: 'mrkdwn', text: intro } }];
  const kept =
    editable.started.length > 0
      ? `Steps that started stay as they are: ${editable.started.join(', ')}`
      : 'No step has started yet.';
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: safeMrkdwn(kept, 1_000), verbatim: true }] });
  if (paged) blocks.push(pageMenu(page, pages));
  for (const b of page) blocks.push(b.block);
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

/** Which steps this page holds, and a menu of the pages (choosing one opens the form there; typing here is lost). */
function pageMenu(page: readonly Box[], pages: readonly Box[][]): types.SectionBlock {
  const label = (p: readonly Box[]) =>
    cutText(p.length === 1 ? `Step ${p[0]!.id}` : `Steps ${p[0]!.id} to ${p[p.length - 1]!.id}`, 75);
  const options = pages.slice(0, 100).map((p) => ({
    text: { type: 'plain_text' as const, text: label(p) },
    value: cutText(p[0]!.id, 150),
  }));
  const here = pages.indexOf(page as Box[]);
  const text = `Page ${here + 1} of ${pages.length}: ${label(page)}. The steps on other pages stay as they are when you save. To change them, open another page (what you typed on this one is not kept).`;
  return {
    type: 'section',
    text: { type: 'mrkdwn', text: safeMrkdwn(text, 3_000) },
    accessory: {
      type: 'static_select',
      action_id: EDIT_STEPS_PAGE_ACTION,
      placeholder: { type: 'plain_text', text: 'Open another page' },
      options,
      ...(options[here] ? { initial_option: options[here] } : {}),
    },
  };
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

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
