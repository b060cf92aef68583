/**
 * "Ask Steward", a message's context-menu command (Apps → Ask Steward): a form asks what to do with the message, and
 * its answer starts a request as `/steward ask` does, with the message (who wrote it, a link, its text quoted and
 * cut) appended as context the person pointed at. The message is untrusted input like any request's text: it is
 * quoted, never obeyed as Steward's own instructions. A message without text is refused privately.
 */
import {
  ComponentType,
  Events,
  MessageFlags,
  TextInputStyle,
  type Message,
  type MessageContextMenuCommandInteraction,
  type ModalSubmitInteraction,
} from 'discord.js';
import type { Actor } from '../../engine/types.ts';
import { deliveryFilter } from '../delivery-filter.ts';
import { startAsk } from './discord-commands.ts';
import { ASK_MESSAGE_NAME } from './discord-command-text.ts';
import { answerDeadline, claimed } from './discord-interactions.ts';
import { actorOf, type DiscordDeps } from './discord-messages.ts';
import type { DiscordModal } from './discord-modals.ts';
import { pointedRequestText } from '../pointed-message.ts';

const MODAL_PREFIX = 'stwaskmsg:';
const QUESTION_INPUT = 'question';
/** The most of the message's text a request carries: enough to act on, without one message filling the prompt. */
export const QUOTED_MAX = 3_000;
/** How long the message the form was opened on is remembered here (a form left open longer reads it again). */
const REMEMBER_MS = 15 * 60_000;

/** The message a request points at, as the context it carries. */
export interface PointedMessage {
  author: string;
  link: string;
  content: string;
}

/** The private refusal for a message with no text (only embeds, attachments or stickers). */
export const NO_TEXT =
  'That message has no text for me to read (only embeds, attachments or stickers). Copy what matters into `/steward ask`.';

/** The form "Ask Steward" opens on a message: one paragraph, what to do with it. */
export function renderAskMessageModal(channelId: string, messageId: string): DiscordModal {
  return {
    custom_id: `${MODAL_PREFIX}${channelId}:${messageId}`,
    title: 'Ask Steward about a message',
    components: [
      {
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.TextInput,
            custom_id: QUESTION_INPUT,
            label: 'What should I do with this message?',
            style: TextInputStyle.Paragraph,
            required: true,
            min_length: 1,
            max_length: 2_000,
          },
        ],
      },
    ],
  };
}

/**
 * The request's text: the person's words, then the message they pointed at, quoted line by line and cut to
 * `QUOTED_MAX` characters (saying so), marked as what they were shown rather than what to obey.
 */
export function askAboutMessageText(question: string, m: PointedMessage): string {
  const cut = m.content.length > QUOTED_MAX;
  return pointedRequestText(question, {
    author: m.author,
    link: m.link,
    text: cut ? `${m.content.slice(0, QUOTED_MAX)}…` : m.content,
    ...(cut && { cutFrom: m.content.length }),
  });
}

/** Registers "Ask Steward": the form on a message, then the request from its answer. */
export function registerAskMessage(deps: DiscordDeps): void {
  const firstDelivery = deliveryFilter(1_000);
  // The message each form was opened on: its text reaches Steward with the command, not always from a fetch (without
  // the Message Content intent a fetched message has none).
  const opened = new Map<string, { at: number; message: PointedMessage }>();
  deps.client.on(Events.InteractionCreate, (interaction) => {
    const menu = interaction.isMessageContextMenuCommand() && interaction.commandName === ASK_MESSAGE_NAME;
    const form = interaction.isModalSubmit() && interaction.customId.startsWith(MODAL_PREFIX);
    if ((!menu && !form) || !firstDelivery(interaction.id)) return;
    const actor = actorOf(interaction.user, interaction.member);
    deps.track(
      claimed(deps, interaction.id, answerDeadline()).then(async (mine) => {
        if (!mine) return;
        deps.pressed(actor, interaction);
        if (interaction.isMessageContextMenuCommand()) return openForm(interaction, opened);
        if (interaction.isModalSubmit()) return submitForm(interaction, actor, deps, opened);
      }),
    );
  });
}

function pointed(m: Message): PointedMessage {
  const where = m.guildId ?? '@me';
  return {
    author: `@${m.author.username}`,
    link: `https://discord.com/channels/${where}/${m.channelId}/${m.id}`,
    content: m.content,
  };
}

async function openForm(
  i: MessageContextMenuCommandInteraction,
  opened: Map<string, { at: number; message: PointedMessage }>,
): Promise<void> {
  const message = i.targetMessage;
  if (message.content.trim() === '') {
    await i.reply({ content: NO_TEXT, flags: MessageFlags.Ephemeral });
    return;
  }
  const now = Date.now();
  for (const [key, value] of opened) if (now - value.at > REMEMBER_MS) opened.delete(key);
  opened.set(`${i.user.id}:${message.id}`, { at: now, message: pointed(message) });
  await i.showModal(renderAskMessageModal(message.channelId, message.id));
}

async function submitForm(
  i: ModalSubmitInteraction,
  actor: Actor,
  deps: DiscordDeps,
  opened: Map<string, { at: number; message: PointedMessage }>,
): Promise<void> {
  const [channelId = '', messageId = ''] = i.customId.slice(MODAL_PREFIX.length).split(':');
  const question = i.fields.getTextInputValue(QUESTION_INPUT).trim();
  const known = opened.get(`${i.user.id}:${messageId}`)?.message;
  // Opened through another process, or long ago: read it again (its text needs the Message Content intent).
  const message = known ?? (await fetchPointed(i, channelId, messageId));
  if (!message || message.content.trim() === '' || question === '') {
    const why =
      question === ''
        ? 'Say what I should do with the message.'
        : known
          ? NO_TEXT
          : 'I could not read that message any more. Use Ask Steward on it again.';
    await i.reply({ content: why, flags: MessageFlags.Ephemeral });
    return;
  }
  opened.delete(`${i.user.id}:${messageId}`);
  const text = askAboutMessageText(question, message);
  await startAsk(i, actor, deps, { request: question, shown: `${question}\n(about ${message.link})`, text });
}

async function fetchPointed(
  i: ModalSubmitInteraction,
  channelId: string,
  messageId: string,
): Promise<PointedMessage | null> {
  try {
    const channel = await i.client.channels.fetch(channelId);
    if (!channel?.isTextBased()) return null;
    return pointed(await channel.messages.fetch(messageId));
  } catch {
    return null;
  }
}
