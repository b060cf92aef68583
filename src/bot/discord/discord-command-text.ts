/**
 * The `/steward` slash command for Discord (pure): its definition as API JSON, and the private answers it gives
 * (help, run lists, the review and suggestion preferences) as Discord messages. Request text and summaries are escaped, so they
 * can ping nobody.
 */
import { RUN_ICONS } from '../card-words.ts';
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ApplicationIntegrationType,
  InteractionContextType,
  type RESTPostAPIApplicationGuildCommandsJSONBody,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';
import type { RunListing } from '../../engine/channel.ts';
import type { ReviewPreference } from '../../engine/types.ts';
import type { Actor } from '../../engine/types.ts';
import { RECENT_RUNS, reviewText, suggestionsText } from '../command-words.ts';
import { WORKFLOW_HELP_LINES } from '../workflow-words.ts';
import type { SpendReport } from '../../engine/spend.ts';
import { spendReportText } from '../spend-words.ts';
import { fromConversation } from './discord-inbound.ts';
import { textMessage, type DiscordMessage } from './discord-render.ts';
import { personText, safeText } from './discord-text.ts';

/** The command's name, as typed after the slash. */
export const COMMAND_NAME = 'steward';
/** The most characters a message's content holds. */
const CONTENT_MAX = 2_000;

const PREFERENCE_WORDS: Record<ReviewPreference, string> = {
  all: 'every plan',
  risky: 'medium and high risk (the default)',
  none: 'only high risk',
};

/**
 * `/steward` as registered globally: usable in servers and in direct messages with the bot. Discord 0.38's types
 * mark `dm_permission` deprecated in favour of `contexts` (with `integration_types` saying the bot is installed to
 * a server), so those are used.
 */
export const STEWARD_COMMAND: RESTPostAPIChatInputApplicationCommandsJSONBody = {
  name: COMMAND_NAME,
  description: 'Plan and run multi-step work over your tools',
  integration_types: [ApplicationIntegrationType.GuildInstall],
  contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
  options: [
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'ask',
      description: 'A new request; I answer in a thread',
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'request',
          description: 'What should I do?',
          required: true,
          max_length: 4_000,
        },
      ],
    },
    { type: ApplicationCommandOptionType.Subcommand, name: 'status', description: 'Your runs that are not finished' },
    { type: ApplicationCommandOptionType.Subcommand, name: 'runs', description: `Your last ${RECENT_RUNS} runs` },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'review',
      description: 'Which of your plans wait for your approval',
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'preference',
          description: 'High risk always waits',
          required: true,
          choices: (['all', 'risky', 'none'] as const).map((p) => ({ name: PREFERENCE_WORDS[p], value: p })),
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'suggestions',
      description: 'Whether your plan cards offer breakpoints where you stepped in before',
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'offers',
          description: 'Offered only: never set until you add them',
          required: true,
          choices: [
            { name: 'on', value: 'on' },
            { name: 'off', value: 'off' },
          ],
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'workflow',
      description: 'Saved workflows: save, workflows, workflow, fork, schedule',
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'command',
          description: 'e.g. save digest, workflows, schedule digest "0 9 * * MON" Europe/Berlin',
          required: true,
          max_length: 4_000,
          // Offers what fits as it is typed (discord-autocomplete.ts); anything else may still be typed.
          autocomplete: true,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'assistant',
      description: 'Assistants: assistants, assistant <name>, and (approvers) create, grant, revoke, …',
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'command',
          description: 'e.g. assistants, assistant ops, assistant ops grant audit allow',
          required: true,
          max_length: 4_000,
          // Offers what fits as it is typed (discord-autocomplete.ts); anything else may still be typed.
          autocomplete: true,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'connections',
      description: 'Your own accounts on servers that run your steps as you: list, connect, disconnect',
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'action',
          description: 'Without one: the list',
          required: false,
          choices: [
            { name: 'list', value: 'list' },
            { name: 'connect (a private link)', value: 'connect' },
            { name: 'disconnect (revoked where the server can)', value: 'disconnect' },
            { name: 'use (a connection that waits for you to confirm it)', value: 'use' },
            { name: 'notme (refuse a connection that waits for you: revoked)', value: 'notme' },
          ],
        },
        {
          type: ApplicationCommandOptionType.String,
          name: 'server',
          description: 'The server to connect or disconnect, as the list names it',
          required: false,
          max_length: 100,
          // Offers what fits as it is typed (discord-autocomplete.ts); anything else may still be typed.
          autocomplete: true,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'prompt',
      description: "The MCP servers' prompts: without choose, the list; with it, a request started from one",
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'choose',
          description: 'e.g. everything/args-prompt city=Paris state="Île de France"',
          required: false,
          max_length: 4_000,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'dashboard',
      description: 'A private sign-in link to the web dashboard',
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'spend',
      description: 'What models cost today and this month, with the spend caps left',
    },
    { type: ApplicationCommandOptionType.Subcommand, name: 'help', description: 'What I can do and how' },
  ],
};

/** The message context-menu command's name, as Discord shows it under Apps. */
export const ASK_MESSAGE_NAME = 'Ask Steward';

/** "Ask Steward" on a message (a message command: type 3), registered beside `/steward`, where `/steward` works. */
export const ASK_MESSAGE_COMMAND: RESTPostAPIContextMenuApplicationCommandsJSONBody = {
  name: ASK_MESSAGE_NAME,
  type: ApplicationCommandType.Message,
  integration_types: [ApplicationIntegrationType.GuildInstall],
  contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
};

/** "Ask Steward" as registered to one server: contexts apply only to global commands. */
export const ASK_MESSAGE_GUILD_COMMAND: RESTPostAPIContextMenuApplicationCommandsJSONBody = {
  name: ASK_MESSAGE_NAME,
  type: ApplicationCommandType.Message,
};

/** `/steward` as registered to one server (tests, development): contexts apply only to global commands. */
export const STEWARD_GUILD_COMMAND: RESTPostAPIApplicationGuildCommandsJSONBody = (() => {
  const { contexts: _contexts, integration_types: _types, ...command } = STEWARD_COMMAND;
  return command;
})();

/** The private answer to `/steward dashboard`: the link, or that the dashboard is off. */
export function renderDashboardLink(link: string | null): DiscordMessage {
  if (!link)
    return textMessage(
      'The web dashboard is not turned on in this Steward (an operator sets `STEWARD_DASHBOARD_PORT`).',
    );
  return textMessage(
    `Your sign-in link to the dashboard (only for you; it works once and expires in 15 minutes): <${link}>`,
  );
}

/** The private answer to `/steward spend`: the shared words, escaped so they can ping nobody. */
export function renderSpend(report: SpendReport): DiscordMessage {
  return textMessage(safeText(spendReportText(report), CONTENT_MAX));
}

/** What `/steward help` (and a card's Help button) says, with a note first when the command was not understood. */
export function renderHelp(note?: string): DiscordMessage {
  const lines = [
    '**Steward** plans multi-step work over your tools, shows you the plan, runs it and reports.',
    '• `/steward ask request:` a new request, answered in a thread (or mention me, or DM me)',
    '• `/steward status`: your runs that are not finished',
    `• \`/steward runs\`: your last ${RECENT_RUNS} runs`,
    '• `/steward review`: which of your plans wait for your approval',
    '• `/steward suggestions`: whether your cards suggest breakpoints',
    '• `/steward dashboard`: a private dashboard link; `/steward spend`: spend and caps',
    '• `/steward connections`: your own accounts (connect, disconnect)',
    "• `/steward prompt`: the servers' prompts; `choose:` starts a request from one",
    '',
    "**Workflows** (a run's approved plan, saved to run again or on a schedule): `/steward workflow command:` then",
    ...WORKFLOW_HELP_LINES.map((l) => `• \`${l.form}\`: ${l.what}`),
    '',
    '**Assistants**: `/steward assistant command:` `assistants` lists them',
    '**On a plan card**',
    '• **Approve / Amend / Cancel** while a plan waits; **Pause / Resume / Stop** while it runs.',
    '• **Edit plan** opens the plan as JSON (a long plan: a box per step not yet run).',
    '• **Pause after step…** picks steps to pause after, to see their output first; unpick to drop one.',
    '• **History** shows the revisions and every decision, only to you.',
    '• **Save as workflow** on a completed run saves its plan.',
    '• Reply in the thread to ask how it is going, or to change the steps not yet run.',
    'Only the requester or an approver can decide; anyone can read the history.',
  ];
  const body = lines.join('\n');
  // A note goes first, in what room the help leaves in Discord's 2,000 characters (at most 300).
  const room = Math.min(300, CONTENT_MAX - body.length - 2);
  return textMessage(note && room > 0 ? `${safeText(note, room)}\n\n${body}` : body);
}

/** A request started from a server's prompt, as posted in the channel: who chose it, and that its text is the server's. */
export function renderPromptPosted(actor: Actor, note: string, request: string): DiscordMessage {
  return textMessage(`${personText(actor)} ${safeText(note, 400)}\n>>> ${safeText(request, CONTENT_MAX - 600)}`);
}

/** A workflow command's answer, privately: the engine's plain text, escaped so it can ping nobody. */
export function renderWorkflowAnswer(answer: string): DiscordMessage {
  return textMessage(safeText(answer, CONTENT_MAX));
}

/** The private confirmation of a new review preference (the wording Slack uses). */
export function renderPreferenceSet(preference: ReviewPreference): DiscordMessage {
  return textMessage(reviewText(preference));
}

/** The private confirmation of `/steward suggestions` (the wording Slack uses). */
export function renderSuggestionsSet(on: boolean): DiscordMessage {
  return textMessage(suggestionsText(on));
}

/**
 * A list of runs, a line each: status, what it is (linked to its thread when `links` knows where), and when (a
 * Discord timestamp, shown in the reader's time zone). Lines that do not fit in one message are counted.
 */
export function renderRunList(
  runs: RunListing[],
  title: string,
  emptyText: string,
  links: ReadonlyMap<string, string> = new Map(),
): DiscordMessage {
  if (runs.length === 0) return textMessage(safeText(emptyText, CONTENT_MAX));
  const head = `**${safeText(title, 200)}**`;
  let content = head;
  for (const [i, run] of runs.entries()) {
    // Brackets escaped too, so a summary cannot end the link text early.
    const label = safeText((run.summary ?? run.request).replace(/\s+/g, ' '), 80).replace(/[[\]]/g, '\\$&');
    const link = links.get(run.id);
    const what = link && /^https:\/\/\S+$/.test(link) ? `[${label}](${link})` : label;
    const when = `<t:${Math.floor(run.createdAt.getTime() / 1000)}:f>`;
    const line = `• ${RUN_ICONS[run.status]} **${safeText(run.statusText, 60)}** · ${what} · ${when}`;
    const more = `\n…and ${runs.length - i} more.`;
    if (content.length + 1 + line.length + (i < runs.length - 1 ? more.length : 0) > CONTENT_MAX) {
      content += more;
      break;
    }
    content += `\n${line}`;
  }
  return textMessage(content);
}

/** What `/steward ask` shows in the channel: who asked what (the thread for the run starts on this message). */
export function renderAskPosted(actor: Actor, request: string): DiscordMessage {
  return textMessage(`${personText(actor)} asked: ${safeText(request, CONTENT_MAX - 200)}`);
}

/** Links to the threads of runs, for `renderRunList` (Discord opens `/channels/<server or @me>/<channel>`). */
export function runLinks(runs: readonly RunListing[]): Map<string, string> {
  const links = new Map<string, string>();
  for (const run of runs) {
    const where = fromConversation(run.conversation);
    if (where) links.set(run.id, `https://discord.com/channels/${where.guildId ?? '@me'}/${where.channelId}`);
  }
  return links;
}
