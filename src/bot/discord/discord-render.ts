/**
 * Renders a run's live card as a Discord message (pure): one embed (summary, steps, risks, warnings, note, footer)
 * and the rows of buttons and the breakpoint select. Whatever the plan's size the message stays inside Discord's
 * limits: a 60-step plan lists what fits and counts the rest.
 */
import {
  ButtonStyle,
  Colors,
  ComponentType,
  type APIActionRowComponent,
  type APIButtonComponentWithCustomId,
  type APIComponentInMessageActionRow,
  type APIEmbed,
  type APIStringSelectComponent,
} from 'discord.js';
import type { PlanCardStep } from '../../engine/messages.ts';
import { isSteerable, type DecisionAction, type RunStatus } from '../../engine/types.ts';
import { isFinished, isHeldMidRun, openSuggestions, stepNotes, type LiveCard } from '../live-card-state.ts';

import { cardWarnings, estimateText, spendText } from '../card-estimate.ts';
import { DECISION_LABELS, formatDuration, HELD_HEADING, RUN_HEADINGS, STEP_ICONS } from '../card-words.ts';
import { customId, DECISION_KINDS, type CardRef } from './discord-actions.ts';
import { codeSpan, personText, plainText, safeText } from './discord-text.ts';
import { shortRunId } from '../../engine/text.ts';

/** A message row: buttons, or one select menu. */
export type MessageRow = APIActionRowComponent<APIComponentInMessageActionRow>;

/**
 * A message body as Discord's API takes it (snake_case JSON). `allowed_mentions` is the API's field: a channel
 * posting through REST sends the body as it is; through discord.js it passes `toMessageOptions(message)`, because
 * discord.js reads only `allowedMentions` from its options (an `allowed_mentions` key there is silently dropped and
 * the client's default sent instead).
 */
export interface DiscordMessage {
  content?: string;
  embeds: APIEmbed[];
  components: MessageRow[];
  allowed_mentions: { parse: [] };
}

/**
 * The message as discord.js options (send, edit, reply, update, followUp): embeds and components pass through as API
 * JSON, and `allowedMentions` reaches the API as `allowed_mentions: { parse: [] }`.
 */
export function toMessageOptions(message: DiscordMessage): {
  content?: string;
  embeds: APIEmbed[];
  components: MessageRow[];
  allowedMentions: { parse: [] };
} {
  return {
    ...(message.content !== undefined ? { content: message.content } : {}),
    embeds: message.embeds,
    components: message.components,
    allowedMentions: { parse: [] },
  };
}

/** A message of content alone. */
export function textMessage(content: string, components: MessageRow[] = []): DiscordMessage {
  return { content, embeds: [], components, allowed_mentions: { parse: [] } };
}

/** Under the steps of a card that had to cut some of them: where each step can be read whole. */
export const SHORTENED_NOTE =
  '✂️ *Some steps are shortened to fit this card.* **Full plan** shows every step with its arguments, only to you.';

/** Characters an embed description holds. */
export const DESCRIPTION_MAX = 4_096;
const TITLE_MAX = 256;
const LINE_MAX = 400;
const LINE_MIN = 60;
/** Options a select menu holds. */
const OPTIONS_MAX = 25;

const COLOURS: Record<RunStatus, number> = {
  planning: Colors.DarkGrey,
  awaiting_review: Colors.Blurple,
  running: Colors.Blue,
  paused: Colors.Orange,
  stopping: Colors.Orange,
  completed: Colors.Green,
  failed: Colors.Red,
  cancelled: Colors.DarkGrey,
  stopped: Colors.DarkGrey,
};

const STYLES: Partial<Record<DecisionAction, ButtonStyle.Success | ButtonStyle.Danger | ButtonStyle.Primary>> = {
  approve: ButtonStyle.Success,
  resume: ButtonStyle.Primary,
  cancel: ButtonStyle.Danger,
  stop: ButtonStyle.Danger,
};

/** How the card is drawn for this bot. */
export interface CardOptions {
  /**
   * The bot's name when a reply must mention it to reach Steward (no Message Content intent), so the card says so;
   * unset, a plain reply in the thread is read.
   */
  mentionToReply?: string;
}

/** The card for a run as it is now; `now` (epoch ms) only feeds the elapsed time. */
export function renderCard(live: LiveCard, now: number, options: CardOptions = {}): DiscordMessage {
  const { card } = live;
  const heading = isHeldMidRun(live) ? HELD_HEADING : RUN_HEADINGS[live.status];
  const head = statusLine(live);
  const tail = cardTail(live);
  const room = DESCRIPTION_MAX - head.length - tail.length - SHORTENED_NOTE.length - 8;
  // Cut anywhere (an argument preview, a line, steps left out): the card says where the whole plan is.
  let shortened = live.card.steps.some((s) => s.argsPreview.endsWith('…'));
  const lines = stepLines(live, room, () => void (shortened = true)).join('\n');
  const steps = shortened ? `${lines}\n${SHORTENED_NOTE}` : lines;
  const description = [head, steps, tail].filter(Boolean).join('\n\n');
  const embed: APIEmbed = {
    author: { name: `${heading} · revision ${card.revision}` },
    title: safeText(card.summary || '(no summary)', TITLE_MAX),
    description,
    color: COLOURS[live.status],
    footer: { text: footnote(live, now, options) },
  };
  return { embeds: [embed], components: cardRows(live, shortened), allowed_mentions: { parse: [] } };
}

/** Risk, who asked, and how far the run has got. */
function statusLine(live: LiveCard): string {
  const parts = [`Risk **${live.card.risk.toUpperCase()}**`, `requested by ${personText(live.card.requester)}`];
  if ((live.status !== 'awaiting_review' && live.status !== 'planning') || isHeldMidRun(live))
    parts.push(`step ${live.finished}/${live.total}`);
  return parts.join(' · ');
}

/** Risks, warnings and the note, each capped so the steps keep most of the description. */
function cardTail(live: LiveCard): string {
  const { card } = live;
  const blocks: string[] = [];
  // An Assistant's name is a slug (letters, digits, - and _): nothing in it is markdown.
  if (card.assistant)
    blocks.push(
      `**Assistant** ${card.assistant}${card.delegatedBy ? ` (a step of run \`${shortRunId(card.delegatedBy)}\`)` : ''}`,
    );
  const estimate = estimateText(live);
  if (estimate) blocks.push(safeText(estimate, 300));
  const spend = spendText(live);
  if (spend) blocks.push(safeText(spend, 400));
  if (card.risks.length > 0) blocks.push(`**Risks**\n${bullets(card.risks, 500)}`);
  const warnings = cardWarnings(live);
  if (warnings.length > 0) blocks.push(`⚠️ **Before you approve**\n${bullets(warnings, 500)}`);
  const offered = openSuggestions(live).map((b) => `before ${b.stepId}: ${b.why}`);
  if (offered.length > 0)
    // The way to stop the offers is named where they are, so a person who finds them noise knows it.
    blocks.push(
      `**Suggested breakpoints** (not set: Approve does not stop at them)\n${bullets(offered, 500)}\n*\`/steward suggestions off\` stops these offers.*`,
    );
  // The note carries what a held step would send or how a tool changed: the person must see it whole, not a teaser.
  if (card.note) blocks.push(safeText(card.note, 1_200));
  return blocks.join('\n\n');
}

function bullets(items: string[], max: number): string {
  const each = Math.max(60, Math.floor(max / Math.max(1, items.length)) - 3);
  let out = '';
  for (const [i, item] of items.entries()) {
    const line = `• ${safeText(oneLine(item, each), each)}`;
    if (out.length + line.length + 1 > max) return `${out}\n… and ${items.length - i} more`;
    out = out ? `${out}\n${line}` : line;
  }
  return out;
}

/**
 * Text on one line (whitespace runs as one space) as far as `max` can show; the rest is kept as it is, so a cut
 * still counts it, without flattening a megabyte per step.
 */
function oneLine(text: string, max: number): string {
  const end = max * 4;
  return text.length > end ? text.slice(0, end).replace(/\s+/g, ' ') + text.slice(end) : text.replace(/\s+/g, ' ');
}

/** One line per step, shortened so all fit in `room`; when even short lines do not, the rest is counted. */
export function stepLines(live: LiveCard, room: number, shortened: () => void = () => undefined): string[] {
  const steps = live.card.steps;
  if (steps.length === 0) return ['*(no steps)*'];
  // Room for the note about steps left out; each line's cap shrinks with the plan's length.
  const budget = room - 40;
  const cap = Math.max(LINE_MIN, Math.min(LINE_MAX, Math.floor(budget / steps.length) - 1));
  const lines: string[] = [];
  let used = 0;
  for (const [i, step] of steps.entries()) {
    const line = stepLine(step, live, cap, shortened);
    if (used + line.length + 1 > budget) {
      shortened();
      lines.push(`*… and ${steps.length - i} more steps*`);
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return lines;
}

function stepLine(step: PlanCardStep, live: LiveCard, cap: number, shortened: () => void): string {
  const state = live.steps[step.id];
  const icon = STEP_ICONS[state?.status ?? 'pending'] ?? '⚪';
  const id = codeSpan(step.id, Math.min(40, cap / 4));
  let line = `${icon} **${step.number}.** ${id} ${codeSpan(step.target, Math.min(60, cap / 3))}`;
  // A server that connects per person: the step runs with this person's own account (never cut away).
  if (step.as) line += ` as ${personText(step.as)}`;
  else if (step.asWorkspace) line += ' as the workspace';
  const notes = stepNotes(step, live);
  if (notes.length > 0) line += ` *${safeText(notes.join(' · '), Math.floor(Math.min(80, cap / 5)))}*`;
  const room = cap - line.length;
  const argsRoom = room > 20 ? Math.floor(room * 0.5) : 0;
  if (step.argsPreview && argsRoom > 0) line += ` ${codeSpan(step.argsPreview, argsRoom)}`;
  if (step.argsPreview && step.argsPreview.length + 2 > argsRoom) shortened();
  const text =
    state?.detail && state.status !== 'pending' && state.status !== 'succeeded'
      ? `${state.status}: ${state.detail}`
      : step.description;
  const left = cap - line.length - 3;
  if (text && left > 15) line += ` — ${safeText(oneLine(text, left), left)}`;
  return line;
}

/** Who may decide, amendments left, elapsed time: plain text (Discord does not render markdown in a footer). */
function footnote(live: LiveCard, now: number, options: CardOptions): string {
  // A footer shows no mentions: the bot is named as people type it.
  const reply = options.mentionToReply
    ? `Reply in this thread, mentioning @${plainText(options.mentionToReply, 40)},`
    : 'Reply in this thread';
  const time = live.startedAt !== null ? ` · ⏱️ ${formatDuration((live.endedAt ?? now) - live.startedAt)}` : '';
  if (isFinished(live))
    return `${live.autoStarted ? 'This plan started without review.' : 'This run has ended.'}${time}`;
  const deciders = 'Only the requester or an approver can decide.';
  const left = live.card.amendmentsLeft;
  let words: string;
  if (isHeldMidRun(live)) {
    const stop = live.actions.includes('stop') ? ' Stop ends the run and keeps what finished.' : '';
    const later = live.actions.includes('amend') ? ` Amend changes the steps not yet run (${left} left).` : '';
    words = `${deciders} Approve lets the held steps run.${stop}${later}`;
  } else if (live.status === 'awaiting_review') {
    const amend = live.actions.includes('amend') ? `${left} amendment(s) left.` : left > 0 ? '' : 'No amendments left.';
    words = `${deciders}${amend ? ` ${amend}` : ''} You can also ${reply.charAt(0).toLowerCase()}${reply.slice(1)} to change the plan.`;
  } else if (live.autoStarted) {
    words = `${live.card.risk === 'low' ? 'Low risk: started' : 'Started'} at once, without review. ${reply} to ask how it is going or to change the remaining steps.`;
  } else {
    words = `${reply} to ask how it is going or to change the remaining steps.`;
  }
  return `${words}${time}`;
}

/**
 * The card's rows: decisions, then controls and the breakpoint select while the plan can change; once ended, only
 * "Save as workflow", and only when the run completed.
 */
function cardRows(live: LiveCard, shortened: boolean): MessageRow[] {
  const ref = { runId: live.card.runId, revision: live.card.revision };
  if (isFinished(live))
    return live.status === 'completed'
      ? buttonRows([button('wfsave', 'Save as workflow', ref, ButtonStyle.Primary)])
      : [];
  const rows = buttonRows(decisionButtons(live.actions, ref, live.card.amendmentsLeft));
  if (!isSteerable(live.status)) return rows;
  const controls = [button('edit', 'Edit plan', ref)];
  if (openSuggestions(live).length > 0) controls.push(button('suggested', 'Add suggested breakpoints', ref));
  controls.push(button('history', 'History', ref));
  if (shortened) controls.push(button('plan', 'Full plan', ref));
  if (live.autoStarted && live.status === 'running') controls.push(button('askfirst', 'Ask me first next time', ref));
  controls.push(button('help', 'Help', ref));
  rows.push(...buttonRows(controls));
  const picker = breakpointSelect(live, ref);
  if (picker) rows.push({ type: ComponentType.ActionRow, components: [picker] });
  return rows;
}

/**
 * Buttons for the decisions a card or a breakpoint offers, in the engine's order; edit and breakpoint have none.
 * Amend shows the amendments left when known (`null`: not shown).
 */
export function decisionButtons(
  actions: readonly DecisionAction[],
  ref: CardRef,
  amendmentsLeft: number | null,
): APIButtonComponentWithCustomId[] {
  const kinds = actions.filter((a): a is (typeof DECISION_KINDS)[number] =>
    (DECISION_KINDS as readonly string[]).includes(a),
  );
  return kinds.map((kind) => {
    const label =
      kind === 'amend' && amendmentsLeft !== null ? `Amend (${amendmentsLeft} left)` : DECISION_LABELS[kind];
    return button(kind, label, ref, STYLES[kind]);
  });
}

/** Buttons five to a row, Discord's limit. */
export function buttonRows(buttons: APIButtonComponentWithCustomId[]): MessageRow[] {
  const rows: MessageRow[] = [];
  for (let i = 0; i < buttons.length; i += 5)
    rows.push({ type: ComponentType.ActionRow, components: buttons.slice(i, i + 5) });
  return rows;
}

function button(
  kind: Parameters<typeof customId>[0],
  label: string,
  ref: CardRef,
  style: APIButtonComponentWithCustomId['style'] = ButtonStyle.Secondary,
): APIButtonComponentWithCustomId {
  return { type: ComponentType.Button, style, label, custom_id: customId(kind, ref) };
}

/**
 * "Pause after step…": a multi-select of the steps not yet started, those holding the run now pre-selected. At
 * most 25 options (the first 25, said in the placeholder); null when no step is left to pick.
 */
export function breakpointSelect(live: LiveCard, ref: CardRef): APIStringSelectComponent | null {
  // An option's value holds 100 characters; plan validation keeps step ids far shorter, so a longer one is skipped.
  const pending = live.card.steps.filter(
    (s) => (live.steps[s.id]?.status ?? 'pending') === 'pending' && s.id.length > 0 && s.id.length <= 100,
  );
  if (pending.length === 0) return null;
  const shown = pending.slice(0, OPTIONS_MAX);
  const held = new Set([...live.card.breakpoints, ...live.card.breakpointsBefore]);
  const placeholder =
    pending.length > OPTIONS_MAX
      ? `Pause after step… (the first ${OPTIONS_MAX} of ${pending.length} steps not yet run)`
      : 'Pause after step…';
  return {
    type: ComponentType.StringSelect,
    custom_id: customId('bp', ref),
    placeholder,
    min_values: 0,
    max_values: shown.length,
    // Option labels and descriptions are plain text to Discord: no markdown, no mentions.
    options: shown.map((s) => ({
      label: plainText(`${s.number}. ${s.id}`, 100),
      value: s.id,
      description: plainText(s.target || '(none)', 100),
      ...(held.has(s.id) ? { default: true } : {}),
    })),
  };
}
