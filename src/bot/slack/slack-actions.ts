/**
 * The ids Steward gives its Slack buttons, menus and modals, and the value each carries: the run and the
 * revision of the card it sits on (a button's value, the controls row's block id, a modal's private_metadata), so
 * a press on an old card is recognised by the engine as stale.
 */
import type { CardRef } from '../steering.ts';
import type { DecisionAction } from '../../engine/types.ts';

/** Prefix of every Steward action id; Bolt routes `/^steward\./` to the channel. */
export const ACTION_PREFIX = 'steward.';
/** Action id of "Ask me first next time" (sets the presser's review preference to `all`). */
export const ASK_FIRST_ACTION = 'steward.ask-first';
/** Callback id of the amendment modal. */
export const AMEND_VIEW = 'steward.amend';
/** Block and element ids of the amendment modal's text box. */
export const AMEND_INPUT = { block: 'amend', element: 'text' } as const;
/** Action id of "Edit plan" (opens the edit modal). */
export const EDIT_ACTION = 'steward.edit-plan';
/** Callback id of the edit modal. */
export const EDIT_VIEW = 'steward.edit';
/** Block and element ids of the edit modal's JSON box. */
export const EDIT_INPUT = { block: 'plan', element: 'json' } as const;
/** Action id of the breakpoint picker; each option's value is a step id. */
export const BREAKPOINTS_ACTION = 'steward.breakpoints';
/** Action id of "Add suggested breakpoints" (the engine sets the breakpoints the card offers). */
export const SUGGESTIONS_ACTION = 'steward.take-suggestions';
/** Action id of the card's overflow menu; each option's value is a `MenuChoice`. */
export const MORE_ACTION = 'steward.more';
/** Action id of the review-preference controls; each option's (or button's) value is a preference. */
export const REVIEW_ACTION = 'steward.review';
/** Action id of the review-preference menu on the App Home tab (the option's value is a preference). */
export const HOME_REVIEW_ACTION = 'steward.home-review';

/** Action id of "Save as workflow" on the card of a completed run (opens the save modal). */
export const SAVE_WORKFLOW_ACTION = 'steward.save-workflow';
/** Callback id of the save-as-workflow modal. */
export const SAVE_WORKFLOW_VIEW = 'steward.save-workflow';
/** Block and element ids of the save modal's name box and its "approve every fire" checkbox. */
export const SAVE_WORKFLOW_INPUTS = {
  name: { block: 'workflow-name', element: 'name' },
  everyFire: { block: 'workflow-review', element: 'every-fire' },
} as const;

/** What the card's overflow menu offers. */
export type MenuChoice = 'history' | 'plan' | 'help';

const CONTROLS_BLOCK = 'steward.controls ';

const DECISIONS: readonly DecisionAction[] = [
  'approve',
  'amend',
  'cancel',
  'pause',
  'resume',
  'stop',
  'raise',
  'widen',
];

/** The run and revision a button or modal belongs to. */
export type { CardRef } from '../steering.ts';

/** The action id of a decision button. */
export function decisionActionId(action: DecisionAction): string {
  return `${ACTION_PREFIX}${action}`;
}

/**
 * The action id of a decision button that shares its message with others of the same decision (a run picker's
 * Stop per run): Slack refuses a message whose action ids repeat, so each carries its place after a colon.
 */
export function listedDecisionActionId(action: DecisionAction, index: number): string {
  return `${decisionActionId(action)}:${index}`;
}

/** The decision named by an action id (a listed one's too), or null for anything else (e.g. "ask me first"). */
export function decisionFromActionId(actionId: string): DecisionAction | null {
  const name = actionId.startsWith(ACTION_PREFIX) ? actionId.slice(ACTION_PREFIX.length).replace(/:\d+$/, '') : '';
  return DECISIONS.find((d) => d === name) ?? null;
}

/** The value a button (or the modal's private_metadata) carries. */
export function encodeCardRef(ref: CardRef): string {
  return JSON.stringify({ runId: ref.runId, revision: ref.revision });
}

/** Reads a button value back; null when it is not one of ours (never throws on foreign input). */
export function decodeCardRef(value: string | undefined): CardRef | null {
  if (!value) return null;
  try {
    const parsed = JSON.parse(value) as unknown;
    if (!parsed || typeof parsed !== 'object') return null;
    const { runId, revision } = parsed as Record<string, unknown>;
    if (typeof runId !== 'string' || !runId || typeof revision !== 'number' || !Number.isInteger(revision)) return null;
    return { runId, revision };
  } catch {
    return null;
  }
}

/** The block id of a card's controls row: it carries the card's run and revision for the menus in it. */
export function controlsBlockId(ref: CardRef): string {
  return `${CONTROLS_BLOCK}${encodeCardRef(ref)}`;
}

/** The run and revision a controls row's block id carries; null for any other block id. */
export function refOfBlockId(blockId: string | undefined): CardRef | null {
  return blockId?.startsWith(CONTROLS_BLOCK) ? decodeCardRef(blockId.slice(CONTROLS_BLOCK.length)) : null;
}
