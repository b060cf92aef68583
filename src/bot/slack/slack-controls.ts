/**
 * The card's steering controls beyond the decision buttons (pure): "Edit plan", "Add suggested breakpoints", the
 * breakpoint picker and the overflow menu (history, help), in one actions row whose block id carries the card's run and revision. Also the
 * private help and the review-preference messages those controls answer with.
 */
import type { types } from '@slack/bolt';
import { isSteerable, type ReviewPreference } from '../../engine/types.ts';
import {
  BREAKPOINTS_ACTION,
  controlsBlockId,
  EDIT_ACTION,
  encodeCardRef,
  MORE_ACTION,
  REVIEW_ACTION,
  SUGGESTIONS_ACTION,
  type MenuChoice,
} from './slack-actions.ts';
import { openSuggestions, type LiveCard } from '../live-card-state.ts';
import type { SlackMessage } from './slack-render.ts';
import { cutText } from './slack-text.ts';

/** Characters all the picker's option labels take together at most (twice when all are picked). */
export const PICKER_TEXT_BUDGET = 1_200;
/** Characters of text a card may carry in all (Slack refuses roughly 12,000, `msg_blocks_too_long`). */
const CARD_TEXT_MAX = 11_500;
/** Slack's limits for an option's label and a select's options. */
const OPTION_TEXT_MAX = 75;
const OPTIONS_MAX = 100;

const PREFERENCE_WORDS: Record<ReviewPreference, string> = {
  all: 'every plan',
  risky: 'medium- and high-risk plans (low-risk plans start at once)',
  none: 'only high-risk plans',
};

/**
 * The controls row for a card as it is now; Edit and the picker only while the plan can still change. `textSoFar`
 * is the text the rest of the card carries: the picker's labels get what is left (none left: no picker).
 */
export function cardControls(live: LiveCard, textSoFar = 0): types.ActionsBlock {
  const ref = { runId: live.card.runId, revision: live.card.revision };
  const elements: types.ActionsBlockElement[] = [];
  if (isSteerable(live.status)) {
    elements.push({
      type: 'button',
      action_id: EDIT_ACTION,
      text: { type: 'plain_text', text: 'Edit plan' },
      value: encodeCardRef(ref),
    });
    if (openSuggestions(live).length > 0)
      elements.push({
        type: 'button',
        action_id: SUGGESTIONS_ACTION,
        text: { type: 'plain_text', text: 'Add suggested breakpoints' },
        value: encodeCardRef(ref),
      });
    const picker = breakpointPicker(live, Math.floor((CARD_TEXT_MAX - textSoFar) / 2));
    if (picker) elements.push(picker);
  }
  elements.push({
    type: 'overflow',
    action_id: MORE_ACTION,
    options: [
      option('Show history (only to you)', 'history' satisfies MenuChoice),
      option('Full plan (only to you)', 'plan' satisfies MenuChoice),
      option('Help', 'help' satisfies MenuChoice),
    ],
  });
  return { type: 'actions', block_id: controlsBlockId(ref), elements };
}

/**
 * A multi-select of the steps not yet run; those holding the run now are selected. Its labels take at most `room`
 * characters. Null when no step is left, or no room even for numbered labels.
 */
export function breakpointPicker(live: LiveCard, room = PICKER_TEXT_BUDGET): types.MultiStaticSelect | null {
  // Plan validation keeps step ids to 40 characters; an option's value holds 150, so a longer id is never offered.
  const pending = live.card.steps.filter(
    (s) => (live.steps[s.id]?.status ?? 'pending') === 'pending' && s.id.length <= OPTION_VALUE_MAX,
  );
  const shown = pending.slice(0, OPTIONS_MAX);
  const budget = Math.min(PICKER_TEXT_BUDGET, room - 100);
  if (shown.length === 0 || budget < 4 * shown.length) return null;
  const labelMax = Math.min(OPTION_TEXT_MAX, Math.floor(budget / shown.length));
  // Too many steps for a readable id in each label: the step's number alone, as the card's step lines show it.
  const options = shown.map((s) =>
    labelMax >= 10 ? option(`${s.number}. ${s.id}`, s.id, labelMax) : option(`#${s.number}`, s.id),
  );
  const held = new Set([...live.card.breakpoints, ...live.card.breakpointsBefore]);
  const initial = options.filter((o) => held.has(o.value ?? ''));
  return {
    type: 'multi_static_select',
    action_id: BREAKPOINTS_ACTION,
    placeholder: { type: 'plain_text', text: 'Hold after steps…' },
    options,
    ...(initial.length > 0 ? { initial_options: initial } : {}),
  };
}

const HELP = [
  '*Steering a run from its card*',
  '• *Approve / Amend / Cancel* while a plan waits; *Pause / Resume / Stop* while it runs. Cancel and Stop ask first.',
  '• *Edit plan* opens the whole plan as JSON (a long plan: a box per step not yet run): change the steps not yet run, add or remove steps, and save. Mistakes are shown in the form, and nothing changes until the plan is valid.',
  '• *Hold after steps…* picks the steps the run pauses after, so you see their output before it goes on; unpick a step to drop its hold. Steps already run are not offered.',
  '• *Add suggested breakpoints* holds the run before the steps the card suggests (their tool you stopped, paused or edited lately); Approve alone never stops there.',
  '• *⋯ → Show history* lists the revisions and every decision (who, what, when), only to you.',
  '• Reply in the thread to ask how it is going, or to change the steps not yet run.',
  '• *Save as workflow*, once a run completed, saves its approved plan to run again or on a schedule (`/steward help` lists the workflow commands).',
  'Only the requester or an approver can decide; anyone can read the history.',
].join('\n');

/** The private help, with a menu to choose how much you review. */
export function renderHelp(): SlackMessage {
  return {
    text: 'Steering a run from its card',
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: HELP } }, reviewPicker()],
  };
}

/** The private confirmation of a new review preference; after "ask me first", a button undoes it. */
export function renderPreferenceSet(preference: ReviewPreference): SlackMessage {
  const text =
    preference === 'all'
      ? 'Noted: from now on I will show you every plan and wait for your approval before running it.'
      : `Noted: from now on I wait for your approval on ${PREFERENCE_WORDS[preference]}. High-risk plans always wait.`;
  const blocks: types.KnownBlock[] = [{ type: 'section', text: { type: 'mrkdwn', text } }];
  if (preference === 'all')
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          action_id: REVIEW_ACTION,
          text: { type: 'plain_text', text: 'Let low-risk plans start at once' },
          value: 'risky' satisfies ReviewPreference,
        },
      ],
    });
  else blocks.push(reviewPicker());
  return { text, blocks };
}

/** The preference a control's value names, or null for anything else. */
export function toPreference(value: string | undefined): ReviewPreference | null {
  return value === 'all' || value === 'risky' || value === 'none' ? value : null;
}

function reviewPicker(): types.SectionBlock {
  return {
    type: 'section',
    text: { type: 'mrkdwn', text: '*How much do you review?* High-risk plans always wait for you.' },
    accessory: {
      type: 'static_select',
      action_id: REVIEW_ACTION,
      placeholder: { type: 'plain_text', text: 'Choose' },
      options: (['all', 'risky', 'none'] as const).map((p) => option(`Review ${PREFERENCE_WORDS[p]}`, p)),
    },
  };
}

const OPTION_VALUE_MAX = 150;

function option(text: string, value: string, max = OPTION_TEXT_MAX): types.PlainTextOption {
  return { text: { type: 'plain_text', text: cutText(text, max) }, value };
}

/** A short private answer in Steward's own words (not escaped, so its *bold* shows). */
export function privateText(text: string): SlackMessage {
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: cutText(text, 2_900) } }] };
}

/** Characters of text in blocks, counted as Slack counts them against a message's total (every `text` string). */
export function textLength(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + textLength(v), 0);
  if (!value || typeof value !== 'object') return 0;
  return Object.entries(value as Record<string, unknown>).reduce(
    (n, [k, v]) => n + (k === 'text' && typeof v === 'string' ? v.length : textLength(v)),
    0,
  );
}
