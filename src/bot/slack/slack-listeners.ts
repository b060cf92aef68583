/**
 * Bolt listeners: each Slack payload becomes one engine call. Messages are answered once the engine stored them, so
 * Slack delivers again an event that a killed process never stored; a decision button (approve, cancel, pause,
 * resume, stop) once the engine recorded the press (within Slack's 3 s), so a press is never answered and then lost.
 * Other controls and modal submissions are acknowledged first; the engine's work runs after and is tracked.
 */
import type { App, types } from '@slack/bolt';
import type { InboundDecision, InboundHandler, InboundMessage } from '../../engine/channel.ts';
import type { Breakpoint } from '../../engine/plan/breakpoints.ts';
import type { Actor } from '../../engine/types.ts';
import {
  ACTION_PREFIX,
  AMEND_INPUT,
  AMEND_VIEW,
  ASK_FIRST_ACTION,
  decisionFromActionId,
  decodeCardRef,
} from './slack-actions.ts';
import { deliveryFilter } from '../delivery-filter.ts';
import { feedbackOf } from './slack-feedback.ts';
import { onControl, registerEditModal } from './slack-control-listeners.ts';
import { onQuestionPress, registerQuestionModal } from './slack-question-listeners.ts';
import { renderPreferenceSet } from './slack-controls.ts';
import { connectionAnswerOf, renderConnectionsAnswer } from './slack-connections.ts';
import { onHomeAction, type HomeTab } from './slack-home-tab.ts';
import { fromMention, fromThreadReply, toActor, type SlackMessageEvent } from './slack-inbound.ts';
import type { SlackMessage } from './slack-render.ts';
import { renderAmendModal } from './slack-thread-render.ts';
import { onSaveWorkflow, registerSaveWorkflowModal } from './slack-workflow-listeners.ts';

/** Where a person last pressed something: the only place an ephemeral reply can go when a notice has no thread. */
export interface SeenAt {
  channel: string;
  threadTs?: string;
}

/** What the listeners need from the channel. */
export interface ListenerDeps {
  handler: InboundHandler;
  /** Runs engine work after the ack; errors are logged. */
  track: (work: Promise<void>) => void;
  hasActiveCard(channel: string, threadTs: string): boolean;
  summaryOf(runId: string): string;
  seen(actor: Actor, at: SeenAt): void;
  /** Shows that Steward works on a request in a thread at once; the function returned clears it. */
  thinking(channel: string, threadTs: string, messageTs: string): () => void;
  /** Shows a message to one person only, where they pressed. */
  ephemeral(at: SeenAt, userId: string, message: SlackMessage): Promise<void>;
  /** Redraws a run's card with its breakpoints as stored now. */
  showBreakpoints(runId: string, breakpoints: readonly Breakpoint[]): void;
  /** The App Home tab, for choices made in it. */
  home: HomeTab;
}

/** Registers every listener Steward needs on the Bolt app. */
export function registerListeners(app: App, deps: ListenerDeps): void {
  const { handler, track } = deps;
  const firstDelivery = deliveryFilter(1_000);

  app.event('app_mention', async ({ event, body, context }) => {
    const message = fromMention(event, context.botUserId);
    if (!message || !firstDelivery(body.event_id)) return;
    const done = deps.thinking(event.channel, event.thread_ts ?? event.ts, event.ts);
    await untilAccepted(deps, { ...message, ...delivery(body.event_id) }, done);
  });

  // Plain replies go to the engine only inside a thread that holds a live card; other chatter is not for Steward.
  app.message(async ({ message, body, context }) => {
    if (!firstDelivery(body.event_id)) return;
    const reply = fromThreadReply(message, context.botUserId);
    const m = message as SlackMessageEvent;
    if (reply && m.channel && m.thread_ts && deps.hasActiveCard(m.channel, m.thread_ts))
      await untilAccepted(deps, { ...reply, ...delivery(body.event_id) });
  });

  app.action(
    { type: 'block_actions', action_id: new RegExp(`^${ACTION_PREFIX.replace('.', '\\.')}`) },
    async ({ ack, body, action, client }) => {
      const actor = toActor(body.user);
      // A press on a private message (help, a confirmation) has no message in its payload; its container says where.
      const at: SeenAt = {
        channel: body.channel?.id ?? stringField(body.container, 'channel_id') ?? '',
        threadTs:
          stringField(body.message, 'thread_ts') ?? body.message?.ts ?? stringField(body.container, 'thread_ts'),
      };
      // A decision button is answered once the engine recorded the press; every other control at once.
      const pressed = action.type === 'button' ? decisionOf(action.action_id, action.value) : null;
      if (pressed) {
        if (at.channel) deps.seen(actor, at);
        await untilDecided(deps, { ...pressed, actor });
        return void (await ack());
      }
      await ack();
      const feedback = feedbackOf(action, actor);
      if (feedback) return void (handler.feedback && track(handler.feedback(feedback)));
      // A choice on the App Home tab: no channel or thread, it is answered by publishing the view again.
      if (onHomeAction(action, actor, deps)) return;
      if (at.channel) deps.seen(actor, at);
      const openModal = async (view: types.ModalView) => {
        await client.views.open({ trigger_id: body.trigger_id, view });
      };
      const open = body.view;
      const inModal = open && {
        metadata: open.private_metadata,
        update: async (view: types.ModalView) => {
          await client.views.update({ view_id: open.id, hash: open.hash, view });
        },
      };
      if (
        onControl(action, { actor, at, openModal, ...(inModal && { inModal }) }, deps) ||
        onSaveWorkflow(action, { actor, at, openModal }, deps) ||
        onQuestionPress(action, { actor, at, openModal }, deps)
      )
        return;
      if (action.type !== 'button') return;
      // "Use this connection" or "Not me": pressed by the person the private question was shown to, as themselves.
      const answer = connectionAnswerOf(action.action_id, action.value);
      if (answer) {
        track(
          handler
            .connections(actor, answer)
            .then((said) => deps.ephemeral(at, actor.id, renderConnectionsAnswer(said))),
        );
        return;
      }
      const ref = decodeCardRef(action.value);
      if (!ref) return;
      if (action.action_id === ASK_FIRST_ACTION) {
        track(
          handler
            .setReviewPreference(actor, 'all')
            .then(() => deps.ephemeral(at, actor.id, renderPreferenceSet('all'))),
        );
        return;
      }
      if (decisionFromActionId(action.action_id) === 'amend') {
        // trigger_id lives 3 s: open the modal at once, and only for someone who may decide. Anyone else's press
        // still goes to the engine, which refuses it, tells them privately and records it.
        track(
          (async () => {
            if (!(await handler.canDecide(ref.runId, actor)))
              return handler.decision({ ...ref, action: 'amend', actor });
            await openModal(renderAmendModal(ref, deps.summaryOf(ref.runId)));
          })(),
        );
      }
    },
  );

  app.view(AMEND_VIEW, async ({ ack, body, view }) => {
    await ack();
    const ref = decodeCardRef(view.private_metadata);
    const text = view.state.values[AMEND_INPUT.block]?.[AMEND_INPUT.element]?.value ?? '';
    if (ref) track(handler.decision({ ...ref, action: 'amend', actor: toActor(body.user), text }));
  });

  registerEditModal(app, deps);
  registerQuestionModal(app, deps);
  registerSaveWorkflowModal(app, deps);
}

/** Slack waits 3 s for an event's answer: past this, the message is answered as not taken, so Slack sends it again. */
const ACCEPT_WAIT_MS = 2_500;

/**
 * Hands a message to the engine and returns once the engine stored it (in HTTP mode Bolt answers Slack when the
 * listener returns), or when the engine is done. Throws when the engine failed first, or did not store the message
 * within `ACCEPT_WAIT_MS` (the database away): Bolt then answers with an error and Slack delivers the event again,
 * so a process killed before storing it loses nothing; a redelivery of an event that was stored after all is
 * dropped by the engine's claim. The rest runs tracked; `done` is called when the engine is done.
 */
export async function untilAccepted(
  deps: Pick<ListenerDeps, 'handler' | 'track'>,
  m: Omit<InboundMessage, 'accepted'>,
  done?: () => void,
): Promise<void> {
  const taken = await acceptedInTime(deps, (accepted) => deps.handler.message({ ...m, accepted }), done);
  if (!taken) throw new Error(`the message was not stored within ${ACCEPT_WAIT_MS} ms; Slack will send it again`);
}

/**
 * Starts engine work that calls `accepted` once it stored what it was given, and tracks it: true once it did (or the
 * work ended), false once `ACCEPT_WAIT_MS` passed first. Rejects when the work failed first.
 */
async function acceptedInTime(
  deps: Pick<ListenerDeps, 'track'>,
  start: (accepted: () => void) => Promise<void>,
  done?: () => void,
): Promise<boolean> {
  let accepted!: () => void;
  const stored = new Promise<boolean>((resolve) => (accepted = () => resolve(true)));
  const work = start(accepted);
  deps.track(done ? work.finally(done) : work);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ACCEPT_WAIT_MS)));
  try {
    return await Promise.race([stored, work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The decision a card button stands for (approve, cancel, pause, resume, stop), or null for any other button. */
function decisionOf(actionId: string, value: string | undefined): Omit<InboundDecision, 'actor'> | null {
  const action = decisionFromActionId(actionId);
  const ref = decodeCardRef(value);
  return action && action !== 'amend' && ref ? { ...ref, action } : null;
}

/**
 * Hands a press's decision to the engine and returns once the engine recorded it (queued for its run's holder, or
 * decided and stored), or is done, or `ACCEPT_WAIT_MS` passed: Slack is answered then, so a process killed between
 * the press and its record leaves Slack unanswered (the person sees the press fail) instead of answered and lost.
 * Past the wait it is answered all the same (the engine is still at it, the database slow). Throws when the engine
 * failed first: Bolt answers with an error. The rest runs tracked.
 */
async function untilDecided(deps: Pick<ListenerDeps, 'handler' | 'track'>, d: InboundDecision): Promise<void> {
  await acceptedInTime(deps, (accepted) => deps.handler.decision({ ...d, accepted }));
}

/** A string field of a payload part that Bolt types as `any` (a container, a message); otherwise undefined. */
function stringField(part: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = part?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** The delivery id the engine de-duplicates on (in the database, so a redelivery after a restart is dropped too). */
export function delivery(eventId: string | undefined): { deliveryId?: string } {
  return eventId ? { deliveryId: `slack:${eventId}` } : {};
}
