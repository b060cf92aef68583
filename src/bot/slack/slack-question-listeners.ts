/**
 * The presses and the form of a server's question in Slack: Answer… opens the form (trigger ids live 3 s, so at once,
 * and only for the requester or an approver; anyone else is told privately), Decline declines, and the form's
 * submission goes to the engine, whose verdict keeps the form open with each field's problem, or closes it.
 */
import type { App, BlockElementAction } from '@slack/bolt';
import { QUESTION_REFUSAL } from '../question-words.ts';
import { privateText } from './slack-controls.ts';
import type { ControlPress } from './slack-control-listeners.ts';
import { toActor } from './slack-inbound.ts';
import type { ListenerDeps } from './slack-listeners.ts';
import {
  QUESTION_ANSWER_ACTION,
  QUESTION_DECLINE_ACTION,
  QUESTION_VIEW,
  questionErrors,
  questionOfView,
  questionRefOf,
  readQuestionForm,
  renderQuestionModal,
} from './slack-question.ts';

/** Slack waits 3 s for a modal's answer; the engine gets this long. */
const ANSWER_MS = 2_000;

/** Handles a press on a question's buttons (after the ack); false when the action is not one of them. */
export function onQuestionPress(action: BlockElementAction, press: ControlPress, deps: ListenerDeps): boolean {
  if (action.action_id !== QUESTION_ANSWER_ACTION && action.action_id !== QUESTION_DECLINE_ACTION) return false;
  const ref = action.type === 'button' ? questionRefOf(action.value) : null;
  if (!ref) return true;
  const { handler } = deps;
  const say = (text: string) => deps.ephemeral(press.at, press.actor.id, privateText(text));
  deps.track(
    (async () => {
      if (!(await handler.canDecide(ref.runId, press.actor))) return say(QUESTION_REFUSAL);
      if (action.action_id === QUESTION_DECLINE_ACTION) {
        const reply = await handler.answerQuestion({
          questionId: ref.questionId,
          actor: press.actor,
          action: 'decline',
        });
        return reply.ok ? undefined : say(reply.refusal);
      }
      const card = await handler.openQuestion(ref.questionId);
      if (!card) return say('That question has ended already.');
      const modal = renderQuestionModal(card);
      if (!modal)
        return say(
          'This question has more fields than a Slack form can hold; decline it, or answer it from the console.',
        );
      await press.openModal(modal);
    })(),
  );
  return true;
}

/** Registers the form's submission. */
export function registerQuestionModal(app: App, deps: ListenerDeps): void {
  app.view(QUESTION_VIEW, async ({ ack, body, view }) => {
    const ref = questionOfView(view.private_metadata);
    const card = ref ? await deps.handler.openQuestion(ref.questionId) : null;
    if (!ref || !card)
      return void (await ack({ response_action: 'errors', errors: { field0: 'That question has ended already.' } }));
    const values = readQuestionForm(card, view.state.values);
    const answer = deps.handler.answerQuestion({
      questionId: ref.questionId,
      actor: toActor(body.user),
      action: 'accept',
      values,
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ANSWER_MS)));
    const reply = await Promise.race([answer, late]).finally(() => clearTimeout(timer));
    // Taken, or still being taken after Slack's time: the form closes and the thread shows how it ended.
    if (reply === null || reply.ok) return void (await ack());
    await ack(questionErrors(card, reply.refusal, reply.fields));
  });
}
