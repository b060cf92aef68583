/**
 * The `/steward` slash command: `ask` posts the request and starts a thread on it (in a DM, answers there),
 * `status`, `runs`, `review`, `suggestions`, `workflow`, `spend`, `connections` and `help` answer privately. Each is deferred at once (Discord allows 3
 * seconds), then the answer replaces the "thinking" reply.
 */
import {
  Events,
  MessageFlags,
  type ChatInputCommandInteraction,
  type Message,
  type ModalSubmitInteraction,
} from 'discord.js';
import type { ConnectionsCommand } from '../../engine/channel.ts';
import type { Actor, ReviewPreference } from '../../engine/types.ts';
import { RECENT_RUNS } from '../command-words.ts';
import { deliveryFilter } from '../delivery-filter.ts';
import {
  COMMAND_NAME,
  renderDashboardLink,
  renderAskPosted,
  renderHelp,
  renderPromptPosted,
  renderPreferenceSet,
  renderRunList,
  renderSpend,
  renderSuggestionsSet,
  renderWorkflowAnswer,
  runLinks,
} from './discord-command-text.ts';
import { runThread, toConversation } from './discord-inbound.ts';
import { renderConnections } from './discord-connections.ts';
import { answerDeadline, claimed } from './discord-interactions.ts';
import { actorOf, type DiscordDeps } from './discord-messages.ts';
import { textMessage, toMessageOptions } from './discord-render.ts';
import { answeringHereText, cannotAnswerText, placeLogText, runPlace } from './discord-permissions.ts';
import { startsLikeWorkflowCommand } from '../../engine/workflow/workflow-commands.ts';
import { isAssistantCommand } from '../../engine/assistant/assistant-commands.ts';
import { askCommandText } from '../assistant-words.ts';
import { promptSourceNote } from '../../engine/server-prompts.ts';
import { answerAutocomplete } from './discord-autocomplete.ts';

const PREFERENCES: readonly ReviewPreference[] = ['all', 'risky', 'none'];

/** Registers the slash command's listener. */
export function registerCommands(deps: DiscordDeps): void {
  const firstDelivery = deliveryFilter(1_000);
  deps.client.on(Events.InteractionCreate, (interaction) => {
    if (interaction.isAutocomplete() && interaction.commandName === COMMAND_NAME) {
      // Read-only, so no claim in the database: a claim's round trip would eat into Discord's 3 seconds.
      if (firstDelivery(interaction.id))
        deps.track(answerAutocomplete(interaction, actorOf(interaction.user, interaction.member), deps));
      return;
    }
    if (!interaction.isChatInputCommand() || interaction.commandName !== COMMAND_NAME) return;
    if (!firstDelivery(interaction.id)) return;
    const actor = actorOf(interaction.user, interaction.member);
    deps.track(
      claimed(deps, interaction.id, answerDeadline()).then((mine) => {
        if (!mine) return;
        deps.pressed(actor, interaction);
        return onCommand(interaction, actor, deps);
      }),
    );
  });
}

async function onCommand(i: ChatInputCommandInteraction, actor: Actor, deps: DiscordDeps): Promise<void> {
  const { handler } = deps;
  const sub = i.options.getSubcommand(false) ?? 'help';
  if (sub === 'ask') return ask(i, actor, deps);
  await i.deferReply({ flags: MessageFlags.Ephemeral });
  switch (sub) {
    case 'status': {
      const runs = await handler.activeRuns(actor);
      const list = renderRunList(runs, 'Your runs in progress', 'You have no runs in progress.', runLinks(runs));
      await i.editReply(toMessageOptions(list));
      return;
    }
    case 'runs': {
      const runs = await handler.recentRuns(actor, RECENT_RUNS);
      await i.editReply(
        toMessageOptions(renderRunList(runs, 'Your latest runs', 'You have no runs yet.', runLinks(runs))),
      );
      return;
    }
    case 'dashboard':
      await i.editReply(toMessageOptions(renderDashboardLink(await handler.dashboardLink(actor))));
      return;
    case 'spend': {
      if (!handler.spendReport) {
        await i.editReply(toMessageOptions(renderHelp('Spend is not shown in this Steward.')));
        return;
      }
      const report = await handler.spendReport(actor, toConversation(i.guildId, i.channelId));
      await i.editReply(toMessageOptions(renderSpend(report)));
      return;
    }
    case 'connections': {
      const action = i.options.getString('action') ?? 'list';
      const server = i.options.getString('server')?.trim();
      if (action !== 'list' && !server) {
        await i.editReply(
          toMessageOptions(renderHelp(`\`/steward connections action:${action}\` needs a \`server:\`.`)),
        );
        return;
      }
      const kinds: Record<string, Exclude<ConnectionsCommand['kind'], 'list'>> = {
        connect: 'connect',
        disconnect: 'disconnect',
        use: 'use',
        notme: 'refuse',
      };
      const kind = Object.hasOwn(kinds, action) ? kinds[action] : undefined;
      const command: ConnectionsCommand = kind ? { kind, server: server ?? '' } : { kind: 'list' };
      // Where a link it gives was asked for: a connection made with it is confirmed here, privately.
      const conversation = toConversation(i.guildId, i.channelId);
      const answer = await handler.connections(actor, command, conversation);
      await i.editReply(toMessageOptions(renderConnections(answer)));
      return;
    }
    case 'review': {
      const preference = PREFERENCES.find((p) => p === i.options.getString('preference'));
      if (!preference) {
        await i.editReply(toMessageOptions(renderHelp('`/steward review` takes one of `all`, `risky` or `none`.')));
        return;
      }
      await handler.setReviewPreference(actor, preference);
      await i.editReply(toMessageOptions(renderPreferenceSet(preference)));
      return;
    }
    case 'suggestions': {
      const choice = i.options.getString('offers');
      if (choice !== 'on' && choice !== 'off') {
        await i.editReply(toMessageOptions(renderHelp('`/steward suggestions` takes `on` or `off`.')));
        return;
      }
      await handler.setBreakpointSuggestions(actor, choice === 'on');
      await i.editReply(toMessageOptions(renderSuggestionsSet(choice === 'on')));
      return;
    }
    case 'workflow': {
      const text = i.options.getString('command', true).trim();
      if (!startsLikeWorkflowCommand(text)) {
        const note = 'A workflow command starts with save, workflows, workflow, fork or schedule.';
        await i.editReply(toMessageOptions(renderHelp(note)));
        return;
      }
      const conversation = toConversation(i.guildId, i.channelId);
      const answer = await handler.workflowCommand({ actor, conversation, text });
      await i.editReply(toMessageOptions(renderWorkflowAnswer(answer.text)));
      return;
    }
    case 'prompt':
      return prompt(i, actor, deps);
    case 'assistant': {
      const text = i.options.getString('command', true).trim();
      // The command's name already says "assistant": `ops grant audit allow` means `assistant ops grant audit allow`.
      const command = isAssistantCommand(text) ? text : `assistant ${text}`;
      const conversation = toConversation(i.guildId, i.channelId);
      const answer = await handler.assistantCommand({ actor, conversation, text: command });
      await i.editReply(toMessageOptions(renderWorkflowAnswer(answer.text)));
      return;
    }
    default:
      await i.editReply(toMessageOptions(renderHelp()));
  }
}

/**
 * `/steward prompt`: without `choose`, the servers' prompts, privately; with it, the prompt filled in by its server and
 * posted in the channel (marked as the server's words) with a thread for the run, as `ask` does; a refusal, privately.
 */
async function prompt(i: ChatInputCommandInteraction, actor: Actor, deps: DiscordDeps): Promise<void> {
  const { handler } = deps;
  if (!handler.promptList || !handler.choosePrompt) {
    await i.editReply(toMessageOptions(renderHelp('MCP server prompts are not offered here.')));
    return;
  }
  const choice = i.options.getString('choose')?.trim();
  if (!choice) {
    await i.editReply(toMessageOptions(renderWorkflowAnswer((await handler.promptList(actor)).text)));
    return;
  }
  const chosen = await handler.choosePrompt(actor, `prompt ${choice}`);
  if (!chosen.ok) {
    await i.editReply(toMessageOptions(renderWorkflowAnswer(chosen.answer.text)));
    return;
  }
  await i.editReply(toMessageOptions(renderWorkflowAnswer(`Started from the prompt ${chosen.source}, below.`)));
  const shown = renderPromptPosted(actor, promptSourceNote(chosen.source), chosen.request);
  const posted = await i.followUp(toMessageOptions(shown));
  const { request } = chosen;
  await startOn(i, actor, deps, posted, { request, text: request, fromPrompt: chosen.source });
}

/**
 * `/steward ask`: the request is shown in the channel (the command's own reply), a thread is started on it and the
 * run talks there; in a DM, or where Steward may not start a thread, it talks where the command was used.
 */
async function ask(i: ChatInputCommandInteraction, actor: Actor, deps: DiscordDeps): Promise<void> {
  const request = i.options.getString('request', true).trim();
  return startAsk(i, actor, deps, { request, shown: request, text: askCommandText(request) });
}

/**
 * Starts a request as `/steward ask` does: `shown` posted in the channel as who asked what, a thread named after
 * `request` started on it, and `text` sent to the engine as a new request. "Ask Steward" on a message uses it too.
 */
export async function startAsk(
  i: ChatInputCommandInteraction | ModalSubmitInteraction,
  actor: Actor,
  deps: DiscordDeps,
  words: { request: string; shown: string; text: string },
): Promise<void> {
  const { request, shown, text } = words;
  // A modal's submission may in principle come from nowhere; a command always has a channel.
  if (!i.channelId) return;
  await i.deferReply();
  await i.editReply(toMessageOptions(renderAskPosted(actor, shown)));
  await startOn(i, actor, deps, await i.fetchReply(), { request, text });
}

/** Starts the run on a message the command posted: in a thread started on it (in a server), else where it is. */
async function startOn(
  i: ChatInputCommandInteraction | ModalSubmitInteraction,
  actor: Actor,
  deps: DiscordDeps,
  posted: Message,
  words: { request: string; text: string; fromPrompt?: string },
): Promise<void> {
  const { request, text, fromPrompt } = words;
  const here = i.channelId;
  if (!here) return;
  // Where the run can talk, from the permissions Discord sent with the command (`app_permissions`); the answer to the
  // command itself needs none. Lacking a thread, the person is told privately; lacking the channel too, no run starts.
  const perms = i.inGuild() && !i.channel?.isThread() ? runPlace(i.appPermissions.bitfield) : runPlace(null);
  if (perms.where !== 'thread') {
    deps.log('warn', placeLogText(perms, here));
    const words = perms.where === 'channel' ? answeringHereText(perms) : cannotAnswerText(perms, here);
    await i.followUp({ ...toMessageOptions(textMessage(words)), flags: MessageFlags.Ephemeral });
    if (perms.where === 'nowhere') return;
  }
  let channelId = here;
  // Spend caps per channel count the run for the channel the command was used in (a thread's: its parent's).
  const parent = i.channel?.isThread() ? i.channel.parentId : null;
  const place = toConversation(i.guildId, parent ?? here).key;
  if (i.inGuild() && perms.where === 'thread') {
    channelId = await posted.startThread(runThread(request)).then(
      (thread) => thread.id,
      (err: unknown) => {
        deps.log('warn', `discord: could not start a thread in ${here} (${(err as Error).message})`);
        return here;
      },
    );
  }
  deps.typing.show(channelId);
  try {
    await deps.handler.message({
      conversation: toConversation(i.guildId, channelId),
      actor,
      text,
      // `ask` is a new request even where a run is active (a DM is one conversation).
      newRequest: true,
      place,
      ...(fromPrompt !== undefined && { fromPrompt }),
    });
  } finally {
    deps.typing.clear(channelId);
  }
}
