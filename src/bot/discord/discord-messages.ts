/**
 * Messages from Discord's gateway to the engine: a mention in a channel starts a request in a thread on that
 * message (or in the thread it was written in), a direct message is a request or a reply, and a plain reply in a
 * thread whose card is live goes to the engine when Discord lets Steward read it (the Message Content intent;
 * without it Discord sends such a message with no text, and a reply must mention the bot). A DM is one thread, so
 * a word there is about its run; a bare `stop`, `pause` or `status` while several runs are active there names none
 * of them and gets a picker (`run-picker.ts`).
 */
import {
  Events,
  RESTJSONErrorCodes,
  Routes,
  type Client,
  type GuildMember,
  type Message,
  type RepliableInteraction,
  type User,
  type APIInteractionGuildMember,
} from 'discord.js';
import type { InboundHandler } from '../../engine/channel.ts';
import type { Conversation } from '../../engine/ports.ts';
import type { Breakpoint } from '../../engine/plan/breakpoints.ts';
import type { Actor } from '../../engine/types.ts';
import { deliveryId, requestText, runThread, toActor, toConversation } from './discord-inbound.ts';
import { textMessage, type DiscordMessage } from './discord-render.ts';
import { answeringHereText, cannotAnswerText, placeLogText, runPlace, THREAD_REFUSED } from './discord-permissions.ts';
import { renderHelp } from './discord-command-text.ts';
import type { TypingSigns } from './discord-typing.ts';
import { deliveryFilter } from '../delivery-filter.ts';
import { createRunPicker, pickerWord } from '../run-picker.ts';
import { renderRunPicker } from './discord-run-picker.ts';

/** What the listeners need from the channel. */
export interface DiscordDeps {
  handler: InboundHandler;
  client: Client;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Runs engine work after Discord was answered; errors are logged. */
  track: (work: Promise<void>) => void;
  typing: TypingSigns;
  /** Whether a channel (thread or DM) holds the card of a run that has not ended. */
  hasActiveCard(channelId: string): boolean;
  summaryOf(runId: string): string;
  /** Remembers a person's last interaction, where their private notices go while its token lives. */
  pressed(actor: Actor, interaction: RepliableInteraction): void;
  /** Redraws a run's card with its breakpoints as stored now. */
  showBreakpoints(runId: string, breakpoints: readonly Breakpoint[]): void;
  post(channelId: string, message: DiscordMessage): Promise<void>;
}

/** Registers the gateway's message listener. */
export function registerMessages(deps: DiscordDeps): void {
  const firstDelivery = deliveryFilter(1_000);
  deps.client.on(Events.MessageCreate, (message) => {
    if (message.author.bot || message.webhookId || message.system || !firstDelivery(message.id)) return;
    deps.track(onMessage(message, deps));
  });
}

async function onMessage(message: Message, deps: DiscordDeps): Promise<void> {
  const botId = deps.client.user?.id;
  if (!botId) return;
  // Typing @Steward may pick the bot's own role (the one Discord made for it) instead of the bot: both count.
  const ownRoles = message.guild?.members.me?.roles.cache.filter((r) => r.managed).map((r) => r.id) ?? [];
  const mentioned = message.mentions.users.has(botId) || ownRoles.some((id) => message.mentions.roles.has(id));
  const text = requestText(message.content, botId, ownRoles);
  const actor = actorOf(message.author, message.member);
  const base = { actor, text };
  const channel = message.channel;
  // Every process on this bot token gets the event (and a resume may bring it again): the first to claim it acts.
  const claimed = () => deps.handler.claimDelivery(deliveryId(message.id));
  if (channel.isDMBased()) {
    if (!text || !(await claimed())) return;
    const conversation = toConversation(null, channel.id);
    if (await offeredPicker(deps, actor, text, conversation, channel.id)) return;
    return toEngine(deps, channel.id, { ...base, conversation });
  }
  const guildId = message.guildId;
  if (channel.isThread()) {
    // A reply without a mention reaches the engine only where a run's card is live; others' chatter is left alone.
    // Without the Message Content intent a reply that does not mention Steward arrives with no text: nothing to do.
    if (!mentioned && (!text || !deps.hasActiveCard(channel.id))) return;
    if (!(await claimed())) return;
    if (!text) return deps.post(channel.id, renderHelp('Say what to do after the mention.'));
    // Spend caps per channel count a thread's runs for the channel it was started in.
    const place = channel.parentId ? toConversation(guildId, channel.parentId).key : undefined;
    return toEngine(deps, channel.id, { ...base, conversation: toConversation(guildId, channel.id), place });
  }
  if (!mentioned || !(await claimed())) return;
  // Where the run can talk, from Steward's permissions in the channel as the gateway last told them.
  const me = message.guild?.members.me;
  const place = runPlace(me ? (channel.permissionsFor(me)?.bitfield ?? null) : null);
  if (place.where === 'nowhere') {
    deps.log('warn', placeLogText(place, channel.id));
    return tellDirectly(deps, message.author.id, textMessage(cannotAnswerText(place, channel.id)));
  }
  if (!text) return deps.post(channel.id, renderHelp('Say what to do after the mention.'));
  if (place.where === 'channel') {
    deps.log('warn', placeLogText(place, channel.id));
    await deps.post(channel.id, textMessage(answeringHereText(place)));
  }
  // The request gets a thread of its own on the message; where Steward may not make one, it answers in the channel.
  const where =
    place.where === 'channel'
      ? channel.id
      : await message.startThread(runThread(text)).then(
          (thread) => thread.id,
          async (err: unknown) => {
            // Refused for a permission the gateway had not told of yet: said in the channel as above.
            if ((err as { code?: unknown }).code === RESTJSONErrorCodes.MissingPermissions) {
              deps.log('warn', placeLogText(THREAD_REFUSED, channel.id));
              await deps.post(channel.id, textMessage(answeringHereText(THREAD_REFUSED)));
            } else deps.log('warn', `discord: could not start a thread in ${channel.id} (${(err as Error).message})`);
            return channel.id;
          },
        );
  const spendPlace = toConversation(guildId, channel.id).key;
  return toEngine(deps, where, { ...base, conversation: toConversation(guildId, where), place: spendPlace });
}

/** A message to one person in a direct message (Discord refuses it when they accept none: then the log says so). */
async function tellDirectly(deps: DiscordDeps, userId: string, message: DiscordMessage): Promise<void> {
  try {
    const dm = (await deps.client.rest.post(Routes.userChannels(), { body: { recipient_id: userId } })) as {
      id: string;
    };
    await deps.post(dm.id, message);
  } catch (err) {
    deps.log('error', `discord: could not tell ${userId} by direct message (${(err as Error).message})`);
  }
}

/**
 * Posts the run picker for a bare control word when the person has several runs active in this DM; false when not
 * (with one, the word is a reply to it, as in any run's thread).
 */
async function offeredPicker(
  deps: DiscordDeps,
  actor: Actor,
  text: string,
  conversation: Conversation,
  channelId: string,
): Promise<boolean> {
  const word = pickerWord(text);
  if (!word) return false;
  const runs = (await deps.handler.activeRuns(actor)).filter((r) => r.conversation.key === conversation.key);
  const picker = runs.length > 1 ? createRunPicker(word, runs) : null;
  if (!picker) return false;
  await deps.post(channelId, renderRunPicker(picker));
  return true;
}

/** Hands a message to the engine with "Steward is typing…" shown in its channel until Steward answers there. */
async function toEngine(
  deps: DiscordDeps,
  channelId: string,
  message: Parameters<InboundHandler['message']>[0],
): Promise<void> {
  deps.typing.show(channelId);
  try {
    await deps.handler.message(message);
  } finally {
    deps.typing.clear(channelId);
  }
}

/** A Discord person as an actor, with their nickname and roles in the server (none in a DM). */
export function actorOf(user: User, member: GuildMember | APIInteractionGuildMember | null): Actor {
  const base = { id: user.id, username: user.username, globalName: user.globalName };
  if (!member) return toActor(base);
  if ('nickname' in member)
    return toActor({
      ...base,
      nick: member.nickname,
      roles: [...member.roles.cache.keys()].filter((id) => id !== member.guild.id),
    });
  return toActor({ ...base, nick: member.nick ?? null, roles: member.roles });
}
