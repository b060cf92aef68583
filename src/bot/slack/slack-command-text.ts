/**
 * The `/steward` slash command as text (pure): what a person typed, as a sub-command, and the private answers
 * (help, run lists, the review and suggestion preferences). Request text is escaped, so it can ping nobody.
 */
import { RUN_ICONS } from '../card-words.ts';
import { RECENT_RUNS } from '../command-words.ts';
import type { ConnectionsCommand, RunListing } from '../../engine/channel.ts';
import { parseConnectionsCommand } from '../connection-words.ts';
import { SLACK_CONNECTIONS_STYLE } from './slack-connections.ts';
import type { ReviewPreference } from '../../engine/types.ts';
import { startsLikeWorkflowCommand } from '../../engine/workflow/workflow-commands.ts';
import { WORKFLOW_HELP_LINES } from '../workflow-words.ts';
import { isAssistantCommand } from '../../engine/assistant/assistant-commands.ts';
import { isPromptCommand } from '../../engine/server-prompts.ts';
import { ASSISTANT_HELP_LINES } from '../assistant-words.ts';
import { fromConversation, messageText } from './slack-inbound.ts';
import { safeMrkdwn } from './slack-text.ts';
import type { SpendReport } from '../../engine/spend.ts';
import { spendReportText } from '../spend-words.ts';

/** The command's name, as in the manifest. */
export const STEWARD_COMMAND = '/steward';
/** The most lines a list shows; the rest is counted. */
const MAX_LINES = 20;

/** A sub-command of `/steward`. */
export type StewardCommand =
  | { kind: 'help'; note?: string }
  | { kind: 'status' }
  | { kind: 'runs' }
  | { kind: 'dashboard' }
  /** Spend on models today and this month, with the caps and what is left. */
  | { kind: 'spend' }
  | { kind: 'review'; preference: ReviewPreference }
  /** Whether the person's plan cards offer suggested breakpoints. */
  | { kind: 'suggestions'; on: boolean }
  | { kind: 'ask'; request: string }
  /** A workflow command: the person's words as typed after `/steward` (Slack's escapes undone). */
  | { kind: 'workflow'; text: string }
  /** An Assistant command (`assistants`, `assistant <name> …`), as typed after `/steward`. */
  | { kind: 'assistant'; text: string }
  /** The person's own connections to servers that connect per person. */
  | { kind: 'connections'; command: ConnectionsCommand }
  /** `prompts` (list them) or `prompt <server>/<name> …` (start from one), as typed after `/steward`. */
  | { kind: 'prompt'; text: string };

const PREFERENCES: readonly ReviewPreference[] = ['all', 'risky', 'none'];

/** The sub-command in the command's text; anything unknown or incomplete is help, with a note saying why. */
export function parseCommand(raw: string, botUserId: string | undefined): StewardCommand {
  const text = messageText(raw, botUserId);
  const [word = '', ...rest] = text.split(/\s+/);
  const arg = text.slice(word.length).trim();
  if (startsLikeWorkflowCommand(text)) return { kind: 'workflow', text };
  if (isAssistantCommand(text)) return { kind: 'assistant', text };
  if (isPromptCommand(text)) return { kind: 'prompt', text };
  if (word.toLowerCase() === 'prompt')
    return {
      kind: 'help',
      note: 'Say which prompt: `/steward prompt <server>/<name> key=value …` (`/steward prompts` lists them).',
    };
  switch (word.toLowerCase()) {
    case '':
    case 'help':
      return { kind: 'help' };
    case 'status':
      return { kind: 'status' };
    case 'runs':
      return { kind: 'runs' };
    case 'dashboard':
      return { kind: 'dashboard' };
    case 'spend':
      return { kind: 'spend' };
    case 'review': {
      const preference = PREFERENCES.find((p) => p === rest[0]?.toLowerCase());
      if (preference && rest.length === 1) return { kind: 'review', preference };
      return { kind: 'help', note: '`/steward review` takes one of `all`, `risky` or `none`.' };
    }
    case 'suggestions': {
      const choice = rest.length === 1 ? rest[0]!.toLowerCase() : '';
      if (choice === 'on' || choice === 'off') return { kind: 'suggestions', on: choice === 'on' };
      return { kind: 'help', note: '`/steward suggestions` takes `on` or `off`.' };
    }
    case 'ask':
      return arg ? { kind: 'ask', request: arg } : { kind: 'help', note: 'Say what to do after `ask`.' };
    case 'connections': {
      const command = parseConnectionsCommand(rest, SLACK_CONNECTIONS_STYLE);
      return 'note' in command ? { kind: 'help', note: command.note } : { kind: 'connections', command };
    }
    default:
      return { kind: 'help', note: `I do not know \`${safeMrkdwn(word, 40).replace(/`/g, 'ˋ')}\`.` };
  }
}

/** What `/steward help` says (with a note first when the command was not understood). */
export function helpText(note?: string): string {
  return [
    ...(note ? [note, ''] : []),
    '*Steward* plans multi-step work over your tools, shows you the plan, runs it and reports.',
    '• `/steward ask <request>`: a new request here; I answer in a thread under it. You can also mention @Steward, or send me a direct message.',
    '• `/steward status`: your runs that are not finished, with links',
    `• \`/steward runs\`: your last ${RECENT_RUNS} runs, with links`,
    '• `/steward dashboard`: a private sign-in link to the web dashboard (plan graphs, timelines), when it is on',
    '• `/steward spend`: what models cost today and this month, by channel, person and model, with the spend caps left',
    '• `/steward review all|risky|none`: which of your plans wait for your approval: every plan, medium and high risk (the default), or only high risk (high risk always waits)',
    '• `/steward suggestions on|off`: whether your plan cards offer breakpoints where you stepped in before',
    '• `/steward connections [connect|disconnect <server>]`: your own accounts on servers that run your steps as you: list, connect (a private link), disconnect (`use` or `notme <server>` answers about a connection that waits for you)',
    "• `/steward prompts`: the starting points the MCP servers offer; `/steward prompt <server>/<name> key=value …` starts a request here with one's text (the server's words: read the plan made from it before approving)",
    '• `/steward help`: this list',
    "*Workflows* (a run's approved plan, saved to run again or on a schedule; the *Save as workflow* button on a completed run's card saves one too):",
    ...WORKFLOW_HELP_LINES.map((l) => `• \`/steward ${l.form}\`: ${l.what}`),
    '*Assistants* (named specialists with their own instructions and tool grants; mention `@Steward ask <name>: …` too):',
    ...ASSISTANT_HELP_LINES.map((l) => `• \`/steward ${l.form}\`: ${l.what}`),
  ].join('\n');
}

/** The most characters of a workflow command's answer shown (Slack advises keeping a message's text under 4,000). */
const WORKFLOW_ANSWER_MAX = 3_900;

/** A workflow command's answer as Slack text: the engine's plain text, escaped so it can ping nobody. */
export function workflowAnswerText(answer: string): string {
  return safeMrkdwn(answer, WORKFLOW_ANSWER_MAX);
}

/** The private answer to `/steward spend`: the shared words, escaped (a channel shown by its id). */
export function spendAnswerText(report: SpendReport): string {
  return safeMrkdwn(spendReportText(report), 3_800);
}

/** The private answer to `/steward dashboard`: the link (only characters a URL needs), or that the dashboard is off. */
export function dashboardText(link: string | null): string {
  if (!link) return 'The web dashboard is not turned on in this Steward (an operator sets `STEWARD_DASHBOARD_PORT`).';
  return `<${link}|Open the dashboard>: this sign-in link is only for you, works once, and expires in 15 minutes.`;
}

/** A list of runs, a line each: status, what it is (linked to its thread when a link is known), and when. */
export function runListText(title: string, runs: RunListing[], links: ReadonlyMap<string, string>, empty: string) {
  if (runs.length === 0) return empty;
  const lines = runs.slice(0, MAX_LINES).map((run) => {
    const label = safeMrkdwn((run.summary ?? run.request).replace(/\s+/g, ' '), 80);
    const link = links.get(run.id);
    const where = link ? `<${link}|${label}>` : `${label} (${placeText(run)})`;
    return `• ${RUN_ICONS[run.status]} *${run.statusText}* · ${where} · ${timeText(run.createdAt)}`;
  });
  const more = runs.length > MAX_LINES ? [`…and ${runs.length - MAX_LINES} more.`] : [];
  return [`*${title}*`, ...lines, ...more].join('\n');
}

/** Where a run's thread is, when there is no link to it. */
function placeText(run: RunListing): string {
  const where = fromConversation(run.conversation);
  if (!where) return 'elsewhere';
  return where.channel.startsWith('D') ? 'in a direct message' : `in <#${where.channel}>`;
}

/** A run's start time in UTC, to the minute. */
function timeText(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
