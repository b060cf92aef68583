/**
 * A server's question as Slack and Discord show it, with a hostile server's words (mentions, markup, huge text, many
 * fields): within each platform's limits (the checkers the fakes use), nothing pings anyone, and Discord's form comes
 * in parts of five text inputs.
 */
import { describe, expect, it } from 'vitest';
import type { QuestionCard } from '../../src/engine/messages.ts';
import type { QuestionField } from '../../src/engine/server-questions.ts';
import {
  pagesOf,
  questionPressOf,
  readQuestionPage,
  renderQuestion as discordQuestion,
  renderQuestionModal as discordModal,
} from '../../src/bot/discord/discord-question.ts';
import {
  questionErrors,
  readQuestionForm,
  renderQuestion as slackQuestion,
  renderQuestionModal as slackModal,
} from '../../src/bot/slack/slack-question.ts';
import { messageProblems, modalProblems } from '../fakes/discord-limits.ts';
import { blockProblems, viewErrorsProblems, viewProblems } from './slack/block-kit-limits.ts';

const hostile = '<!channel> @everyone <@U0BOSS> *bold* [x](https://evil.test) `code`\n'.repeat(200);

function card(fields: QuestionField[]): QuestionCard {
  return {
    kind: 'question',
    runId: 'r1',
    questionId: '0b5c7d2e-1f3a-4c5b-8d9e-0a1b2c3d4e5f',
    stepId: 'ask',
    server: 'everything',
    message: hostile,
    fields,
    requester: { id: 'U0ADA', channel: 'slack' },
    deadline: new Date('2026-12-05T10:00:00Z'),
  };
}

const many: QuestionField[] = Array.from({ length: 13 }, (_, i) => ({
  name: `f${i}`,
  label: `${hostile.slice(0, 120)} ${i}`,
  description: hostile.slice(0, 300),
  required: i === 0,
  ...(i % 3 === 0
    ? {
        kind: 'choice' as const,
        options: [
          { value: 'a', label: '<!here> A' },
          { value: 'b', label: 'B' },
        ],
        default: 'a',
      }
    : i % 3 === 1
      ? { kind: 'boolean' as const, default: true }
      : { kind: 'text' as const, default: 'x'.repeat(5000) }),
}));

describe('a server question on Slack', () => {
  it('the thread message and the modal fit Block Kit, and the server’s words cannot mention anyone', () => {
    const m = slackQuestion(card(many));
    expect(blockProblems(m.blocks, 50).problems).toEqual([]);
    const text = JSON.stringify(m.blocks);
    expect(text).not.toMatch(/<!channel>|<!here>|<@U0BOSS>/);
    const view = slackModal(card(many));
    expect(view).not.toBeNull();
    expect(viewProblems(view)).toEqual([]);
    const errors = questionErrors(card(many), 'no', { f2: 'too long' });
    expect(viewErrorsProblems(errors, view)).toEqual([]);
  });

  it('reads a submission back by field', () => {
    const c = card(many.slice(0, 3));
    const values = readQuestionForm(c, {
      field0: { value: { selected_option: { value: 'b' } } },
      field1: { value: { selected_option: { value: 'no' } } },
      field2: { value: { value: 'hi' } },
    });
    expect(values).toEqual({ f0: 'b', f1: 'no', f2: 'hi' });
  });
});

describe('a server question on Discord', () => {
  it('the thread message fits, pings no one, and its buttons parse back', () => {
    const m = discordQuestion(card(many));
    expect(messageProblems(m)).toEqual([]);
    expect(m.content).not.toMatch(/@everyone|<@U0BOSS>/);
    const ids = m.components.flatMap((r) => r.components).map((c) => ('custom_id' in c ? c.custom_id : ''));
    expect(ids.map(questionPressOf)).toEqual([
      { kind: 'answer', questionId: card([]).questionId, page: 0 },
      { kind: 'decline', questionId: card([]).questionId },
    ]);
  });

  it('a form of 13 fields is 3 modals of at most 5 text inputs (Discord’s limit), and pages read back by field', () => {
    const c = card(many);
    expect(pagesOf(c)).toBe(3);
    for (let page = 0; page < 3; page++) expect(modalProblems(discordModal(c, page, {}))).toEqual([]);
    expect(discordModal(c, 2, {}).components).toHaveLength(3);
    expect(readQuestionPage(c, 1, { f5: 'x', f6: 'yes', f0: 'ignored' })).toEqual({ f5: 'x', f6: 'yes' });
  });
});
