/**
 * What "Save as workflow" does on Slack: a press by the run's requester or an approver opens the save modal (anyone
 * else is told privately that they may not); a submission becomes the `save` workflow command for that run, and the
 * engine's answer is shown privately in the card's thread.
 */
import type { App, BlockElementAction } from '@slack/bolt';
import type { Actor } from '../../engine/types.ts';
import { SAVE_NOT_ALLOWED } from '../workflow-words.ts';
import { decodeCardRef, SAVE_WORKFLOW_ACTION, SAVE_WORKFLOW_VIEW } from './slack-actions.ts';
import type { ControlPress } from './slack-control-listeners.ts';
import { privateText } from './slack-controls.ts';
import { toActor, toConversation } from './slack-inbound.ts';
import type { ListenerDeps } from './slack-listeners.ts';
import {
  readSaveWorkflow,
  renderSaveWorkflowModal,
  renderWorkflowAnswer,
  type SaveRequest,
} from './slack-workflow-modal.ts';

/** Handles a press on "Save as workflow" (after the ack); false when the action is another one. */
export function onSaveWorkflow(action: BlockElementAction, press: ControlPress, deps: ListenerDeps): boolean {
  if (action.action_id !== SAVE_WORKFLOW_ACTION) return false;
  const ref = action.type === 'button' ? decodeCardRef(action.value) : null;
  const { channel, threadTs } = press.at;
  if (!ref || !channel || !threadTs) return true;
  const say = (text: string) => deps.ephemeral(press.at, press.actor.id, privateText(text));
  deps.track(
    (async () => {
      // trigger_id lives 3 s: the modal opens at once, and only for someone who may decide on the run.
      if (!(await deps.handler.canDecide(ref.runId, press.actor))) return say(SAVE_NOT_ALLOWED);
      await press.openModal(renderSaveWorkflowModal({ ...ref, channel, threadTs }, deps.summaryOf(ref.runId)));
    })(),
  );
  return true;
}

/** Registers the save modal's submission: a name that is not one word keeps it open; anything else goes on. */
export function registerSaveWorkflowModal(app: App, deps: ListenerDeps): void {
  app.view(SAVE_WORKFLOW_VIEW, async ({ ack, body, view }) => {
    const read = readSaveWorkflow(view.private_metadata, view.state.values);
    if (read && 'response_action' in read) return void (await ack(read));
    await ack();
    if (read) deps.track(save(read, toActor(body.user), deps));
  });
}

/** Saves the run as a workflow (the engine checks the name and the run) and tells the person how it went. */
async function save({ target, text }: SaveRequest, actor: Actor, deps: ListenerDeps): Promise<void> {
  const at = { channel: target.channel, threadTs: target.threadTs };
  const tell = (answer: string) => deps.ephemeral(at, actor.id, renderWorkflowAnswer(answer));
  // Checked again: the modal may have stayed open while who may decide changed.
  if (!(await deps.handler.canDecide(target.runId, actor))) return tell(SAVE_NOT_ALLOWED);
  const conversation = toConversation(target.channel, target.threadTs);
  let answer: string;
  try {
    answer = (await deps.handler.workflowCommand({ actor, conversation, text, runId: target.runId })).text;
  } catch (err) {
    await tell('Steward could not save this workflow just now; nothing was saved. Please try again in a moment.');
    throw err;
  }
  await tell(answer);
}
