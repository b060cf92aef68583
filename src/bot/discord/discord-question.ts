/**
 * A server's question in Discord (pure): a message in the run's thread with the server's words and two buttons
 * (Answer…, Decline), and the form as modals of text inputs. Discord's rules (developer docs, "Modal" interaction
 * response and "Text Inputs"): a modal holds at most 5 action rows of one text input each, its title 45 characters, an
 * input's label 45 and placeholder 100, a value 4,000; a modal submission cannot be answered with another modal. So a
 * form of more than five fields is asked five at a time: each page after the first opens from a Continue button.
 */
import { ButtonStyle, ComponentType, TextInputStyle } from 'discord.js';
import type { QuestionCard, QuestionClosed } from '../../engine/messages.ts';
import { fieldDefault } from '../../engine/run/question-form.ts';
import type { QuestionField } from '../../engine/server-questions.ts';
import { fieldHint, questionClosedText, questionFooter, questionHeader } from '../question-words.ts';
import type { DiscordModal } from './discord-modals.ts';
import { textMessage, type DiscordMessage } from './discord-render.ts';
import { plainText, safeText } from './discord-text.ts';

/** Text inputs a modal holds. */
export const FIELDS_PER_PAGE = 5;
const PREFIX = 'stwq';
const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A question's button or form, read back from its custom id. */
export type QuestionPress =
  | { kind: 'answer'; questionId: string; page: number }
  | { kind: 'decline'; questionId: string }
  | { kind: 'form'; questionId: string; page: number };

/** The custom id of a question's button or form page. */
export function questionCustomId(press: QuestionPress): string {
  return press.kind === 'decline'
    ? `${PREFIX}:decline:${press.questionId}`
    : `${PREFIX}:${press.kind}:${press.questionId}:${press.page}`;
}

/** A custom id read back; null for anything that is not a question's. */
export function questionPressOf(customId: unknown): QuestionPress | null {
  if (typeof customId !== 'string' || customId.length > 100) return null;
  const [prefix, kind, questionId = '', page, ...rest] = customId.split(':');
  if (prefix !== PREFIX || rest.length > 0 || !ID.test(questionId)) return null;
  if (kind === 'decline' && page === undefined) return { kind, questionId };
  const n = Number(page);
  if ((kind === 'answer' || kind === 'form') && Number.isInteger(n) && n >= 0 && n < 100)
    return { kind, questionId, page: n };
  return null;
}

/** How many pages the form takes. */
export function pagesOf(card: QuestionCard): number {
  return Math.max(1, Math.ceil(card.fields.length / FIELDS_PER_PAGE));
}

/** The question's message in the thread. */
export function renderQuestion(card: QuestionCard): DiscordMessage {
  const fields = card.fields.map((f) => `- ${safeText(f.label, 80)} (${safeText(fieldHint(f), 200)})`).join('\n');
  const pages =
    pagesOf(card) > 1 ? ` The form comes in ${pagesOf(card)} parts of up to ${FIELDS_PER_PAGE} fields.` : '';
  const text = [
    `❓ ${safeText(questionHeader(card), 300)}`,
    quote(card.message, 900),
    safeText(fields, 500),
    `-# ${questionFooter(card, `<@${card.requester.id}>`)}${pages}`,
  ].join('\n');
  return textMessage(text.slice(0, 2_000), [
    {
      type: ComponentType.ActionRow,
      components: [
        {
          type: ComponentType.Button,
          style: ButtonStyle.Primary,
          label: 'Answer…',
          custom_id: questionCustomId({ kind: 'answer', questionId: card.questionId, page: 0 }),
        },
        {
          type: ComponentType.Button,
          style: ButtonStyle.Secondary,
          label: 'Decline',
          custom_id: questionCustomId({ kind: 'decline', questionId: card.questionId }),
        },
      ],
    },
  ]);
}

/** The question's message once it has ended: its words kept, the buttons gone, how it ended said. */
export function renderQuestionEnded(card: QuestionCard, closed: QuestionClosed): DiscordMessage {
  const ended = questionClosedText(closed, (a) => `<@${a.id}>`);
  return textMessage(
    `❓ ${safeText(questionHeader(card), 300)}\n${quote(card.message, 1_200)}\n**${ended}**`.slice(0, 2_000),
  );
}

/** One page of the form, with what the person entered before (else each field's default) filled in. */
export function renderQuestionModal(card: QuestionCard, page: number, entered: Record<string, string>): DiscordModal {
  const pages = pagesOf(card);
  const fields = card.fields.slice(page * FIELDS_PER_PAGE, (page + 1) * FIELDS_PER_PAGE);
  const part = pages > 1 ? ` (${page + 1}/${pages})` : '';
  return {
    custom_id: questionCustomId({ kind: 'form', questionId: card.questionId, page }),
    title: plainText(`${card.server} asks${part}`, 45),
    components: fields.map((field, i) => input(field, page * FIELDS_PER_PAGE + i, entered[field.name])),
  };
}

function input(field: QuestionField, index: number, entered: string | undefined): DiscordModal['components'][number] {
  const value = entered ?? fieldDefault(field);
  const long = field.kind === 'text' && (field.maxLength ?? 0) > 200;
  return {
    type: ComponentType.ActionRow,
    components: [
      {
        type: ComponentType.TextInput,
        custom_id: `f${index}`,
        label: plainText(field.label, 45),
        style: long ? TextInputStyle.Paragraph : TextInputStyle.Short,
        placeholder: plainText(fieldHint(field), 100),
        required: field.required,
        max_length: 4_000,
        ...(value !== undefined && value !== '' && { value: value.slice(0, 4_000) }),
      },
    ],
  };
}

/** A submitted page's entries by field name. */
export function readQuestionPage(
  card: QuestionCard,
  page: number,
  values: Record<string, string>,
): Record<string, string> {
  const entered: Record<string, string> = {};
  card.fields.slice(page * FIELDS_PER_PAGE, (page + 1) * FIELDS_PER_PAGE).forEach((field, i) => {
    const value = values[`f${page * FIELDS_PER_PAGE + i}`];
    if (value !== undefined) entered[field.name] = value;
  });
  return entered;
}

/** The private reply after a page that is not the last: a button that opens the next. */
export function renderNextPage(card: QuestionCard, next: number): DiscordMessage {
  return textMessage(`Part ${next} of ${pagesOf(card)} is kept. Go on with the next part:`, [
    {
      type: ComponentType.ActionRow,
      components: [
        {
          type: ComponentType.Button,
          style: ButtonStyle.Primary,
          label: `Continue (${next + 1}/${pagesOf(card)})`,
          custom_id: questionCustomId({ kind: 'answer', questionId: card.questionId, page: next }),
        },
      ],
    },
  ]);
}

/** The private reply when the answer was refused: the reason, and a button to open the form again (entries kept). */
export function renderRefusedAnswer(card: QuestionCard, refusal: string, page: number): DiscordMessage {
  return textMessage(`${safeText(refusal, 1_500)}`, [
    {
      type: ComponentType.ActionRow,
      components: [
        {
          type: ComponentType.Button,
          style: ButtonStyle.Primary,
          label: 'Answer again…',
          custom_id: questionCustomId({ kind: 'answer', questionId: card.questionId, page }),
        },
      ],
    },
  ]);
}

/** The first page that holds one of the named fields (0 when none). */
export function pageOfFields(card: QuestionCard, names: readonly string[]): number {
  const index = card.fields.findIndex((f) => names.includes(f.name));
  return index < 0 ? 0 : Math.floor(index / FIELDS_PER_PAGE);
}

function quote(text: string, max: number): string {
  return safeText(text, max)
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}
