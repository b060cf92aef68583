/**
 * A server's question in Slack (pure): a message in the run's thread with the server's words and two buttons
 * (Answer… opens the form, Decline), the form as a modal built from the question's fields, and the submitted values
 * read back. Slack's limits (Block Kit reference): a modal holds 100 blocks, its title 24 characters, an input label
 * 2,000, a select 100 options of 75 characters, `private_metadata` 3,000.
 */
import type { types, ViewErrorsResponseAction } from '@slack/bolt';
import type { QuestionCard, QuestionClosed } from '../../engine/messages.ts';
import { fieldDefault, type QuestionValues } from '../../engine/run/question-form.ts';
import type { QuestionField } from '../../engine/server-questions.ts';
import { fieldHint, questionClosedText, questionFooter, questionHeader } from '../question-words.ts';
import type { SlackMessage } from './slack-render.ts';
import { cutText, mentionUser, safeMrkdwn } from './slack-text.ts';

export const QUESTION_ANSWER_ACTION = 'steward.question.answer';
export const QUESTION_DECLINE_ACTION = 'steward.question.decline';
export const QUESTION_VIEW = 'steward.question.form';
const ELEMENT = 'value';
// Blocks a modal may hold, less the one that shows the server's words.
const MAX_FIELDS = 99;
const MAX_OPTIONS = 100;

/** Where a question's buttons and form point: the run and the question. */
export interface QuestionRef {
  runId: string;
  questionId: string;
}

/** The question's message in the thread. */
export function renderQuestion(card: QuestionCard): SlackMessage {
  const value = JSON.stringify({ runId: card.runId, questionId: card.questionId } satisfies QuestionRef);
  const fields = card.fields.map((f) => `• ${f.label} (${fieldHint(f)})`).join('\n');
  const text = `${questionHeader(card)} ${card.message}`;
  const blocks: types.KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `❓ ${safeMrkdwn(questionHeader(card), 500)}`, verbatim: true } },
    { type: 'section', text: { type: 'mrkdwn', text: quote(card.message), verbatim: true } },
    { type: 'section', text: { type: 'mrkdwn', text: safeMrkdwn(fields, 2_900), verbatim: true } },
    {
      type: 'context',
      elements: [{ type: 'mrkdwn', text: questionFooter(card, mentionUser(card.requester.id)), verbatim: true }],
    },
    {
      type: 'actions',
      block_id: `question.${card.questionId}`.slice(0, 255),
      elements: [
        {
          type: 'button',
          action_id: QUESTION_ANSWER_ACTION,
          text: { type: 'plain_text', text: 'Answer…' },
          style: 'primary',
          value,
        },
        { type: 'button', action_id: QUESTION_DECLINE_ACTION, text: { type: 'plain_text', text: 'Decline' }, value },
      ],
    },
  ];
  return { text: cutText(text, 3_000), blocks };
}

/** The question's message once it has ended: its words kept, the buttons replaced by how it ended. */
export function renderQuestionEnded(card: QuestionCard, closed: QuestionClosed): SlackMessage {
  const ended = questionClosedText(closed, (a) => mentionUser(a.id));
  const blocks: types.KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `❓ ${safeMrkdwn(questionHeader(card), 500)}`, verbatim: true } },
    { type: 'section', text: { type: 'mrkdwn', text: quote(card.message), verbatim: true } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: ended, verbatim: true }] },
  ];
  return { text: ended, blocks };
}

/** The press's question, from a button's value; null when it is not one. */
export function questionRefOf(value: string | undefined): QuestionRef | null {
  try {
    const v = JSON.parse(value ?? '') as Partial<QuestionRef>;
    return typeof v.runId === 'string' && typeof v.questionId === 'string'
      ? { runId: v.runId, questionId: v.questionId }
      : null;
  } catch {
    return null;
  }
}

/** The form; null when it has more fields than a modal holds (the person can still decline). */
export function renderQuestionModal(card: QuestionCard): types.ModalView | null {
  if (card.fields.length > MAX_FIELDS || card.fields.some((f) => 'options' in f && f.options.length > MAX_OPTIONS))
    return null;
  const ref: QuestionRef = { runId: card.runId, questionId: card.questionId };
  const blocks: types.KnownBlock[] = [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `${safeMrkdwn(questionHeader(card), 500)}\n${quote(card.message, 2_400)}`,
        verbatim: true,
      },
    },
    ...card.fields.map((field, i) => inputBlock(field, i)),
  ];
  return {
    type: 'modal',
    callback_id: QUESTION_VIEW,
    private_metadata: JSON.stringify(ref),
    title: { type: 'plain_text', text: 'A server asks' },
    submit: { type: 'plain_text', text: 'Send answer' },
    close: { type: 'plain_text', text: 'Not now' },
    blocks,
  };
}

function inputBlock(field: QuestionField, i: number): types.InputBlock {
  const hint = [field.description, fieldHint(field)].filter((s) => s !== '').join(' — ');
  return {
    type: 'input',
    block_id: `field${i}`,
    optional: !field.required,
    label: { type: 'plain_text', text: cutText(field.label, 2_000) },
    hint: { type: 'plain_text', text: cutText(hint, 2_000) },
    element: elementOf(field),
  };
}

function elementOf(field: QuestionField): types.InputBlock['element'] {
  const dflt = fieldDefault(field);
  if (field.kind === 'boolean' || field.kind === 'choice') {
    const options =
      field.kind === 'boolean'
        ? [option('yes', 'Yes'), option('no', 'No')]
        : field.options.map((o) => option(o.value, o.label));
    const initial = options.find((o) => o.value === (field.kind === 'boolean' ? dflt : field.default));
    return { type: 'static_select', action_id: ELEMENT, options, ...(initial && { initial_option: initial }) };
  }
  if (field.kind === 'choices') {
    const options = field.options.map((o) => option(o.value, o.label));
    const chosen = field.default ?? [];
    const initial = options.filter((o) => o.value !== undefined && chosen.includes(o.value));
    return {
      type: 'multi_static_select',
      action_id: ELEMENT,
      options,
      ...(initial.length > 0 && { initial_options: initial }),
    };
  }
  const max = field.kind === 'text' && field.maxLength !== undefined ? Math.min(field.maxLength, 3_000) : 3_000;
  return {
    type: 'plain_text_input',
    action_id: ELEMENT,
    max_length: max,
    ...(dflt !== undefined && dflt.length <= max && { initial_value: dflt }),
  };
}

function option(value: string, label: string): types.PlainTextOption {
  return { text: { type: 'plain_text', text: cutText(label, 75) }, value: value.slice(0, 150) };
}

/** The question a form's submission answers; null when its metadata is not one. */
export function questionOfView(privateMetadata: string): QuestionRef | null {
  return questionRefOf(privateMetadata);
}

/** Slack's submitted state, as Bolt hands it over. */
type ViewState = Record<
  string,
  Record<
    string,
    { value?: string | null; selected_option?: { value: string } | null; selected_options?: { value: string }[] }
  >
>;

/** The submitted values by field name. */
export function readQuestionForm(card: QuestionCard, state: ViewState): QuestionValues {
  const values: QuestionValues = {};
  card.fields.forEach((field, i) => {
    const v = state[`field${i}`]?.[ELEMENT];
    if (!v) return;
    if (field.kind === 'choices') values[field.name] = (v.selected_options ?? []).map((o) => o.value);
    else if (field.kind === 'boolean' || field.kind === 'choice') values[field.name] = v.selected_option?.value ?? null;
    else values[field.name] = v.value ?? null;
  });
  return values;
}

/** The answer that keeps the form open with each field's problem beside it (or the refusal under the first field). */
export function questionErrors(
  card: QuestionCard,
  refusal: string,
  fields?: Record<string, string>,
): ViewErrorsResponseAction {
  const errors: Record<string, string> = {};
  card.fields.forEach((f, i) => {
    const problem = fields?.[f.name];
    if (problem) errors[`field${i}`] = cutText(problem, 1_000);
  });
  if (Object.keys(errors).length === 0) errors.field0 = cutText(refusal, 1_000);
  return { response_action: 'errors', errors };
}

/** The server's words as a quote, at most `max` characters in all (each line's `> ` counted). */
function quote(text: string, max = 2_900): string {
  const quoted = (n: number) =>
    safeMrkdwn(text, n)
      .split('\n')
      .map((line) => `> ${line}`)
      .join('\n');
  let room = max;
  let q = quoted(room);
  while (q.length > max && room > 0) {
    room -= q.length - max;
    q = quoted(Math.max(0, room));
  }
  return q;
}
