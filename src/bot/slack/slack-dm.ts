/**
 * Direct messages with Steward (`message.im`): each is addressed to it, so no mention is needed. A message is
 * answered in its own thread; a message in a thread is a reply to that thread's run (or a new request there). A
 * bare `stop`, `pause` or `status` outside any thread names no run: while runs are active in the DM it gets a
 * picker (`run-picker.ts`) instead of becoming a request. A workflow command (`workflow digest run`, the suggested
 * prompts' form: `slack-assistant-threads.ts`) is answered in the thread, as `/steward` answers it.
 */
import type { App } from '@slack/bolt';
import type { InboundMessage } from '../../engine/channel.ts';
import { createRunPicker, pickerWord } from '../run-picker.ts';
import { fromConversation, fromDirectMessage, type SlackMessageEvent } from './slack-inbound.ts';
import { deliveryFilter } from '../delivery-filter.ts';
import { delivery, untilAccepted, type ListenerDeps } from './slack-listeners.ts';
import { renderRunPicker } from './slack-run-picker.ts';
import { isWorkflowCommand } from '../../engine/workflow/workflow-commands.ts';
import type { SlackMessage } from './slack-render.ts';
import { safeMrkdwn } from './slack-text.ts';

type DmDeps = Pick<ListenerDeps, 'handler' | 'track' | 'thinking' | 'ephemeral'> & {
  /** Posts in a thread of the DM. */
  reply: (channel: string, threadTs: string, message: SlackMessage) => Promise<void>;
};

/** Registers the direct-message listener on the Bolt app. */
export function registerDirectMessages(app: App, deps: DmDeps): void {
  const firstDelivery = deliveryFilter(1_000);
  app.message(async ({ message, body, context }) => {
    const event = message as SlackMessageEvent;
    const inbound = fromDirectMessage(event, context.botUserId);
    if (!inbound || !event.channel || !event.ts || !firstDelivery(body.event_id)) return;
    if (!event.thread_ts && (await offeredPicker(deps, inbound, event.channel))) return;
    if (isWorkflowCommand(inbound.text)) {
      const answer = await deps.handler.workflowCommand({
        actor: inbound.actor,
        conversation: inbound.conversation,
        text: inbound.text,
      });
      const text = safeMrkdwn(answer.text, 2_900);
      const blocks: SlackMessage['blocks'] = [{ type: 'section', text: { type: 'mrkdwn', text, verbatim: true } }];
      return deps.reply(event.channel, event.thread_ts ?? event.ts, { text, blocks });
    }
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
