/**
 * Direct messages with Steward (`message.im`): each is addressed to it, so no mention is needed. A message is
 * answered in its own thread; a message in a thread is a reply to that thread's run (or a new request there).
 */
import type { App } from '@slack/bolt';
import { fromDirectMessage, type SlackMessageEvent } from './slack-inbound.ts';
import { deliveryFilter } from '../delivery-filter.ts';
import { delivery, untilAccepted, type ListenerDeps } from './slack-listeners.ts';

/** Registers the direct-message listener on the Bolt app. */
export function registerDirectMessages(app: App, deps: Pick<ListenerDeps, 'handler' | 'track' | 'thinking'>): void {
  const firstDelivery = deliveryFilter(1_000);
  app.message(async ({ message, body, context }) => {
    const event = message as SlackMessageEvent;
    const inbound = fromDirectMessage(event, context.botUserId);
    if (!inbound || !event.channel || !event.ts || !firstDelivery(body.event_id)) return;
    const done = deps.thinking(event.channel, event.thread_ts ?? event.ts, event.ts);
    await untilAccepted(deps, { ...inbound, ...delivery(body.event_id) }, done);
  });
}
