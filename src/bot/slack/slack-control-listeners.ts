/**
 * What the card's steering controls do: Edit plan (a modal whose submission is checked before Slack's 3 s are up,
 * errors shown inside it), the breakpoint picker, "Add suggested breakpoints", history and help (privately), and the review preference. Every
 * change goes to the engine as a decision carrying the card's run and revision, so it refuses stale presses and
 * people who may not decide, as for any button.
 */
import type { App, BlockElementAction, types, ViewErrorsResponseAction } from '@slack/bolt';
import type { InboundDecision } from '../../engine/channel.ts';
import type { Actor } from '../../engine/types.ts';
import {
  BREAKPOINTS_ACTION,
  decodeCardRef,
  EDIT_ACTION,
  EDIT_INPUT,
  EDIT_VIEW,
  MORE_ACTION,
  refOfBlockId,
  REVIEW_ACTION,
  SUGGESTIONS_ACTION,
  type CardRef,
} from './slack-actions.ts';
import { privateText, renderHelp, renderPreferenceSet, toPreference } from './slack-controls.ts';
import { editErrors, editText, readEditText, renderEditModal, tooBigToEdit } from './slack-edit-modal.ts';
import {
  boxErrors,
  EDIT_STEPS_PAGE_ACTION,
  EDIT_STEPS_VIEW,
  readStepsEdit,
  renderStepsModal,
  stepsErrors,
  type ViewValues,
} from './slack-edit-steps-modal.ts';
import { editRefusal, pickBreakpoints, takeSuggestions } from '../steering.ts';
import { renderPlanView } from './slack-plan-view.ts';
import { toActor } from './slack-inbound.ts';
import type { ListenerDeps, SeenAt } from './slack-listeners.ts';

/** Slack waits 3 s for a modal's answer; the engine's check gets this long, leaving time for the trip back. */
const CHECK_MS = 2_000;

/** A press on one of the controls: who, where, and how to open a modal with its trigger. */
export interface ControlPress {
  actor: Actor;
  at: SeenAt;
  openModal(view: types.ModalView): Promise<void>;
  /** For a press inside a modal: its private_metadata, and how to show another view in its place. */
  inModal?: { metadata: string; update(view: types.ModalView): Promise<void> };
}

/** Handles a press on a steering control (after the ack); false when the action is not one of them. */
export function onControl(action: BlockElementAction, press: ControlPress, deps: ListenerDeps): boolean {
  const { handler, track } = deps;
  const say = (text: string) => deps.ephemeral(press.at, press.actor.id, privateText(text));
  if (action.action_id === EDIT_ACTION) {
    const ref = action.type === 'button' ? decodeCardRef(action.value) : null;
    if (ref) track(openEdit(ref, press, deps, say));
  } else if (action.action_id === EDIT_STEPS_PAGE_ACTION) {
    const ref = decodeCardRef(press.inModal?.metadata);
    const from = action.type === 'static_select' ? action.selected_option.value : undefined;
    if (ref && from) track(openEdit(ref, press, deps, say, from));
  } else if (action.action_id === BREAKPOINTS_ACTION) {
    const ref = refOfBlockId(action.block_id);
    const chosen = action.type === 'multi_static_select' ? action.selected_options.map((o) => o.value) : null;
    if (ref && chosen)
      track(
        pickBreakpoints(handler, ref, chosen, press.actor).then((after) => {
          if (after) deps.showBreakpoints(ref.runId, after);
        }),
      );
  } else if (action.action_id === SUGGESTIONS_ACTION) {
    const ref = action.type === 'button' ? decodeCardRef(action.value) : null;
    if (ref)
      track(
        takeSuggestions(handler, ref, press.actor).then((after) => {
          if (after) deps.showBreakpoints(ref.runId, after);
        }),
      );
  } else if (action.action_id === MORE_ACTION) {
    const ref = refOfBlockId(action.block_id);
    const choice = action.type === 'overflow' ? action.selected_option.value : undefined;
    if (ref && choice === 'history') track(handler.history(ref.runId, press.actor));
    if (ref && choice === 'plan') track(openPlanView(ref, press, deps, say));
    if (choice === 'help') track(deps.ephemeral(press.at, press.actor.id, renderHelp()));
  } else if (action.action_id === REVIEW_ACTION) {
    const value =
      action.type === 'button'
        ? action.value
        : action.type === 'static_select'
          ? action.selected_option.value
          : undefined;
    const preference = toPreference(value);
    if (preference)
      track(
        handler
          .setReviewPreference(press.actor, preference)
          .then(() => deps.ephemeral(press.at, press.actor.id, renderPreferenceSet(preference))),
      );
  } else return false;
  return true;
}

/** Registers the edit modal's submission: checked at once, answered with errors in the modal or closed and applied. */
export function registerEditModal(app: App, deps: ListenerDeps): void {
  app.view(EDIT_VIEW, async ({ ack, body, view }) => {
    const ref = decodeCardRef(view.private_metadata);
    if (!ref) return void (await ack());
    const json = readEditText(view.state.values[EDIT_INPUT.block]?.[EDIT_INPUT.element]?.value ?? '');
    if (!json.ok) return void (await ack(editErrors(json.error)));
    const d: InboundDecision = { ...ref, action: 'edit', actor: toActor(body.user), plan: json.value };
    const problem = await inTime(deps.handler.checkEdit(d));
    if (problem) return void (await ack(editErrors(problem)));
    await ack();
    deps.track(deps.handler.decision(d));
  });

  // The step-by-step form: the boxes are put together over the plan as stored, then checked the same way.
  app.view(EDIT_STEPS_VIEW, async ({ ack, body, view }) => {
    const ref = decodeCardRef(view.private_metadata);
    if (!ref) return void (await ack());
    const values = view.state.values as ViewValues;
    const actor = toActor(body.user);
    const verdict = await inTime(stepsVerdict(deps, ref, actor, values));
    if (typeof verdict === 'string') return void (await ack(stepsErrors(verdict, values)));
    if ('response_action' in verdict) return void (await ack(verdict));
    await ack();
    deps.track(deps.handler.decision(verdict));
  });
}

/** Opens the edit modal for someone who may decide (anyone else is refused by the engine, privately). */
async function openEdit(
  ref: CardRef,
  press: ControlPress,
  deps: ListenerDeps,
  say: (text: string) => Promise<void>,
  page?: string,
): Promise<void> {
  const { handler } = deps;
  if (!(await handler.canDecide(ref.runId, press.actor)))
    return handler.decision({ ...ref, action: 'edit', actor: press.actor });
  const editable = await handler.editablePlan(ref.runId);
  const refusal = editRefusal(editable, ref);
  if (refusal || !editable) return say(refusal ?? '');
  const text = page === undefined ? editText(editable.plan) : null;
  const modal = text === null ? renderStepsModal(ref, editable, page) : renderEditModal(ref, editable, text);
  if (!modal) return say(tooBigToEdit(editable.plan));
  // Another page of the step-by-step form replaces the one open (its trigger was used to open it).
  await (page !== undefined && press.inModal ? press.inModal.update(modal) : press.openModal(modal));
}

/** Opens the whole stored plan, read-only, for whoever pressed (the card in the channel already shows it in part). */
async function openPlanView(
  ref: CardRef,
  press: ControlPress,
  deps: ListenerDeps,
  say: (text: string) => Promise<void>,
): Promise<void> {
  const stored = await deps.handler.editablePlan(ref.runId);
  if (!stored) return say('That run has no plan to show any more.');
  await press.openModal(renderPlanView(stored.plan, stored.revision));
}

/** The step boxes as an edit decision, or what to show in the form: errors by box, or the engine's refusal. */
async function stepsVerdict(
  deps: ListenerDeps,
  ref: CardRef,
  actor: Actor,
  values: ViewValues,
): Promise<InboundDecision | ViewErrorsResponseAction | string> {
  const stored = await deps.handler.editablePlan(ref.runId);
  if (!stored) return 'That run has no plan to edit any more.';
  const edit = readStepsEdit(values, stored);
  if (!edit.ok) return boxErrors(edit.error);
  const d: InboundDecision = { ...ref, action: 'edit', actor, plan: edit.value };
  return (await deps.handler.checkEdit(d)) ?? d;
}

/**
 * An edit's verdict, or a sentence when it cannot be had within Slack's time or fails (nothing changed then, and the
 * person's text stays in the form).
 */
async function inTime<T>(verdict: Promise<T>): Promise<T | string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve('Checking this edit took too long; nothing changed. Press Save again.'), CHECK_MS);
  });
  try {
    return await Promise.race([verdict, late]);
  } catch {
    return 'Steward could not check this edit just now; nothing changed. Press Save again in a moment.';
  } finally {
    clearTimeout(timer);
  }
}
