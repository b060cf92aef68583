/**
 * Presses on a server's question in Discord and its form's pages. Answer… opens the form (within Discord's 3 s, and
 * only for the requester or an approver; anyone else is told privately); each page's entries are kept here until the
 * last page sends them all to the engine; a refused answer comes back privately with a button to open the form again
 * with the entries kept. Decline declines.
 */
import { MessageFlags, type ButtonInteraction, type ModalSubmitInteraction } from 'discord.js';
import { QUESTION_REFUSAL } from '../question-words.ts';
import type { DiscordDeps } from './discord-messages.ts';
import { actorOf } from './discord-messages.ts';
import { claimed, answerDeadline, within } from './discord-interactions.ts';
import {
  pageOfFields,
  pagesOf,
  readQuestionPage,
  renderNextPage,
  renderQuestionModal,
  renderRefusedAnswer,
  type QuestionPress,
} from './discord-question.ts';
import { privateText } from './discord-replies.ts';
import { toMessageOptions } from './discord-render.ts';

/** What people entered on earlier pages, by question and person, until they send it. */
export class QuestionEntries {
  private readonly entries = new Map<string, Record<string, string>>();

  get(questionId: string, userId: string): Record<string, string> {
    return this.entries.get(`${questionId}:${userId}`) ?? {};
  }

  add(questionId: string, userId: string, more: Record<string, string>): Record<string, string> {
    const all = { ...this.get(questionId, userId), ...more };
    this.entries.set(`${questionId}:${userId}`, all);
    return all;
  }

  forget(questionId: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(`${questionId}:`)) this.entries.delete(key);
  }
}

/** Handles a press on a question's button or a submitted page of its form. */
export function onQuestionInteraction(
  i: ButtonInteraction | ModalSubmitInteraction,
  press: QuestionPress,
  deps: DiscordDeps,
  entries: QuestionEntries,
): void {
  const actor = actorOf(i.user, i.member);
  const answerBy = answerDeadline();
  deps.track(
    claimed(deps, i.id, answerBy).then(async (mine) => {
      if (!mine) return;
      deps.pressed(actor, i);
      const { handler } = deps;
      const reply = (text: string) =>
        i.reply({ ...toMessageOptions(privateText(text)), flags: MessageFlags.Ephemeral });
      const found = await within(handler.openQuestion(press.questionId), answerBy);
      const card = found === 'late' ? null : found;
      if (!card) return void (await reply('That question has ended already.'));
      if ((await within(handler.canDecide(card.runId, actor), answerBy)) !== true)
        return void (await reply(QUESTION_REFUSAL));
      if (press.kind === 'answer' && i.isButton())
        return i.showModal(renderQuestionModal(card, press.page, entries.get(card.questionId, actor.id)));
      await i.deferReply({ flags: MessageFlags.Ephemeral });
      const edit = (message: Parameters<typeof toMessageOptions>[0]) => i.editReply(toMessageOptions(message));
      if (press.kind === 'decline') {
        const said = await handler.answerQuestion({ questionId: card.questionId, actor, action: 'decline' });
        return void (await edit(privateText(said.ok ? 'Declined.' : said.refusal)));
      }
      if (press.kind !== 'form' || !i.isModalSubmit()) return;
      const values = Object.fromEntries(i.fields.fields.map((f, id) => [id, 'value' in f ? String(f.value) : '']));
      const all = entries.add(card.questionId, actor.id, readQuestionPage(card, press.page, values));
      if (press.page + 1 < pagesOf(card)) return void (await edit(renderNextPage(card, press.page + 1)));
      const said = await handler.answerQuestion({ questionId: card.questionId, actor, action: 'accept', values: all });
      if (said.ok) {
        entries.forget(card.questionId);
        return void (await edit(privateText('Answer sent.')));
      }
      const page = pageOfFields(card, Object.keys(said.fields ?? {}));
      await edit(renderRefusedAnswer(card, said.refusal, page));
    }),
  );
}
