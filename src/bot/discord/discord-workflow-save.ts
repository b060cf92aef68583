/**
 * What "Save as workflow" does on Discord: a press by the run's requester or an approver opens the name form (anyone
 * else is told privately that they may not); a submission becomes the `save` workflow command for that run, and the
 * engine's answer comes back privately.
 */
import { MessageFlags, type ButtonInteraction, type ModalSubmitInteraction } from 'discord.js';
import type { Actor } from '../../engine/types.ts';
import type { CardRef } from '../steering.ts';
import { SAVE_NOT_ALLOWED } from '../workflow-words.ts';
import { WORKFLOW_NAME_INPUT } from './discord-actions.ts';
import { renderWorkflowAnswer } from './discord-command-text.ts';
import { toConversation } from './discord-inbound.ts';
import type { DiscordDeps } from './discord-messages.ts';
import { toMessageOptions, type DiscordMessage } from './discord-render.ts';
import { privateText } from './discord-replies.ts';
import { readSaveWorkflow, renderSaveWorkflowModal } from './discord-workflow-modal.ts';

/**
 * Answers a press on "Save as workflow": the form, or privately why not. `allowed` is `canDecide` as known in
 * Discord's time ('late': the form opens, and the submission is checked).
 */
export async function openSaveWorkflow(
  i: ButtonInteraction,
  ref: CardRef,
  allowed: boolean | 'late',
  deps: Pick<DiscordDeps, 'summaryOf'>,
): Promise<void> {
  if (allowed === false)
    return void (await i.reply({ ...toMessageOptions(privateText(SAVE_NOT_ALLOWED)), flags: MessageFlags.Ephemeral }));
  await i.showModal(renderSaveWorkflowModal(ref, deps.summaryOf(ref.runId)));
}

/** Saves the run as a workflow from a submitted form and answers privately with the engine's answer. */
export async function submitSaveWorkflow(
  i: ModalSubmitInteraction,
  ref: CardRef,
  actor: Actor,
  deps: Pick<DiscordDeps, 'handler'>,
): Promise<void> {
  await i.deferReply({ flags: MessageFlags.Ephemeral });
  const answer = (message: DiscordMessage) => i.editReply(toMessageOptions(message));
  const name = i.fields.getTextInputValue(WORKFLOW_NAME_INPUT);
  // Checked again: the press may have been let through late, or who may decide changed while the form was open.
  if (!(await deps.handler.canDecide(ref.runId, actor))) return void (await answer(privateText(SAVE_NOT_ALLOWED)));
  const text = readSaveWorkflow(name);
  if (!text.ok) return void (await answer(privateText(text.error, { name })));
  if (!i.channelId) return void (await answer(privateText('Steward could not tell where this is; nothing was saved.')));
  const conversation = toConversation(i.guildId, i.channelId);
  const saved = await deps.handler.workflowCommand({ actor, conversation, text: text.value, runId: ref.runId });
  await answer(renderWorkflowAnswer(saved.text));
}
