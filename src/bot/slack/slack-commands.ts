/**
 * The `/steward` slash command. It is acknowledged at once (Slack allows 3 s): help in the acknowledgement itself,
 * everything else (workflow commands included) privately through the command's `response_url` once the engine
 * answered.
 */
import type { App, SlashCommand } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { RunListing } from '../../engine/channel.ts';
import type { Actor } from '../../engine/types.ts';
import {
  dashboardText,
  helpText,
  parseCommand,
  runListText,
  spendAnswerText,
  STEWARD_COMMAND,
  type StewardCommand,
  workflowAnswerText,
} from './slack-command-text.ts';
import { RECENT_RUNS, reviewText, suggestionsText } from '../command-words.ts';
import { connectionsAnswerText } from './slack-connections.ts';
import { fromConversation, toActor, toChannelConversation, toConversation } from './slack-inbound.ts';
import type { ListenerDeps } from './slack-listeners.ts';
import { askCommandText } from '../assistant-words.ts';
import { mentionUser, safeMrkdwn } from './slack-text.ts';
import { promptSourceNote } from '../../engine/server-prompts.ts';

type CommandDeps = Pick<ListenerDeps, 'handler' | 'track' | 'thinking'> & {
  /** Posts a top-level message through the channel's paced lane and returns its ts (throws Slack's refusal). */
  postTopLevel(channel: string, text: string): Promise<string | undefined>;
};

/** Registers the `/steward` command on the Bolt app. */
export function registerCommands(app: App, deps: CommandDeps): void {
  app.command(STEWARD_COMMAND, async ({ command, ack, respond, client, context }) => {
    const parsed = parseCommand(command.text, context.botUserId);
    if (parsed.kind === 'help') {
      await ack({ response_type: 'ephemeral', text: helpText(parsed.note) });
      return;
    }
    await ack();
    const reply = async (text: string) => void (await respond({ response_type: 'ephemeral', text }));
    const actor = toActor({ id: command.user_id, name: command.user_name });
    deps.track(
      answer(deps, client, command, actor, parsed, reply).catch(async (err: unknown) => {
        await reply(`Sorry, that did not work: ${safeMrkdwn(err instanceof Error ? err.message : String(err), 300)}`);
        throw err;
      }),
    );
  });
}

type Reply = (text: string) => Promise<void>;

async function answer(
  deps: CommandDeps,
  client: WebClient,
  command: SlashCommand,
  actor: Actor,
  parsed: Exclude<StewardCommand, { kind: 'help' }>,
  reply: Reply,
): Promise<void> {
  const { handler } = deps;
  switch (parsed.kind) {
    case 'status': {
      const runs = await handler.activeRuns(actor);
      const none = 'You have no runs under way. Start one with `/steward ask <request>`.';
      return reply(runListText('Your runs under way', runs, await permalinks(client, runs), none));
    }
    case 'runs': {
      const runs = await handler.recentRuns(actor, RECENT_RUNS);
      const none = 'You have no runs yet. Start one with `/steward ask <request>`.';
      return reply(runListText(`Your last ${RECENT_RUNS} runs`, runs, await permalinks(client, runs), none));
    }
    case 'dashboard':
      return reply(dashboardText(await handler.dashboardLink(actor)));
    case 'spend': {
      if (!handler.spendReport) return reply('Spend is not shown in this Steward.');
      const report = await handler.spendReport(actor, toChannelConversation(command.channel_id));
      return reply(spendAnswerText(report));
    }
    case 'review':
      await handler.setReviewPreference(actor, parsed.preference);
      return reply(reviewText(parsed.preference));
    case 'suggestions':
      await handler.setBreakpointSuggestions(actor, parsed.on);
      return reply(suggestionsText(parsed.on));
    case 'ask':
      return ask(deps, command.channel_id, actor, parsed.request, reply);
    case 'connections': {
      // Where a link it gives was asked for: a connection made with it is confirmed here, privately.
      const conversation = toChannelConversation(command.channel_id);
      return reply(connectionsAnswerText(await handler.connections(actor, parsed.command, conversation)));
    }
    case 'workflow': {
      const conversation = toChannelConversation(command.channel_id);
      const answer = await handler.workflowCommand({ actor, conversation, text: parsed.text });
      return reply(workflowAnswerText(answer.text));
    }
    case 'assistant': {
      const conversation = toChannelConversation(command.channel_id);
      const answer = await handler.assistantCommand({ actor, conversation, text: parsed.text });
      return reply(workflowAnswerText(answer.text));
    }
    case 'prompt': {
      if (!handler.promptList || !handler.choosePrompt) return reply('MCP server prompts are not offered here.');
      if (/^prompts\s*$/i.test(parsed.text)) return reply(workflowAnswerText((await handler.promptList(actor)).text));
      const chosen = await handler.choosePrompt(actor, parsed.text);
      if (!chosen.ok) return reply(workflowAnswerText(chosen.answer.text));
      return ask(deps, command.channel_id, actor, chosen.request, reply, chosen.source);
    }
  }
}

/**
 * A request by command, handled like a mention: a top-level message in the conversation the command was used in
 * says who asked what, and Steward answers in its thread.
 */
async function ask(
  deps: CommandDeps,
  channel: string,
  actor: Actor,
  request: string,
  reply: Reply,
  fromPrompt?: string,
): Promise<void> {
  // A prompt's text is the server's words: the message says so before it, and it is sent on as it is.
  const text =
    fromPrompt === undefined
      ? `${mentionUser(actor.id)} asked: ${safeMrkdwn(request, 2_900)}`
      : `${mentionUser(actor.id)} ${safeMrkdwn(promptSourceNote(fromPrompt), 400)}\n>>> ${safeMrkdwn(request, 2_900)}`;
  let ts: string | undefined;
  try {
    // Through the channel's lane: a busy channel delays the request, only a refusal for good stops it.
    ts = await deps.postTopLevel(channel, text);
  } catch (err) {
    const code = (err as { data?: { error?: string } }).data?.error ?? (err as Error).message;
    const hint = 'Invite me with `/invite @Steward`, or send me a direct message.';
    return reply(`I cannot post in this conversation (${safeMrkdwn(code, 100)}), so nothing was started. ${hint}`);
  }
  if (!ts) return reply('Slack did not say where my message went, so nothing was started. Please try again.');
  const done = deps.thinking(channel, ts, ts);
  const conversation = toConversation(channel, ts);
  const message =
    fromPrompt === undefined
      ? { conversation, actor, text: askCommandText(request), place: channel }
      : { conversation, actor, text: request, place: channel, fromPrompt };
  await deps.handler.message(message).finally(done);
}

/** Links to each run's thread, where Slack gives one (a run without one is named by its channel instead). */
export async function permalinks(client: WebClient, runs: readonly RunListing[]): Promise<Map<string, string>> {
  const found = await Promise.all(
    runs.slice(0, 20).map(async (run): Promise<[string, string] | null> => {
      const where = fromConversation(run.conversation);
      if (!where) return null;
      const res = await client.chat
        .getPermalink({ channel: where.channel, message_ts: where.threadTs })
        .catch(() => undefined);
      return res?.permalink ? [run.id, res.permalink] : null;
    }),
  );
  return new Map(found.filter((f): f is [string, string] => f !== null));
}
