/**
 * "Save as workflow" on Discord (pure): the modal asking for the workflow's name, and its submission read back as the
 * `save` command for the engine. The modal's custom id carries the run and revision, as every card control's does.
 */
import { ComponentType, TextInputStyle } from 'discord.js';
import { fail, ok, type Result } from '../../engine/result.ts';
import { isOneWord, saveCommandText, WORKFLOW_NAME_MAX } from '../workflow-words.ts';
import { customId, WORKFLOW_NAME_INPUT, type CardRef } from './discord-actions.ts';
import type { DiscordModal } from './discord-modals.ts';
import { plainText } from './discord-text.ts';

const TITLE_MAX = 45;

/** The modal for saving a completed run as a workflow: one short, required name input. */
export function renderSaveWorkflowModal(ref: CardRef, summary: string): DiscordModal {
  return {
    custom_id: customId('wfsave-modal', ref),
    title: plainText(`Save as workflow: ${summary.replace(/\s+/g, ' ').trim() || 'this run'}`, TITLE_MAX),
    components: [
      {
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.TextInput,
            custom_id: WORKFLOW_NAME_INPUT,
            label: 'Name (one word, e.g. digest)',
            style: TextInputStyle.Short,
            placeholder: 'digest',
            required: true,
            min_length: 1,
            max_length: WORKFLOW_NAME_MAX,
          },
        ],
      },
    ],
  };
}

/** The submitted name as the `save` command, or a sentence saying what is wrong (nothing is saved then). */
export function readSaveWorkflow(name: string): Result<string> {
  if (!isOneWord(name)) return fail('The name is one word, such as digest or nightly-report. Nothing was saved.');
  return ok(saveCommandText(name, false));
}
