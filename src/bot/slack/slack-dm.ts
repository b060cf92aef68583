/**
 * Direct messages with Steward (`message.im`): each is addressed to it, so no mention is needed. A message is
 * answered in its own thread; a message in a thread is a reply to that thread's run (or a new request there). A
 * bare `stop`, `pause` or `status` outside any thread names no run: while runs are active in the DM it gets a
 * picker (`run-picker.ts`) instead of becoming a request.
 */
import type { App } from '@slack/bolt';
import type { InboundMessage } from '../../engine/channel.ts';
import { createRunPicker, pickerWord } from '../run-picker.ts';
import { fromConversation, fromDirectMessage, type SlackMessageEvent } from './slack-inbound.ts';
import { deliveryFilter } from '../delivery-filter.ts';
import { delivery, untilAccepted, type ListenerDeps } from './slack-listeners.ts';
import { renderRunPicker } from './slack-run-picker.ts';

type DmDeps = Pick<ListenerDeps, 'handler' | 'track' | 'thinking' | 'ephemeral'>;

/** Registers the direct-message listener on the Bolt app. */
export function registerDirectMessages(app: App, deps: DmDeps): void {
  const firstDelivery = deliveryFilter(1_000);
  app.message(async ({ message, body, context }) => {
    const event = message as SlackMessageEvent;
    const inbound = fromDirectMessage(event, context.botUserId);
    if (!inbound || !event.channel || !event.ts || !firstDelivery(body.event_id)) return;
    if (!event.thread_ts && (await offeredPicker(deps, inbound, event.channel))) return;
    const done = deps.thinking(event.channel, event.thread_ts ?? event.ts, event.ts);
    await untilAccepted(deps, { ...inbound, ...delivery(body.event_id) }, done);
  });
}

/** Shows the picker for a bare control word when the person has runs active in this DM; false when it does not. */
async function offeredPicker(deps: DmDeps, inbound: InboundMessage, channel: string): Promise<boolean> {
  const word = pickerWord(inbound.text);
  if (!word) return false;
  const runs = await deps.handler.activeRuns(inbound.actor);
  const picker = createRunPicker(
    word,
    runs.filter((r) => fromConversation(r.conversation)?.channel === channel),
  );
  if (!picker) return false;
  await deps.ephemeral({ channel }, inbound.actor.id, renderRunPicker(picker));
  return true;
}
