/**
 * A server's question as every channel says it (pure): who asks and that the words are the server's, each field's
 * hint, the deadline, and how the question ended. Platforms add their own controls around these words.
 */
import type { QuestionCard, QuestionClosed } from '../engine/messages.ts';
import { fieldDefault } from '../engine/run/question-form.ts';
import type { QuestionField } from '../engine/server-questions.ts';
import type { Actor } from '../engine/types.ts';

export { QUESTION_REFUSAL } from '../engine/server-questions.ts';

/** The line above the server's words: it names the server and the step, and says the words are not Steward's. */
export function questionHeader(card: Pick<QuestionCard, 'server' | 'stepId'>): string {
  return `MCP server "${card.server}" asks a question during step ${card.stepId}. These are the server's words, not Steward's:`;
}

/** Who may answer and until when. */
export function questionFooter(card: Pick<QuestionCard, 'deadline'>, requester: string): string {
  const at = card.deadline.toISOString().slice(11, 16);
  return `Only ${requester} or an approver can answer. Unanswered by ${at} UTC, it is declined. Never enter passwords or other secrets here.`;
}

/** What a field accepts, in a few words. */
export function fieldHint(field: QuestionField): string {
  const parts: string[] = [];
  switch (field.kind) {
    case 'boolean':
      parts.push('yes or no');
      break;
    case 'choice':
      parts.push(`one of: ${field.options.map((o) => o.label).join(', ')}`);
      break;
    case 'choices':
      parts.push(`any of: ${field.options.map((o) => o.label).join(', ')}, separated by commas`);
      break;
    case 'number': {
      const range = [field.minimum, field.maximum].every((n) => n !== undefined)
        ? ` from ${field.minimum} to ${field.maximum}`
        : '';
      parts.push(`${field.integer ? 'a whole number' : 'a number'}${range}`);
      break;
    }
    case 'text':
      if (field.format) parts.push(FORMAT_WORDS[field.format]);
  }
  parts.push(field.required ? 'required' : 'optional');
  const dflt = fieldDefault(field);
  if (dflt !== undefined) parts.push(`default ${dflt}`);
  return parts.join('; ');
}

const FORMAT_WORDS = {
  email: 'an email address',
  uri: 'a web address',
  date: 'a date (2026-12-31)',
  'date-time': 'a date and time',
};

const ENDINGS: Record<QuestionClosed['outcome'], string> = {
  accepted: 'was answered',
  declined: 'was declined',
  cancelled: 'was cancelled: the call that asked it ended',
  timedOut: 'was declined: no one answered in time',
  refused: 'was declined: it could not be asked',
  stopped: 'was cancelled: the run was stopped',
};

/** How a question ended, in one sentence (`name` shows a person this channel's way). */
export function questionClosedText(closed: QuestionClosed, name: (actor: Actor) => string): string {
  const by =
    closed.by && (closed.outcome === 'accepted' || closed.outcome === 'declined') ? ` by ${name(closed.by)}` : '';
  return `The question from MCP server "${closed.server}" ${ENDINGS[closed.outcome]}${by}.`;
}
