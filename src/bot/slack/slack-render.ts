/**
 * Renders a run's live card as Block Kit (pure). Whatever the plan's size, the card stays inside Slack's limits:
 * at most 16 blocks, sections under 3,000 characters, about 11,000 characters in all; long plans are shortened
 * with a note, never rejected.
 */
import type { types } from '@slack/bolt';
import type { PlanCardStep } from '../../engine/messages.ts';
import { cardWarnings, estimateText, spendText } from '../card-estimate.ts';
import { planButtons } from './slack-buttons.ts';
import { formatDuration, HELD_HEADING, RUN_HEADINGS, STEP_ICONS } from '../card-words.ts';
import { isFinished, isHeldMidRun, openSuggestions, stepNotes, type LiveCard } from '../live-card-state.ts';
import { fitsPlanBlock, planBlock } from './slack-plan-block.ts';
import { cardControls, textLength } from './slack-controls.ts';
import { codeSpan, cutText, mentionUser, safeMrkdwn } from './slack-text.ts';
import { shortRunId } from '../../engine/text.ts';

/** A message body for chat.postMessage / chat.update. */
export interface SlackMessage {
  text: string;
  blocks: types.KnownBlock[];
  /** What the message is to Steward, kept with it by Slack (a report says whose run it reports). */
  metadata?: types.MessageMetadata;
}

/** Character budget of all step lines together, when the rest of the card leaves room for it. */
export const STEPS_BUDGET = 7_000;
/** Text a card carries before its controls row (Slack refuses roughly 12,000 in all: `msg_blocks_too_long`). */
const CARD_TEXT_TARGET = 11_300;
const SECTION_MAX = 2_900;
const LINE_MAX = 600;
/** Under the steps of a card that had to cut some of them: where each step can be read whole. */
export const SHORTENED_NOTE =
  '✂️ Some steps are shortened to fit this card. *⋯ › Full plan* shows every step with its arguments, only to you.';
const LINE_MIN = 90;

/**
 * The card for a run as it is now; `now` (epoch ms) only feeds the elapsed time. With `planBlocks`, steps show as
 * Slack's native plan block when the plan fits one; otherwise as sections of step lines.
 */
export function renderCard(live: LiveCard, now: number, options: { planBlocks?: boolean } = {}): SlackMessage {
  const { card } = live;
  const heading = isHeldMidRun(live) ? HELD_HEADING : RUN_HEADINGS[live.status];
  const title = `${heading} · revision ${card.revision}`;
  const head: types.KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: cutText(title, 150), emoji: true } },
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        // An Assistant's name is a slug (letters, digits, - and _), safe in mrkdwn as it is; so is a run id.
        text: `${card.assistant ? `Assistant *${card.assistant}*${card.delegatedBy ? ` (a step of run \`${shortRunId(card.delegatedBy)}\`)` : ''} · ` : ''}${safeMrkdwn(card.summary || '(no summary)', 800)}`,
        verbatim: true,
      },
    },
    { type: 'context', elements: [{ type: 'mrkdwn', text: statusLine(live, now) }] },
    { type: 'divider' },
  ];
  const tail = cardTail(live);
  // The steps get what the rest leaves of the card's budget (their full share unless notes and risks are long).
  const stepsBudget = Math.max(500, Math.min(STEPS_BUDGET, CARD_TEXT_TARGET - textLength([...head, ...tail])));
  // Cut anywhere (an argument preview, a line, steps left out): the card says where the whole plan is.
  let shortened = live.card.steps.some((s) => s.argsPreview.endsWith('…'));
  const cut = () => void (shortened = true);
  const steps: types.KnownBlock[] =
    options.planBlocks && fitsPlanBlock(live)
      ? [planBlock(live, stepsBudget - 200, cut)]
      : stepSections(live, stepsBudget - 100, cut).map((text) => ({
          type: 'section',
          text: { type: 'mrkdwn', text, verbatim: true },
        }));
  if (shortened) steps.push({ type: 'context', elements: [{ type: 'mrkdwn', text: SHORTENED_NOTE }] });
  const blocks = [...head, ...steps, ...tail];
  blocks.push(cardControls(live, textLength(blocks)));
  return { text: safeMrkdwn(`${heading}: ${card.summary}`, 300), blocks };
}

/** What follows the steps: layers, risks, warnings, the note, the footer and the decision buttons. */
function cardTail(live: LiveCard): types.KnownBlock[] {
  const { card } = live;
  const blocks: types.KnownBlock[] = [];
  const layers = card.layers.map((l, i) => `${i + 1}: ${l.join(', ')}`).join('  |  ');
  if (layers)
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `Layers ${safeMrkdwn(layers, 500)}`, verbatim: true }],
    });
  const estimate = estimateText(live);
  if (estimate)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: safeMrkdwn(estimate, 300), verbatim: true }] });
  const spend = spendText(live);
  if (spend)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: safeMrkdwn(spend, 500), verbatim: true }] });
  if (card.risks.length > 0) blocks.push(bullets('*Risks*', card.risks));
  const warnings = cardWarnings(live);
  if (warnings.length > 0) blocks.push(bullets('⚠️ *Before you approve*', warnings));
  const offered = openSuggestions(live);
  if (offered.length > 0)
    blocks.push(
      bullets(
        '*Suggested breakpoints* (not set: Approve does not stop at them)',
        offered.map((b) => `before ${b.stepId}: ${b.why}`),
        // Named where the offer is, so a person who finds them noise knows how to stop them.
        '_`/steward suggestions off` stops these offers._',
      ),
    );
  // The note carries what a held step would send or how a tool changed: the person must see it whole, not a teaser.
  if (card.note)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: safeMrkdwn(card.note, 2_500), verbatim: true } });
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: footnote(live) }] });
  const buttons = planButtons(live);
  if (buttons.length > 0)
    blocks.push({ type: 'actions', block_id: `steward.card.${card.revision}`, elements: buttons });
  return blocks;
}

function bullets(title: string, items: string[], after?: string): types.KnownBlock {
  return {
    type: 'section',
    text: {
      type: 'mrkdwn',
      text: `${title}\n${safeMrkdwn(items.map((r) => `• ${r}`).join('\n'), 800)}${after ? `\n${after}` : ''}`,
      verbatim: true,
    },
  };
}

function statusLine(live: LiveCard, now: number): string {
  const parts = [`Risk *${live.card.risk.toUpperCase()}*`, `Requested by ${mentionUser(live.card.requester.id)}`];
  if ((live.status !== 'awaiting_review' && live.status !== 'planning') || isHeldMidRun(live))
    parts.push(`Step ${live.finished}/${live.total}`);
  if (live.startedAt !== null) parts.push(`⏱️ ${formatDuration((live.endedAt ?? now) - live.startedAt)}`);
  const counts = countByStatus(live);
  if (counts) parts.push(counts);
  return parts.join(' · ');
}

function countByStatus(live: LiveCard): string {
  const counts = new Map<string, number>();
  for (const s of Object.values(live.steps))
    if (s.status !== 'pending') counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${STEP_ICONS[status] ?? '?'} ${n}`).join(' ');
}

function footnote(live: LiveCard): string {
  if (isFinished(live)) return live.autoStarted ? 'This plan started without review.' : 'This run has ended.';
  const deciders = `Only ${mentionUser(live.card.requester.id)} or an approver can decide.`;
  const left = live.card.amendmentsLeft;
  if (isHeldMidRun(live)) {
    const stop = live.actions.includes('stop') ? ' Stop ends the run and keeps what finished.' : '';
    const later = live.actions.includes('amend') ? ` Amend changes the steps not yet run (${left} left).` : '';
    return `${deciders} Approve lets the held steps run.${stop}${later}`;
  }
  if (live.status === 'awaiting_review') {
    const amend = live.actions.includes('amend') ? `${left} amendment(s) left.` : left > 0 ? '' : 'No amendments left.';
    return `${deciders}${amend ? ` ${amend}` : ''} You can also reply in this thread.`;
  }
  if (live.autoStarted)
    return `${live.card.risk === 'low' ? 'Low risk: started' : 'Started'} at once, without review. Reply in this thread to ask how it is going or to change the remaining steps.`;
  return 'Reply in this thread to ask how it is going or to change the remaining steps.';
}

/** Step lines packed into sections; shortened (then counted in a note) so the whole stays within budget. */
export function stepSections(live: LiveCard, budget = STEPS_BUDGET, shortened: () => void = () => undefined): string[] {
  const steps = live.card.steps;
  // Room for the note about steps left out, and a few characters of slack per line (icons, separators).
  const cap = Math.max(LINE_MIN, Math.min(LINE_MAX, Math.floor((budget - 100) / Math.max(1, steps.length)) - 4));
  const lines: string[] = [];
  let used = 0;
  for (const [i, step] of steps.entries()) {
    const line = stepLine(step, live, cap, shortened);
    if (used + line.length + 1 > budget - 100) {
      shortened();
      lines.push(`_…and ${steps.length - i} more step(s), not shown to keep this card within Slack's limits._`);
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  const sections: string[] = [];
  let current = '';
  for (const line of lines) {
    if (current && current.length + 1 + line.length > SECTION_MAX) {
      sections.push(current);
      current = '';
    }
    current = current ? `${current}\n${line}` : line;
  }
  if (current) sections.push(current);
  return sections.length > 0 ? sections : ['_(no steps)_'];
}

function stepLine(step: PlanCardStep, live: LiveCard, cap: number, shortened: () => void): string {
  const state = live.steps[step.id];
  const icon = STEP_ICONS[state?.status ?? 'pending'] ?? '⚪';
  // The fixed head shrinks with the per-line cap, so a 60-step plan still shows every step.
  let line = `${icon} *${step.number}.* ${codeSpan(step.id, Math.min(40, cap / 4))} ${codeSpan(step.target, Math.min(60, cap / 3))}`;
  // A server that connects per person: the step runs with this person's own account (never cut away).
  if (step.as) line += ` as ${mentionUser(step.as.id)}`;
  else if (step.asWorkspace) line += ' as the workspace';
  const extras = stepNotes(step, live);
  if (extras.length > 0) line += ` _${safeMrkdwn(extras.join(' · '), Math.floor(Math.min(80, cap / 5)))}_`;
  const room = cap - line.length;
  const argsRoom = room > 20 ? Math.floor(room * 0.5) : 0;
  if (step.argsPreview && argsRoom > 0) line += ` ${codeSpan(step.argsPreview, argsRoom)}`;
  if (step.argsPreview && step.argsPreview.length + 2 > argsRoom) shortened();
  const text =
    state?.detail && state.status !== 'pending' && state.status !== 'succeeded'
      ? `${state.status}: ${state.detail}`
      : step.description;
  const left = cap - line.length - 3;
  if (text && left > 15) line += ` — ${safeMrkdwn(text.replace(/\s+/g, ' '), left)}`;
  return line;
}
