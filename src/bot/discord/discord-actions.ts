/**
 * The custom ids Steward gives its Discord buttons, select menus and modals (pure). Each names what it does and the
 * run and revision of the card it sits on, `stw:<kind>:<runId>:<revision>`, so a press on an old card reaches the
 * engine as stale, and anything that is not ours parses to null.
 */
import type { DecisionAction } from '../../engine/types.ts';

/** The decisions a card's buttons carry (edit and breakpoint have their own controls). */
export const DECISION_KINDS = ['approve', 'amend', 'cancel', 'pause', 'resume', 'stop', 'raise', 'widen'] as const;
/**
 * The card's controls: Edit plan, the breakpoint select, "Add suggested breakpoints", History, Full plan, "Ask me
 * first next time", Help, Save as workflow.
 */
export const CONTROL_KINDS = ['edit', 'bp', 'suggested', 'history', 'plan', 'askfirst', 'help', 'wfsave'] as const;
/**
 * The answers on the private question a Stop or Cancel press opens (Discord has no confirm dialog): the decision
 * itself, or leave the run as it is.
 */
export const CONFIRM_KINDS = ['stop-yes', 'cancel-yes', 'keep'] as const;
/**
 * The modals: amend (words), edit (the whole plan as JSON), edit-steps (one box per step not yet run), and the name
 * of a workflow to save.
 */
export const MODAL_KINDS = ['amend-modal', 'edit-modal', 'steps-modal', 'wfsave-modal'] as const;

/** What a custom id does. */
export type CustomIdKind =
  | (typeof DECISION_KINDS)[number]
  | (typeof CONTROL_KINDS)[number]
  | (typeof CONFIRM_KINDS)[number]
  | (typeof MODAL_KINDS)[number];

/** The run and revision a component or modal belongs to. */
export interface CardRef {
  runId: string;
  revision: number;
}

/** A custom id read back. */
export interface ParsedCustomId extends CardRef {
  kind: CustomIdKind;
}

/** Custom id of the amendment modal's text input. */
export const AMEND_INPUT = 'amend-text';
/** Custom id of the edit modal's text input holding the whole plan. */
export const PLAN_INPUT = 'plan-json';
/** Custom id of the save-as-workflow modal's name input. */
export const WORKFLOW_NAME_INPUT = 'workflow-name';
/** Prefix of the edit-steps modal's inputs: `step:<stepId>`, one per step not yet run. */
export const STEP_INPUT_PREFIX = 'step:';

/** Discord's limit for any custom_id. */
export const CUSTOM_ID_MAX = 100;

const PREFIX = 'stw';
const KINDS: readonly string[] = [...DECISION_KINDS, ...CONTROL_KINDS, ...CONFIRM_KINDS, ...MODAL_KINDS];
// Run ids are UUIDs; anything with a colon or beyond this length would make the id ambiguous or too long.
const RUN_ID = /^[A-Za-z0-9_-]{1,64}$/;
const REVISION = /^(0|[1-9][0-9]{0,8})$/;

/** The custom id for `kind` on the card `ref`; throws on a run id that is not id-shaped (a programming error). */
export function customId(kind: CustomIdKind, ref: CardRef): string {
  if (!RUN_ID.test(ref.runId) || !REVISION.test(String(ref.revision)))
    throw new RangeError(`not a run id and revision for a custom id: ${ref.runId.slice(0, 80)} ${ref.revision}`);
  return `${PREFIX}:${kind}:${ref.runId}:${ref.revision}`;
}

/** Reads a custom id back; null for anything that is not one of ours (never throws on foreign input). */
export function parseCustomId(id: unknown): ParsedCustomId | null {
  if (typeof id !== 'string' || id.length > CUSTOM_ID_MAX) return null;
  const parts = id.split(':');
  if (parts.length !== 4) return null;
  const [prefix, kind = '', runId = '', revision = ''] = parts;
  if (prefix !== PREFIX || !KINDS.includes(kind) || !RUN_ID.test(runId) || !REVISION.test(revision)) return null;
  return { kind: kind as CustomIdKind, runId, revision: Number(revision) };
}

/** The decision a kind names, or null for controls and modals. */
export function decisionOf(kind: CustomIdKind): DecisionAction | null {
  return (DECISION_KINDS as readonly string[]).includes(kind) ? (kind as DecisionAction) : null;
}

/** The custom id of the edit-steps input for a step. */
export function stepInputId(stepId: string): string {
  return `${STEP_INPUT_PREFIX}${stepId}`;
}
