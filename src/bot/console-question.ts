/**
 * A server's question answered in the terminal: once its form is shown, the lines typed next answer its fields one by
 * one (an empty line keeps the default, or leaves an optional field out); `decline` declines. A refused answer asks
 * again for the fields that were wrong. `stop` and `cancel` still reach the run.
 */
import type { QuestionCard } from '../engine/messages.ts';
import type { QuestionField } from '../engine/server-questions.ts';
import { fieldDefault } from '../engine/run/question-form.ts';
import { fieldHint } from './question-words.ts';

/** What a typed line did to the question being answered. */
export type QuestionStep =
  { kind: 'ask'; prompt: string } | { kind: 'submit'; values: Record<string, string> } | { kind: 'decline' };

/** One question being answered at the terminal. */
export class ConsoleQuestion {
  private readonly values: Record<string, string> = {};
  private queue: QuestionField[];

  constructor(readonly card: QuestionCard) {
    this.queue = [...card.fields];
  }

  /** The prompt for the next field. */
  prompt(): string {
    const field = this.queue[0];
    return field ? fieldPrompt(field) : '';
  }

  /** Takes a typed line as the answer to the field asked. */
  take(line: string): QuestionStep {
    if (line.trim().toLowerCase() === 'decline') return { kind: 'decline' };
    const field = this.queue.shift();
    if (field) this.values[field.name] = line.trim() === '' ? (fieldDefault(field) ?? '') : line.trim();
    return this.queue.length > 0
      ? { kind: 'ask', prompt: this.prompt() }
      : { kind: 'submit', values: { ...this.values } };
  }

  /** The answer was refused for these fields: they are asked again. */
  again(fields: readonly string[]): void {
    this.queue = this.card.fields.filter((f) => fields.includes(f.name));
  }
}

/** The line that asks for one field. */
export function fieldPrompt(field: QuestionField): string {
  return `? ${field.label} (${fieldHint(field)})${field.description ? ` — ${field.description}` : ''}:`;
}
