/**
 * The live card's steps as Slack's native `plan` block of `task_card`s (pure rendering), and the process-wide
 * switch that falls back to the section list once a workspace refuses plan blocks.
 */
import type { types } from '@slack/bolt';
import type { PlanCardStep } from '../../engine/messages.ts';
import type { StepStatus } from '../../engine/types.ts';
import { stepNotes, type LiveCard } from '../live-card-state.ts';
import { cutText } from './slack-text.ts';

/** Most task cards one plan block holds (SDK docs; Slack's reference names none); a bigger plan gets step lines. */
export const PLAN_MAX_TASKS = 50;
/** Longest details / output text we send: 256 characters, as documented for a task's details and output in updates. */
export const TASK_TEXT_MAX = 256;
const TITLE_MAX = 150;
/** Characters all task text may take together, as the step lines' budget: the card stays within Slack's total. */
const PLAN_TEXT_BUDGET = 6_900;

type TaskStatus = types.TaskCardBlock['status'];

const STATUS: Record<StepStatus, TaskStatus> = {
  pending: 'pending',
  running: 'in_progress',
  succeeded: 'complete',
  failed: 'error',
  skipped: 'complete',
  // A stopped run's step never finished: nothing went wrong with it, it is simply not done.
  cancelled: 'pending',
};

/** Whether a card's steps fit one plan block. */
export function fitsPlanBlock(live: LiveCard): boolean {
  return live.card.steps.length > 0 && live.card.steps.length <= PLAN_MAX_TASKS;
}

/**
 * The steps of a card as one plan block (call only when `fitsPlanBlock`), its task text within `budget`;
 * `shortened` is called when a step's title or details had to be cut to fit.
 */
export function planBlock(
  live: LiveCard,
  budget = PLAN_TEXT_BUDGET,
  shortened: () => void = () => undefined,
): types.PlanBlock {
  return {
    type: 'plan',
    // A new block_id per revision, as Slack asks of updated messages.
    block_id: `steward.plan.${live.card.revision}`,
    title: cutText(`Steps (${live.finished}/${live.total} done)`, TITLE_MAX),
    tasks: live.card.steps.map((step) => taskCard(step, live, Math.min(budget, PLAN_TEXT_BUDGET), shortened)),
  };
}

function taskCard(step: PlanCardStep, live: LiveCard, budget: number, shortened: () => void): types.TaskCardBlock {
  const state = live.steps[step.id];
  const status = state?.status ?? 'pending';
  // Each task's share of the budget: a short plan gets Slack's full lengths, a 50-step one shorter texts.
  const share = Math.floor(budget / live.card.steps.length);
  const title = `${step.number}. ${oneLine(step.description) || step.target}`;
  const output = outputText(status, state?.detail ?? '');
  const details = detailsText(step, live);
  if (title.length > Math.min(TITLE_MAX, share / 4) || details.length > Math.min(TASK_TEXT_MAX, share / 2)) shortened();
  return {
    type: 'task_card',
    task_id: step.id,
    title: cutText(title, Math.min(TITLE_MAX, share / 4)),
    status: STATUS[status],
    details: richText(details, Math.min(TASK_TEXT_MAX, share / 2)),
    ...(output ? { output: richText(output, Math.min(TASK_TEXT_MAX, share / 4)) } : {}),
  };
}

/** The tool and its short arguments, plus what a reviewer should know (order, risk, breakpoints). */
function detailsText(step: PlanCardStep, live: LiveCard): string {
  const extras = stepNotes(step, live);
  // A server that connects per person: the step runs with this person's own account. Task texts are plain (no
  // mentions), and an event's actor has no name: the card's context names the requester with a mention.
  const as = step.as ? `as ${step.as.name ?? 'the requester'}` : step.asWorkspace ? 'as the workspace' : '';
  const head = [step.target, as, oneLine(step.argsPreview)].filter(Boolean).join(' ');
  return [head, extras.join(' · ')].filter(Boolean).join(' — ');
}

function outputText(status: StepStatus, detail: string): string {
  const text = oneLine(detail);
  if (status === 'skipped' || status === 'cancelled') return text ? `${status}: ${text}` : status;
  return status === 'pending' ? '' : text;
}

/**
 * One rich_text section of plain text elements: Slack does not parse mentions or links in them, so a step's
 * arguments cannot ping anyone.
 */
function richText(text: string, max: number): types.RichTextBlock {
  return {
    type: 'rich_text',
    elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: cutText(text || '—', max) }] }],
  };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Whether Slack refused a message because of its blocks (what a workspace without plan blocks answers). */
export function isBlocksRefusal(err: unknown): boolean {
  const code = (err as { data?: { error?: unknown } } | null)?.data?.error;
  return code === 'invalid_blocks' || code === 'invalid_blocks_format' || code === 'invalid_arguments';
}

type Rendered = { blocks: readonly { type: string }[] };

/** Whether a message carries a plan block. */
export function holdsPlanBlock(message: Rendered): boolean {
  return message.blocks.some((b) => b.type === 'plan');
}

/**
 * Whether cards use plan blocks: on unless configured off, and off for the rest of the process once Slack
 * refuses a card that holds one (logged once).
 */
export class PlanBlockSwitch {
  private on: boolean;

  constructor(
    enabled: boolean,
    private readonly log: (message: string) => void,
  ) {
    this.on = enabled;
  }

  /** Cards should be rendered with a plan block now. */
  get enabled(): boolean {
    return this.on;
  }

  /** After `message` failed with `err`: true when Slack refused its plan block (plan blocks are now off). */
  refusedPlan(err: unknown, message: Rendered | null): boolean {
    if (!message || !holdsPlanBlock(message) || !isBlocksRefusal(err)) return false;
    if (this.on) this.log(`slack: this workspace refused a plan block (${describe(err)}); cards show step lists`);
    this.on = false;
    return true;
  }
}

function describe(err: unknown): string {
  const code = (err as { data?: { error?: unknown } }).data?.error;
  return typeof code === 'string' ? code : 'refused';
}
