/**
 * The private Yes/No a Stop or Cancel press opens on Discord (pure). Slack asks in the button's own confirm dialog;
 * Discord has none, so a misclick on the card's red buttons would end a run at once. The question names the run's
 * card by its revision, so a Yes pressed after the card moved on reaches the engine as stale and is refused.
 */
import { ButtonStyle, ComponentType } from 'discord.js';
import { CONFIRM_WORDS } from '../card-words.ts';
import { customId, type CardRef, type CustomIdKind } from './discord-actions.ts';
import { textMessage, type DiscordMessage } from './discord-render.ts';

/** The decisions that ask first. */
export type ConfirmedAction = 'cancel' | 'stop';

const YES: Readonly<Record<ConfirmedAction, CustomIdKind>> = { cancel: 'cancel-yes', stop: 'stop-yes' };

/** The private question for a press of Stop or Cancel on the card `ref`. */
export function renderConfirm(action: ConfirmedAction, ref: CardRef): DiscordMessage {
  const words = CONFIRM_WORDS[action];
  return textMessage(`**${words.title}** ${words.text}`, [
    {
      type: ComponentType.ActionRow,
      components: [
        {
          type: ComponentType.Button,
          style: ButtonStyle.Danger,
          label: words.confirm,
          custom_id: customId(YES[action], ref),
        },
        {
          type: ComponentType.Button,
          style: ButtonStyle.Secondary,
          label: words.keep,
          custom_id: customId('keep', ref),
        },
      ],
    },
  ]);
}

/** The decision a Yes carries, or null for any other kind. */
export function confirmedAction(kind: CustomIdKind): ConfirmedAction | null {
  if (kind === 'stop-yes') return 'stop';
  if (kind === 'cancel-yes') return 'cancel';
  return null;
}

/** The question once answered, with its buttons gone: what the person chose. */
export function renderAnswered(action: ConfirmedAction | null): DiscordMessage {
  if (action === 'stop') return textMessage('Stop sent; the card shows what it did.');
  if (action === 'cancel') return textMessage('Cancel sent; the card shows what it did.');
  return textMessage('Nothing changed.');
}
