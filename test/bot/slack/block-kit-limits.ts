/**
 * Block Kit limits as Slack documents them, checked loosely: used by the fake Slack server (to refuse what Slack
 * would refuse) and by the renderer's unit tests. Numbers come from Slack's Block Kit reference, not from the
 * renderer, so the two cannot drift together.
 */

import { planBlockProblems, taskCardProblems } from './plan-block-limits.ts';

type Obj = Record<string, unknown>;

/**
 * A Slack payload value as text: a string as it is, a missing value (undefined or null) as ''. The fake parses
 * form fields that look like JSON, so anything else is written back as JSON rather than as '[object Object]'.
 */
export function payloadText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

const LIMITS = {
  sectionText: 3_000,
  sectionFields: 10,
  fieldText: 2_000,
  header: 150,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  buttonValue: 2_000,
  actionId: 255,
  blockId: 255,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  inputLabel: 2_000,
  modalTitle: 24,
  modalButton: 24,
  modalBlocks: 100,
  homeBlocks: 100,
  privateMetadata: 3_000,
  callbackId: 255,
  textInputMax: 3_000,
  optionText: 75,
  optionValue: 150,
  selectOptions: 100,
  overflowOptions: 5,
  placeholder: 150,
};

const SELECTS = new Set(['static_select', 'multi_static_select']);

const KNOWN = new Set([
  'section',
  'header',
  'context',
  'actions',
  'divider',
  'input',
  'image',
  'rich_text',
  'markdown',
  'plan',
  'task_card',
  'context_actions',
]);

/** Problems with a block list (empty when fine) and the characters of text it carries. */
export function blockProblems(blocks: unknown[], maxBlocks: number): { problems: string[]; textLength: number } {
  const problems: string[] = [];
  let textLength = 0;
  const ids = new Set<string>();
  const actionIds = new Set<string>();
  const textOf = (t: unknown, max: number, where: string) => {
    const text = (t as Obj | undefined)?.text;
    if (typeof text !== 'string' || text.length === 0)
      return problems.push(`${where}: text must be a non-empty string`);
    textLength += text.length;
    if (text.length > max) problems.push(`${where}: must be at most ${max} characters (was ${text.length})`);
  };
  if (blocks.length > maxBlocks) problems.push(`no more than ${maxBlocks} items allowed [json-pointer:/blocks]`);
  blocks.forEach((raw, i) => {
    const b = raw as Obj;
    const at = `/blocks/${i}`;
    if (!KNOWN.has(String(b.type))) return problems.push(`${at}: unknown block type ${String(b.type)}`);
    if (b.block_id !== undefined) {
      const id = payloadText(b.block_id);
      if (id.length > LIMITS.blockId || ids.has(id)) problems.push(`${at}/block_id: too long or not unique`);
      ids.add(id);
    }
    if (b.type === 'plan' || b.type === 'task_card') {
      const found = b.type === 'plan' ? planBlockProblems(b, at) : taskCardProblems(b, at);
      problems.push(...found.problems);
      textLength += found.textLength;
    }
    if (b.type === 'header') textOf(b.text, LIMITS.header, `${at}/text`);
    if (b.type === 'section') {
      if (b.text !== undefined) textOf(b.text, LIMITS.sectionText, `${at}/text`);
      const fields = (b.fields as unknown[] | undefined) ?? [];
      if (fields.length > LIMITS.sectionFields) problems.push(`${at}/fields: at most ${LIMITS.sectionFields}`);
      fields.forEach((f, j) => textOf(f, LIMITS.fieldText, `${at}/fields/${j}`));
      if (b.text === undefined && fields.length === 0) problems.push(`${at}: a section needs text or fields`);
      if (b.accessory !== undefined)
        elementProblems(b.accessory as Obj, `${at}/accessory`, problems, actionIds, textOf);
    }
    if (b.type === 'context') {
      const elements = (b.elements as unknown[] | undefined) ?? [];
      if (elements.length === 0 || elements.length > LIMITS.contextElements)
        problems.push(`${at}/elements: 1 to ${LIMITS.contextElements}`);
      elements.forEach((e, j) => textOf(e, LIMITS.sectionText, `${at}/elements/${j}`));
    }
    if (b.type === 'actions') {
      const elements = (b.elements as Obj[] | undefined) ?? [];
      if (elements.length === 0 || elements.length > LIMITS.actionsElements)
        problems.push(`${at}/elements: 1 to ${LIMITS.actionsElements}`);
      elements.forEach((e, j) => elementProblems(e, `${at}/elements/${j}`, problems, actionIds, textOf));
    }
    if (b.type === 'context_actions') problems.push(...contextActionsProblems(b, at));
    if (b.type === 'input') {
      textOf(b.label, LIMITS.inputLabel, `${at}/label`);
      const element = b.element as Obj | undefined;
      if (!element) problems.push(`${at}/element: required`);
      else if (typeof element.max_length === 'number' && element.max_length > LIMITS.textInputMax)
        problems.push(`${at}/element/max_length: at most ${LIMITS.textInputMax}`);
      else if (typeof element.initial_value === 'string') {
        const max = typeof element.max_length === 'number' ? element.max_length : LIMITS.textInputMax;
        if (element.initial_value.length > max) problems.push(`${at}/element/initial_value: at most ${max}`);
      }
    }
  });
  return { problems, textLength };
}

/**
 * A context_actions block (https://docs.slack.dev/reference/block-kit/blocks/context-actions-block): 1 to 5 elements,
 * each feedback_buttons or icon_button. Feedback buttons
 * (https://docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element) need a positive and a negative
 * button, each with plain_text text, a value and at most 75 characters of accessibility_label (@slack/types).
 */
function contextActionsProblems(b: Obj, at: string): string[] {
  const problems: string[] = [];
  const elements = (b.elements as Obj[] | undefined) ?? [];
  if (elements.length === 0 || elements.length > 5) problems.push(`${at}/elements: 1 to 5`);
  elements.forEach((e, j) => {
    const where = `${at}/elements/${j}`;
    if (e.type === 'icon_button') return;
    if (e.type !== 'feedback_buttons') return problems.push(`${where}: must be feedback_buttons or icon_button`);
    if (typeof e.action_id !== 'string' || e.action_id.length > LIMITS.actionId) problems.push(`${where}/action_id`);
    for (const side of ['positive_button', 'negative_button']) {
      const button = e[side] as Obj | undefined;
      const text = button?.text as Obj | undefined;
      if (text?.type !== 'plain_text' || typeof text.text !== 'string' || !text.text)
        problems.push(`${where}/${side}/text: a non-empty plain_text`);
      if (typeof button?.value !== 'string' || !button.value || button.value.length > LIMITS.buttonValue)
        problems.push(`${where}/${side}/value: 1 to ${LIMITS.buttonValue} characters`);
      const label = button?.accessibility_label;
      if (label !== undefined && (typeof label !== 'string' || label.length > 75))
        problems.push(`${where}/${side}/accessibility_label: at most 75 characters`);
    }
  });
  return problems;
}

function elementProblems(
  e: Obj,
  at: string,
  problems: string[],
  actionIds: Set<string>,
  textOf: (t: unknown, max: number, where: string) => unknown,
): void {
  const actionId = payloadText(e.action_id);
  if (actionId.length > LIMITS.actionId) problems.push(`${at}/action_id: at most ${LIMITS.actionId}`);
  if (actionId && actionIds.has(actionId)) problems.push(`${at}/action_id: not unique`);
  actionIds.add(actionId);
  if (SELECTS.has(String(e.type)) || e.type === 'overflow') return optionProblems(e, at, problems, textOf);
  if (e.type !== 'button') {
    problems.push(`${at}: unknown element type ${String(e.type)}`);
    return;
  }
  textOf(e.text, LIMITS.buttonText, `${at}/text`);
  if (typeof e.value === 'string' && e.value.length > LIMITS.buttonValue)
    problems.push(`${at}/value: at most ${LIMITS.buttonValue}`);
  const confirm = e.confirm as Obj | undefined;
  if (confirm) {
    textOf(confirm.title, LIMITS.confirmTitle, `${at}/confirm/title`);
    textOf(confirm.text, LIMITS.confirmText, `${at}/confirm/text`);
    textOf(confirm.confirm, LIMITS.confirmButton, `${at}/confirm/confirm`);
    textOf(confirm.deny, LIMITS.confirmButton, `${at}/confirm/deny`);
  }
}

/** Problems with a modal view (empty when fine). */
export function viewProblems(raw: unknown): string[] {
  const v = (raw ?? {}) as Obj;
  const problems: string[] = [];
  if (v.type !== 'modal') problems.push('view/type: must be modal');
  const title = (v.title as Obj | undefined)?.text;
  if (typeof title !== 'string' || !title || title.length > LIMITS.modalTitle)
    problems.push(`view/title: 1 to ${LIMITS.modalTitle} characters`);
  for (const key of ['submit', 'close']) {
    const text = (v[key] as Obj | undefined)?.text;
    if (text !== undefined && (typeof text !== 'string' || text.length > LIMITS.modalButton))
      problems.push(`view/${key}: at most ${LIMITS.modalButton}`);
  }
  if (typeof v.private_metadata === 'string' && v.private_metadata.length > LIMITS.privateMetadata)
    problems.push('view/private_metadata: too long');
  if (typeof v.callback_id === 'string' && v.callback_id.length > LIMITS.callbackId)
    problems.push('view/callback_id: too long');
  const blocks = Array.isArray(v.blocks) ? v.blocks : [];
  problems.push(
    ...blockProblems(blocks, LIMITS.modalBlocks).problems.map((p) => `view${p.startsWith('/') ? '' : ': '}${p}`),
  );
  return problems;
}

/** Problems with an App Home view for views.publish (empty when fine): a `home` view of at most 100 blocks. */
export function homeViewProblems(raw: unknown): string[] {
  const v = (raw ?? {}) as Obj;
  const problems: string[] = [];
  if (v.type !== 'home') problems.push('view/type: must be home');
  if (v.title !== undefined || v.submit !== undefined) problems.push('view: a home view has no title or submit');
  if (typeof v.private_metadata === 'string' && v.private_metadata.length > LIMITS.privateMetadata)
    problems.push('view/private_metadata: too long');
  if (typeof v.callback_id === 'string' && v.callback_id.length > LIMITS.callbackId)
    problems.push('view/callback_id: too long');
  if (!Array.isArray(v.blocks)) return [...problems, 'view/blocks: must be an array'];
  problems.push(...blockProblems(v.blocks, LIMITS.homeBlocks).problems.map((p) => `view${p}`));
  return problems;
}

/** Options of a select or overflow menu: how many, their labels and values, a placeholder, and initial options. */
function optionProblems(
  e: Obj,
  at: string,
  problems: string[],
  textOf: (t: unknown, max: number, where: string) => unknown,
): void {
  const options = (e.options as Obj[] | undefined) ?? [];
  const max = e.type === 'overflow' ? LIMITS.overflowOptions : LIMITS.selectOptions;
  if (options.length === 0 || options.length > max) problems.push(`${at}/options: 1 to ${max}`);
  const values = new Set<string>();
  options.forEach((o, j) => {
    const text = o.text as Obj | undefined;
    if (text?.type !== 'plain_text') problems.push(`${at}/options/${j}/text: must be plain_text`);
    textOf(text, LIMITS.optionText, `${at}/options/${j}/text`);
    const value = payloadText(o.value);
    if (!value || value.length > LIMITS.optionValue)
      problems.push(`${at}/options/${j}/value: 1 to ${LIMITS.optionValue}`);
    values.add(value);
  });
  if (e.placeholder !== undefined) textOf(e.placeholder, LIMITS.placeholder, `${at}/placeholder`);
  const initial = e.type === 'multi_static_select' ? ((e.initial_options as Obj[] | undefined) ?? []) : [];
  if (e.initial_options !== undefined && initial.length === 0)
    problems.push(`${at}/initial_options: must not be empty when given`);
  const single = e.type === 'static_select' ? (e.initial_option as Obj | undefined) : undefined;
  // Slack refuses an initial option that is not one of the options, label and value alike.
  if (single && !options.some((o) => JSON.stringify(o) === JSON.stringify(single)))
    problems.push(`${at}/initial_option: not one of the options`);
  initial.forEach((o, j) => {
    if (!values.has(payloadText(o.value))) problems.push(`${at}/initial_options/${j}: not one of the options`);
  });
}

/**
 * Problems with a view_submission answer that keeps a modal open with errors (empty when fine): Slack shows each
 * message under the input block it names, so every key must be the block_id of an input block in the view.
 */
export function viewErrorsProblems(answer: unknown, view: unknown): string[] {
  const a = (answer ?? {}) as Obj;
  if (a.response_action !== 'errors') return ['response_action: must be errors'];
  const errors = (a.errors ?? {}) as Obj;
  const inputs = new Set(
    (((view as Obj | undefined)?.blocks as Obj[] | undefined) ?? [])
      .filter((b) => b.type === 'input')
      .map((b) => payloadText(b.block_id)),
  );
  const keys = Object.keys(errors);
  if (keys.length === 0) return ['errors: at least one'];
  return keys.flatMap((k) => [
    ...(inputs.has(k) ? [] : [`errors/${k}: no input block has this block_id`]),
    ...(typeof errors[k] === 'string' && errors[k] ? [] : [`errors/${k}: must be a non-empty string`]),
  ]);
}
