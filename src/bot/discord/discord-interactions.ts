/**
 * Presses on a card (buttons, the breakpoint menu) and modal submissions, each answered to Discord first (within its
 * 3 seconds: a deferred update, a modal, or a private reply), with the engine's work after. Every change goes to the
 * engine as a decision carrying the card's run and revision, so it refuses stale presses and people who may not
 * decide, privately, as for Slack.
 */
import {
  Events,
  MessageFlags,
  type ButtonInteraction,
  type ModalSubmitInteraction,
  type StringSelectMenuInteraction,
} from 'discord.js';
import type { ConnectionsCommand, InboundDecision } from '../../engine/channel.ts';
import { connectionAnswerOf, renderConnections } from './discord-connections.ts';
import type { Actor } from '../../engine/types.ts';
import { deliveryFilter } from '../delivery-filter.ts';
import { editRefusal, pickBreakpoints, takeSuggestions, type CardRef } from '../steering.ts';
import { AMEND_INPUT, parseCustomId, type ParsedCustomId } from './discord-actions.ts';
import { renderHelp, renderPreferenceSet } from './discord-command-text.ts';
import { deliveryId } from './discord-inbound.ts';
import { actorOf, type DiscordDeps } from './discord-messages.ts';
import { readEditModal, renderAmendModal, renderEditModal } from './discord-modals.ts';
import { privateMarkdown, privateText } from './discord-replies.ts';
import { toMessageOptions } from './discord-render.ts';
import { confirmedAction, renderAnswered, renderConfirm } from './discord-confirm.ts';
import { renderPlanView } from './discord-plan-view.ts';
import { openSaveWorkflow, submitSaveWorkflow } from './discord-workflow-save.ts';
import { questionPressOf } from './discord-question.ts';
import { onQuestionInteraction, QuestionEntries } from './discord-question-interactions.ts';

/**
 * Discord waits 3 s for the first answer to an interaction. Everything the answer depends on (the claim, who may
 * decide, the plan for a form) must be known this long after the interaction arrived; what is not is done without.
 */
const ANSWER_BY_MS = 2_300;

/** When the first answer to an interaction that arrives now must be on its way. */
export function answerDeadline(): number {
  return Date.now() + ANSWER_BY_MS;
}

/** Registers the interaction listener for card components and modals (slash commands: `discord-commands.ts`). */
export function registerInteractions(deps: DiscordDeps): void {
  const firstDelivery = deliveryFilter(1_000);
  const entries = new QuestionEntries();
  deps.client.on(Events.InteractionCreate, (interaction) => {
    if (!interaction.isButton() && !interaction.isStringSelectMenu() && !interaction.isModalSubmit()) return;
    const question = interaction.isStringSelectMenu() ? null : questionPressOf(interaction.customId);
    if (question && !interaction.isStringSelectMenu()) {
      if (firstDelivery(interaction.id)) onQuestionInteraction(interaction, question, deps, entries);
      return;
    }
    const answer = interaction.isButton() ? connectionAnswerOf(interaction.customId) : null;
    if (answer && interaction.isButton()) {
      if (firstDelivery(interaction.id)) onConnectionAnswer(interaction, answer, deps);
      return;
    }
    const parsed = parseCustomId(interaction.customId);
    if (!parsed || !firstDelivery(interaction.id)) return;
    const actor = actorOf(interaction.user, interaction.member);
    const answerBy = answerDeadline();
    deps.track(
      claimed(deps, interaction.id, answerBy).then((mine) => {
        if (!mine) return;
        deps.pressed(actor, interaction);
        if (interaction.isButton()) return onButton(interaction, parsed, actor, deps, answerBy);
        if (interaction.isStringSelectMenu()) return onSelect(interaction, parsed, actor, deps);
        return onModal(interaction, parsed, actor, deps);
      }),
    );
  });
}

/**
 * "Use this connection" or "Not me" on the private question about a connection that waits: pressed by the person it
 * was shown to, as themselves (that is what confirms it); answered privately.
 */
function onConnectionAnswer(i: ButtonInteraction, answer: ConnectionsCommand, deps: DiscordDeps): void {
  const actor = actorOf(i.user, i.member);
  deps.track(
    claimed(deps, i.id, answerDeadline()).then(async (mine) => {
      if (!mine) return;
      deps.pressed(actor, i);
      await i.deferReply({ flags: MessageFlags.Ephemeral });
      const said = await deps.handler.connections(actor, answer);
      await i.editReply(toMessageOptions(renderConnections(said)));
    }),
  );
}

/**
 * Every process on this bot token receives the interaction: the first to claim it in the database answers it. A
 * database too slow to say within Discord's time is not allowed to leave the press unanswered: it counts as ours.
 */
export async function claimed(
  deps: Pick<DiscordDeps, 'handler'>,
  interactionId: string,
  answerBy: number,
): Promise<boolean> {
  return (await within(deps.handler.claimDelivery(deliveryId(interactionId)), answerBy)) !== false;
}

async function onButton(
  i: ButtonInteraction,
  parsed: ParsedCustomId,
  actor: Actor,
  deps: DiscordDeps,
  answerBy: number,
): Promise<void> {
  const { handler } = deps;
  const ref: CardRef = { runId: parsed.runId, revision: parsed.revision };
  switch (parsed.kind) {
    case 'approve':
    case 'pause':
    case 'resume':
    case 'raise':
    case 'widen':
      await i.deferUpdate();
      return handler.decision({ ...ref, action: parsed.kind, actor });
    case 'cancel':
    case 'stop':
      // Someone who may not decide is refused by the engine, privately, without being asked first.
      if ((await within(handler.canDecide(ref.runId, actor), answerBy)) === false) {
        await i.deferUpdate();
        return handler.decision({ ...ref, action: parsed.kind, actor });
      }
      await i.reply({ ...toMessageOptions(renderConfirm(parsed.kind, ref)), flags: MessageFlags.Ephemeral });
      return;
    case 'stop-yes':
    case 'cancel-yes':
    case 'keep': {
      const action = confirmedAction(parsed.kind);
      await i.update(toMessageOptions(renderAnswered(action)));
      if (action) await handler.decision({ ...ref, action, actor });
      return;
    }
    case 'amend':
      // Only someone who may decide gets the form; anyone else's press goes to the engine, which refuses it privately.
      if ((await within(handler.canDecide(ref.runId, actor), answerBy)) === false) {
        await i.deferUpdate();
        return handler.decision({ ...ref, action: 'amend', actor });
      }
      return i.showModal(renderAmendModal(ref, deps.summaryOf(ref.runId)));
    case 'edit':
      return openEdit(i, ref, actor, deps, answerBy);
    case 'history':
      await i.deferUpdate();
      return handler.history(ref.runId, actor);
    case 'plan':
      return showPlan(i, ref, deps);
    case 'suggested': {
      await i.deferUpdate();
      const after = await takeSuggestions(handler, ref, actor);
      if (after) deps.showBreakpoints(ref.runId, after);
      return;
    }
    case 'askfirst':
      await i.deferUpdate();
      await handler.setReviewPreference(actor, 'all');
      await i.followUp({ ...toMessageOptions(renderPreferenceSet('all')), flags: MessageFlags.Ephemeral });
      return;
    case 'help':
      await i.reply({ ...toMessageOptions(renderHelp()), flags: MessageFlags.Ephemeral });
      return;
    case 'wfsave':
      return openSaveWorkflow(i, ref, await within(handler.canDecide(ref.runId, actor), answerBy), deps);
    default:
      return;
  }
}

/** Opens the edit form for someone who may decide, or says privately why not (the plan moved on, or is too big). */
async function openEdit(
  i: ButtonInteraction,
  ref: CardRef,
  actor: Actor,
  deps: DiscordDeps,
  answerBy: number,
): Promise<void> {
  const { handler } = deps;
  const allowed = await within(handler.canDecide(ref.runId, actor), answerBy);
  if (allowed === false) {
    await i.deferUpdate();
    return handler.decision({ ...ref, action: 'edit', actor });
  }
  const editable = await within(handler.editablePlan(ref.runId), answerBy);
  if (editable === 'late')
    return say(i, 'Steward could not read the plan in time; nothing changed. Press Edit plan again.');
  const refusal = editRefusal(editable, ref);
  if (refusal || !editable) return say(i, refusal ?? '');
  const form = renderEditModal(ref, editable);
  // The refusal is Steward's own sentence: its **Amend** must show bold, not as escaped asterisks.
  if ('refusal' in form)
    return void (await i.reply({ ...toMessageOptions(privateMarkdown(form.refusal)), flags: MessageFlags.Ephemeral }));
  await i.showModal(form.modal);
}

/** The breakpoint menu sends its whole selection: the engine sets and clears holds, then the card shows them. */
async function onSelect(
  i: StringSelectMenuInteraction,
  parsed: ParsedCustomId,
  actor: Actor,
  deps: DiscordDeps,
): Promise<void> {
  if (parsed.kind !== 'bp') return;
  await i.deferUpdate();
  const after = await pickBreakpoints(deps.handler, parsed, i.values, actor);
  if (after) deps.showBreakpoints(parsed.runId, after);
}

async function onModal(
  i: ModalSubmitInteraction,
  parsed: ParsedCustomId,
  actor: Actor,
  deps: DiscordDeps,
): Promise<void> {
  const { handler } = deps;
  const ref: CardRef = { runId: parsed.runId, revision: parsed.revision };
  if (parsed.kind === 'wfsave-modal') return submitSaveWorkflow(i, ref, actor, deps);
  if (parsed.kind === 'amend-modal') {
    const text = i.fields.getTextInputValue(AMEND_INPUT);
    // Opened from a card, the form closes quietly; the card itself shows the new revision.
    if (i.isFromMessage()) await i.deferUpdate();
    else await i.deferReply({ flags: MessageFlags.Ephemeral });
    return handler.decision({ ...ref, action: 'amend', actor, text });
  }
  if (parsed.kind !== 'edit-modal' && parsed.kind !== 'steps-modal') return;
  // Discord cannot show errors inside a submitted modal: the verdict comes back privately, with the text sent.
  await i.deferReply({ flags: MessageFlags.Ephemeral });
  const values = Object.fromEntries(i.fields.fields.map((f, id) => [id, 'value' in f ? String(f.value) : '']));
  const stored = await handler.editablePlan(ref.runId);
  const refusal = editRefusal(stored, ref);
  if (refusal || !stored) return void (await i.editReply(toMessageOptions(privateText(refusal ?? ''))));
  const plan = readEditModal(parsed.kind, values, stored);
  if (!plan.ok) return void (await i.editReply(toMessageOptions(privateText(plan.error, values))));
  const d: InboundDecision = { ...ref, action: 'edit', actor, plan: plan.value };
  const problem = await handler.checkEdit(d);
  if (problem) return void (await i.editReply(toMessageOptions(privateText(`${problem} Nothing changed.`, values))));
  await i.editReply(toMessageOptions(privateText('Edit received: the card shows the new revision once it is stored.')));
  await handler.decision(d);
}

/** The whole stored plan, privately, for whoever pressed (the card in the channel already shows it in part). */
async function showPlan(i: ButtonInteraction, ref: CardRef, deps: DiscordDeps): Promise<void> {
  await i.deferReply({ flags: MessageFlags.Ephemeral });
  const stored = await deps.handler.editablePlan(ref.runId);
  if (!stored) return void (await i.editReply(toMessageOptions(privateText('That run has no plan to show any more.'))));
  const [first, ...rest] = renderPlanView(stored.plan, stored.revision);
  await i.editReply(toMessageOptions(first!));
  for (const page of rest) await i.followUp({ ...toMessageOptions(page), flags: MessageFlags.Ephemeral });
}

/** A private reply to a press (the press is answered by it). */
async function say(i: ButtonInteraction, text: string): Promise<void> {
  await i.reply({ ...toMessageOptions(privateText(text)), flags: MessageFlags.Ephemeral });
}

/**
 * A value, or 'late' when it is not there by `answerBy` or failed (the database is away): the press is then answered
 * without it, and what it stood for is decided later by the engine, which refuses what it must.
 */
export async function within<T>(value: Promise<T>, answerBy: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, answerBy - Date.now()));
  });
  try {
    return await Promise.race([value.catch(() => 'late' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
