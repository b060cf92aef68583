/**
 * Where a run started in a server channel can talk, from Steward's permissions there (pure): in a thread of its own
 * (Create Public Threads, Send Messages in Threads), else in the channel itself (Send Messages), else nowhere; the
 * plan card is an embed, so both need Embed Links. The words say what is missing and who can grant it, for the person
 * who asked and for the log. Discord refuses a call made without them with 403 and 50013 "Missing Permissions"
 * (https://discord.com/developers/docs/topics/opcodes-and-status-codes#json-json-error-codes).
 */
import { PermissionFlagsBits as P } from 'discord.js';

/** Permissions as Discord's server settings name them (Channel settings → Permissions). */
const NAMES: readonly [bigint, string][] = [
  [P.ViewChannel, 'View Channel'],
  [P.CreatePublicThreads, 'Create Public Threads'],
  [P.SendMessagesInThreads, 'Send Messages in Threads'],
  [P.SendMessages, 'Send Messages'],
  [P.EmbedLinks, 'Embed Links'],
];

const THREAD = [P.ViewChannel, P.CreatePublicThreads, P.SendMessagesInThreads, P.EmbedLinks];
const CHANNEL = [P.ViewChannel, P.SendMessages, P.EmbedLinks];

/** Where a run can talk, and what each better place lacks (names, as the server's settings show them). */
export interface RunPlace {
  where: 'thread' | 'channel' | 'nowhere';
  /** What a thread of its own would need and Steward lacks ([] when it has all). */
  missingForThread: string[];
  /** What answering in the channel would need and Steward lacks. */
  missingForChannel: string[];
}

const lacking = (has: bigint, needed: readonly bigint[]) =>
  NAMES.filter(([bit]) => needed.includes(bit) && !(has & bit)).map(([, name]) => name);

/** Where a run can talk given Steward's permissions in the channel; unknown permissions (null) try a thread. */
export function runPlace(has: bigint | null): RunPlace {
  if (has === null) return { where: 'thread', missingForThread: [], missingForChannel: [] };
  const missingForThread = lacking(has, THREAD);
  const missingForChannel = lacking(has, CHANNEL);
  const where = missingForThread.length === 0 ? 'thread' : missingForChannel.length === 0 ? 'channel' : 'nowhere';
  return { where, missingForThread, missingForChannel };
}

/** Where a run goes when Discord refused its thread for a permission (403, 50013) that the gateway had not shown. */
export const THREAD_REFUSED: RunPlace = {
  where: 'channel',
  missingForThread: ['Create Public Threads'],
  missingForChannel: [],
};

const list = (names: readonly string[]) => names.map((n) => `**${n}**`).join(names.length === 2 ? ' and ' : ', ');
const GRANT = "A server admin can grant it to Steward in the channel's settings (Permissions).";
const GRANT_ALL = "A server admin can grant them to Steward in the channel's settings (Permissions).";

/** Said in the channel when the run answers there instead of in a thread. */
export function answeringHereText(place: RunPlace): string {
  const names = place.missingForThread;
  return (
    `I can't start a thread here: I'm missing ${list(names)} in this channel, so I'll answer in the channel. ` +
    (names.length > 1 ? GRANT_ALL : GRANT)
  );
}

/** Said privately to the person when Steward can answer neither in a thread nor in the channel: no run starts. */
export function cannotAnswerText(place: RunPlace, channelId: string): string {
  const names = [...new Set([...place.missingForThread, ...place.missingForChannel])];
  return (
    `I can't answer you in <#${channelId}>: I'm missing ${list(names)} there, so I did not start your request. ` +
    `${names.length > 1 ? GRANT_ALL : GRANT} Or ask me here, in a direct message.`
  );
}

/** The log's sentence: which channel, what is missing, and what Steward did instead. */
export function placeLogText(place: RunPlace, channelId: string): string {
  return place.where === 'channel'
    ? `discord: cannot start a thread in channel ${channelId}: missing ${place.missingForThread.join(', ')}; answering in the channel`
    : `discord: cannot answer in channel ${channelId}: missing ${[...new Set([...place.missingForThread, ...place.missingForChannel])].join(', ')}; the request was not started and the person was told`;
}
