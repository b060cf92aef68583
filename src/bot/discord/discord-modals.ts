/**
 * The Discord modals (pure): amend (what should change, in words) and edit (the plan as JSON). A Discord text input
 * holds 4,000 characters and a modal five inputs, so a big plan is edited one box per step not yet run, or refused
 * with a sentence; JSON is never cut. Reading a submission back gives the plan the edit decision carries.
 */
import { ComponentType, TextInputStyle, type APIModalInteractionResponseCallbackData } from 'discord.js';
import type { EditablePlan } from '../../engine/channel.ts';
import { fail, ok, type Result } from '../../engine/result.ts';
import type { Json } from '../../engine/types.ts';
import { AMEND_INPUT, customId, PLAN_INPUT, stepInputId, type CardRef } from './discord-actions.ts';
import { plainText } from './discord-text.ts';

/** A modal as the interaction response's data. */
export type DiscordModal = APIModalInteractionResponseCallbackData;

/** Characters a Discord text input holds. */
export const INPUT_MAX = 4_000;
const TITLE_MAX = 45;
const LABEL_MAX = 45;
const INPUTS_MAX = 5;

/** The amendment modal: one required paragraph; its title names the plan, cut to Discord's 45 characters. */
export function renderAmendModal(ref: CardRef, summary: string): DiscordModal {
  return {
    custom_id: customId('amend-modal', ref),
    title: plainText(`Amend: ${summary.replace(/\s+/g, ' ').trim() || 'the plan'}`, TITLE_MAX),
    components: [input(AMEND_INPUT, 'What should change?', '', { required: true, min_length: 1, max_length: 2_000 })],
  };
}

/**
 * The edit modal for a plan: the whole plan as indented JSON when it fits one input; else a box per step not yet
 * started when there are at most five and each fits (started steps are kept as they are); else the whole plan on
 * one line when that fits; else a refusal saying the plan's size and to amend in words instead.
 */
export function renderEditModal(ref: CardRef, plan: EditablePlan): { modal: DiscordModal } | { refusal: string } {
  const title = plainText(`Edit the plan (revision ${ref.revision})`, TITLE_MAX);
  const pretty = JSON.stringify(plan.plan, null, 2);
  if (pretty.length <= INPUT_MAX)
    return { modal: { custom_id: customId('edit-modal', ref), title, components: [planInput(pretty)] } };
  const started = new Set(plan.started);
  const open = stepsOf(plan).flatMap((s) => {
    const id = idOf(s);
    return id !== null && !started.has(id) ? [{ id, step: s }] : [];
  });
  const boxes = open.map((s) => ({ id: s.id, text: stepInputId(s.id).length <= 100 ? fitting(s.step) : null }));
  if (open.length > 0 && open.length <= INPUTS_MAX && boxes.every((b) => b.text !== null))
    return {
      modal: {
        custom_id: customId('steps-modal', ref),
        title,
        // Empty a box to drop the step, as in Slack's step-by-step modal.
        components: boxes.map((b) =>
          input(stepInputId(b.id), plainText(`Step ${b.id}`, LABEL_MAX), b.text ?? '', { required: false }),
        ),
      },
    };
  const compact = JSON.stringify(plan.plan);
  if (compact.length <= INPUT_MAX)
    return { modal: { custom_id: customId('edit-modal', ref), title, components: [planInput(compact)] } };
  return { refusal: tooBigToEdit(plan, open.length) };
}

/** Why a plan cannot be edited in a Discord modal, and what to do instead: markdown with only numbers filled in. */
function tooBigToEdit(plan: EditablePlan, open: number): string {
  const chars = JSON.stringify(plan.plan).length.toLocaleString('en-US');
  const steps = open > INPUTS_MAX ? ` and ${open} steps not yet run (a form holds ${INPUTS_MAX} boxes)` : '';
  return (
    `This plan is ${chars} characters of JSON${steps}, more than a Discord form can hold (4,000 characters a box), ` +
    'so it cannot be edited here without cutting it. Use **Amend** to say in words what should change, or ' +
    '**Pause after step…** to check results before the run goes on.'
  );
}

/**
 * A submitted edit modal read back as the edit decision's plan: the whole plan (`edit-modal`), or `{ steps }`
 * (`steps-modal`) in the stored order with started steps as stored, edited ones parsed and emptied ones dropped.
 * A JSON syntax error is a sentence naming the box; nothing is changed then.
 */
export function readEditModal(
  kind: 'edit-modal' | 'steps-modal',
  values: Record<string, string>,
  plan: EditablePlan,
): Result<Json> {
  if (kind === 'edit-modal') return parseJson(values[PLAN_INPUT] ?? '', 'The plan');
  const started = new Set(plan.started);
  const steps: Json[] = [];
  for (const step of stepsOf(plan)) {
    const id = idOf(step);
    const text = id === null ? undefined : values[stepInputId(id)];
    // Started steps have no box, and a step without a value in the submission is kept as stored.
    if (id === null || started.has(id) || text === undefined) steps.push(step);
    else if (text.trim()) {
      const parsed = parseJson(text, `Step ${id}`);
      if (!parsed.ok) return parsed;
      steps.push(parsed.value);
    }
  }
  return ok({ steps });
}

function parseJson(text: string, what: string): Result<Json> {
  try {
    return ok(JSON.parse(text) as Json);
  } catch (err) {
    const why = (err as Error).message.replace(/\s+/g, ' ');
    return fail(`${what} is not valid JSON: ${plainText(why, 300)}. Nothing changed.`);
  }
}

function stepsOf(plan: EditablePlan): Json[] {
  const steps = plan.plan !== null && typeof plan.plan === 'object' && !Array.isArray(plan.plan) ? plan.plan.steps : [];
  return Array.isArray(steps) ? steps : [];
}

function idOf(step: Json): string | null {
  if (step === null || typeof step !== 'object' || Array.isArray(step)) return null;
  return typeof step.id === 'string' ? step.id : null;
}

/** A step's JSON, indented when that fits a box, else on one line; null when neither fits. */
function fitting(step: Json): string | null {
  const pretty = JSON.stringify(step, null, 2);
  if (pretty.length <= INPUT_MAX) return pretty;
  const compact = JSON.stringify(step);
  return compact.length <= INPUT_MAX ? compact : null;
}

function planInput(text: string): DiscordModal['components'][number] {
  return input(PLAN_INPUT, 'The plan as JSON', text, { required: true, min_length: 2 });
}

function input(
  id: string,
  label: string,
  value: string,
  options: { required: boolean; min_length?: number; max_length?: number },
): DiscordModal['components'][number] {
  return {
    type: ComponentType.ActionRow,
    components: [
      {
        type: ComponentType.TextInput,
        custom_id: id,
        label,
        style: TextInputStyle.Paragraph,
        max_length: INPUT_MAX,
        ...options,
        ...(value ? { value } : {}),
      },
    ],
  };
}
