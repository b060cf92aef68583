/**
 * Steward's App Home tab as Block Kit (pure): the person's recent runs with their status and a link to each, their
 * review preference with a menu to change it, and their workflows with their schedules. What people, models and
 * tools wrote is shown as plain text (no mention, link or formatting can come of it); the view stays inside Slack's
 * limits for a Home tab (100 blocks, 3,000 characters a text), cut with a note.
 */
import type { types } from '@slack/bolt';
import type { RunListing, WorkflowOverview } from '../../engine/channel.ts';
import type { ReviewPreference } from '../../engine/types.ts';
import type { FireReview } from '../../engine/workflows.ts';
import { RUN_ICONS } from '../card-words.ts';
import { HOME_REVIEW_ACTION } from './slack-actions.ts';
import { codeSpan, cutText, safeMrkdwn } from './slack-text.ts';
import { shortRunId } from '../../engine/text.ts';

/** The callback id of the Home view. */
export const HOME_VIEW = 'steward.home';
/** Slack's most blocks in a Home tab: the caps below keep a view under half of it (5 + 2 a run + 1 a workflow). */
export const HOME_BLOCKS_MAX = 100;
/** Runs and workflows shown at most; the rest are counted in a note. */
const RUNS_SHOWN = 10;
const WORKFLOWS_SHOWN = 20;
const SCHEDULES_SHOWN = 5;
const REQUEST_MAX = 300;

/** A Home view for views.publish, its blocks known to the renderer's tests. */
export interface HomeView extends types.HomeView {
  blocks: types.KnownBlock[];
}

/** What a Home view links to: the dashboard's run pages when one is configured, else each run's thread if known. */
export interface HomeOptions {
  /** The dashboard's public base URL (`https://steward.example.com`); a run links to `<url>/runs/<id>`. */
  dashboardUrl?: string;
  /** Links to runs' threads, by run id (used without a dashboard). */
  threadLinks?: ReadonlyMap<string, string>;
}

/** The labels of the review menu's options (Slack allows 75 characters). */
export const PREFERENCE_LABELS: Readonly<Record<ReviewPreference, string>> = {
  all: 'Every plan waits for me',
  risky: 'Medium and high risk wait (default)',
  none: 'Only high risk waits',
};

const FIRE_REVIEW: Record<FireReview, string> = {
  saved: 'fires run on the approval given at save',
  every_fire: 'every fire waits for approval',
};

/** The Home view for one person. `workflows` null: workflows are not set up, and the section is left out. */
export function renderHome(
  runs: readonly RunListing[],
  preference: ReviewPreference,
  workflows: readonly WorkflowOverview[] | null,
  options: HomeOptions = {},
): HomeView {
  const blocks: types.KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: 'Steward', emoji: true } },
    reviewBlock(preference),
    { type: 'divider' },
    { type: 'header', text: { type: 'plain_text', text: 'Your recent runs', emoji: true } },
    ...runBlocks(runs, options),
  ];
  if (workflows) {
    blocks.push({ type: 'divider' }, { type: 'header', text: { type: 'plain_text', text: 'Your workflows' } });
    blocks.push(...workflowBlocks(workflows));
  }
  return { type: 'home', callback_id: HOME_VIEW, blocks };
}

function reviewBlock(preference: ReviewPreference): types.SectionBlock {
  const options = (['all', 'risky', 'none'] as const).map((p) => ({
    text: { type: 'plain_text' as const, text: PREFERENCE_LABELS[p] },
    value: p,
  }));
  return {
    type: 'section',
    text: {
      type: 'mrkdwn',
      text: '*Which of your plans wait for your review?* High-risk plans always wait.',
    },
    accessory: {
      type: 'static_select',
      action_id: HOME_REVIEW_ACTION,
      placeholder: { type: 'plain_text', text: 'Choose' },
      options,
      initial_option: options.find((o) => o.value === preference),
    },
  };
}

function runBlocks(runs: readonly RunListing[], options: HomeOptions): types.KnownBlock[] {
  if (runs.length === 0)
    return [section('You have no runs yet. Mention @Steward in a channel, or send me a direct message.')];
  const blocks = runs.slice(0, RUNS_SHOWN).flatMap((run): types.KnownBlock[] => [
    // Plain text: a request's `<!channel>`, `*bold*` or `<https://…|link>` shows as typed and does nothing.
    { type: 'section', text: { type: 'plain_text', text: cutText(oneLine(run.request), REQUEST_MAX), emoji: false } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: runLine(run, options), verbatim: true }] },
  ]);
  if (runs.length > RUNS_SHOWN) blocks.push(note(`…and ${runs.length - RUNS_SHOWN} more; /steward runs lists them.`));
  return blocks;
}

/** Status, start time and the link: the dashboard's run page, else the thread, else the run's id. */
function runLine(run: RunListing, options: HomeOptions): string {
  const head = `${RUN_ICONS[run.status]} *${safeMrkdwn(run.statusText, 60)}* · ${timeText(run.createdAt)}`;
  const base = options.dashboardUrl?.replace(/\/+$/, '');
  if (base) return `${head} · <${linkTarget(`${base}/runs/${encodeURIComponent(run.id)}`)}|Open on the dashboard>`;
  const thread = options.threadLinks?.get(run.id);
  const id = `run ${codeSpan(shortRunId(run.id), 60)}`;
  return thread ? `${head} · <${linkTarget(thread)}|Open the thread> · ${id}` : `${head} · ${id}`;
}

function workflowBlocks(workflows: readonly WorkflowOverview[]): types.KnownBlock[] {
  if (workflows.length === 0)
    return [section('No workflows yet. After a run completes, save its plan with its "Save as workflow" button.')];
  const blocks = workflows.slice(0, WORKFLOWS_SHOWN).map((w): types.KnownBlock => {
    const lines = [`*${safeMrkdwn(w.name, 100)}* · version ${w.version} · ${FIRE_REVIEW[w.review]}`];
    for (const s of w.schedules.slice(0, SCHEDULES_SHOWN)) {
      const next = s.paused ? 'paused' : s.nextFireAt ? `next ${timeText(s.nextFireAt)}` : 'no fire times ahead';
      lines.push(`• ${codeSpan(s.cron, 100)} in ${safeMrkdwn(s.timeZone, 64)}, ${next}`);
    }
    if (w.schedules.length > SCHEDULES_SHOWN) lines.push(`• …and ${w.schedules.length - SCHEDULES_SHOWN} more`);
    if (w.schedules.length === 0) lines.push('• no schedule');
    return { type: 'section', text: { type: 'mrkdwn', text: cutText(lines.join('\n'), 2_900), verbatim: true } };
  });
  if (workflows.length > WORKFLOWS_SHOWN)
    blocks.push(note(`…and ${workflows.length - WORKFLOWS_SHOWN} more; /steward workflows lists them all.`));
  return blocks;
}

/** A URL inside `<…|…>`: Slack's three escapes, and no `|` (it would end the URL early). */
function linkTarget(url: string): string {
  return url.replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
}

function section(text: string): types.SectionBlock {
  return { type: 'section', text: { type: 'mrkdwn', text } };
}

function note(text: string): types.ContextBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text }] };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim() || '(no request text)';
}

/** A time in UTC, to the minute (as `/steward runs` shows it). */
function timeText(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
