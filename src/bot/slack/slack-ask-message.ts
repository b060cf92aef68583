/**
 * "Ask Steward about this message", a message shortcut (the manifest's `shortcuts`, type `message`): a modal asks what
 * to do with the message, and its answer starts a request in that message's thread with the message (who wrote it, a
 * link, its text quoted and cut) appended as context. The message is untrusted input like any request's text: it is
 * quoted and marked as context, never obeyed as Steward's own instructions.
 */
import type { App, types } from '@slack/bolt';
import type { InboundHandler } from '../../engine/channel.ts';
import { toActor, toConversation } from './slack-inbound.ts';
import { safeMrkdwn } from './slack-text.ts';
import { pointedRequestText } from '../pointed-message.ts';

/** The shortcut's callback id (slack/manifest.yml) and the modal's. */
export const ASK_MESSAGE_SHORTCUT = 'steward.ask-message';
export const ASK_MESSAGE_VIEW = 'steward.ask-message-view';
const ASK_BLOCK = 'ask';
const ASK_INPUT = 'text';
/** The most of the message's text a request carries: enough to act on, without one message filling the prompt. */
export const QUOTED_MAX = 2_000;
/** Slack's limit on a view's private_metadata (https://docs.slack.dev/reference/views/modal-views: 3,000 characters). */
const METADATA_MAX = 3_000;

/** The message a request points at, as the modal carries it to its submission. */
export interface PointedMessage {
  channel: string;
  /** The thread the request goes in: the message's thread, or the thread it starts. */
  threadTs: string;
  /** The message's own ts (its link is asked for when the request is made). */
  ts: string;
  author: string;
  text: string;
  /** The message's whole length, when `text` was cut. */
  length?: number;
}

/** The private refusal for a message with no text. */
export const NO_TEXT = 'That message has no text for me to read. Copy what matters into `/steward ask`.';

/** The modal asking what to do with a message; the message travels in its metadata, cut to fit. */
export function renderAskMessageModal(m: PointedMessage): types.ModalView {
  const shown = safeMrkdwn(m.text.replace(/\s+/g, ' '), 280);
  return {
    type: 'modal',
    callback_id: ASK_MESSAGE_VIEW,
    title: { type: 'plain_text', text: 'Ask Steward' },
    submit: { type: 'plain_text', text: 'Ask' },
    close: { type: 'plain_text', text: 'Cancel' },
    private_metadata: fitMetadata(m),
    blocks: [
      { type: 'context', elements: [{ type: 'mrkdwn', text: `<@${m.author}> wrote: ${shown}`, verbatim: true }] },
      {
        type: 'input',
        block_id: ASK_BLOCK,
        label: { type: 'plain_text', text: 'What should I do with this message?' },
        element: { type: 'plain_text_input', action_id: ASK_INPUT, multiline: true, min_length: 1, max_length: 2_000 },
      },
    ],
  };
}

/** The pointed message as JSON within Slack's metadata limit, its text cut further while it does not fit. */
function fitMetadata(m: PointedMessage): string {
  let text = m.text.slice(0, QUOTED_MAX);
  for (;;) {
    const cut = text.length < m.text.length ? { length: m.text.length } : {};
    const json = JSON.stringify({ ...m, text, ...cut });
    if (json.length <= METADATA_MAX) return json;
    text = text.slice(0, Math.floor(text.length * 0.8));
  }
}

/** The pointed message a submission carries, or null when its metadata is not one. */
export function readPointedMessage(metadata: string): PointedMessage | null {
  try {
    const m = JSON.parse(metadata) as Partial<PointedMessage>;
    const strings = [m.channel, m.threadTs, m.ts, m.author, m.text].every((v) => typeof v === 'string');
    return strings ? (m as PointedMessage) : null;
  } catch {
    return null;
  }
}

/**
 * The request's text: the person's words, then the message they pointed at, quoted line by line (saying when it was
 * cut), marked as what they were shown rather than what to obey.
 */
export function askAboutMessageText(question: string, m: PointedMessage, link: string): string {
  const author = `Slack user ${m.author}`;
  return pointedRequestText(question, { author, link, text: m.text, ...(m.length && { cutFrom: m.length }) });
}

/** What the shortcut needs from the channel. */
export interface AskMessageDeps {
  handler: InboundHandler;
  track: (work: Promise<void>) => void;
  /** Shows that Steward works on a request in a thread at once; the function returned clears it. */
  thinking(channel: string, threadTs: string, messageTs: string): () => void;
  /** Tells one person something privately where they are (the shortcut's channel). */
  tell(channel: string, user: string, text: string): Promise<void>;
}

/** Registers the shortcut (the modal on a message) and the modal's submission (the request in the thread). */
export function registerAskMessage(app: App, deps: AskMessageDeps): void {
  app.shortcut({ type: 'message_action', callback_id: ASK_MESSAGE_SHORTCUT }, async ({ ack, shortcut, client }) => {
    await ack();
    const message = shortcut.message as { ts?: string; thread_ts?: string; text?: string; user?: string };
    const channel = shortcut.channel.id;
    const text = (message.text ?? '').trim();
    if (!text || !message.ts) return deps.tell(channel, shortcut.user.id, NO_TEXT);
    // trigger_id lives 3 s: the modal opens at once; the message's link is asked for when the request is made.
    const pointed = {
      channel,
      threadTs: message.thread_ts ?? message.ts,
      ts: message.ts,
      author: message.user ?? 'unknown',
      text,
    };
    await client.views.open({ trigger_id: shortcut.trigger_id, view: renderAskMessageModal(pointed) });
  });

  app.view(ASK_MESSAGE_VIEW, async ({ ack, body, view, client }) => {
    const pointed = readPointedMessage(view.private_metadata);
    const question = view.state.values[ASK_BLOCK]?.[ASK_INPUT]?.value?.trim() ?? '';
    if (!question)
      return void (await ack({ response_action: 'errors', errors: { [ASK_BLOCK]: 'Say what I should do with it.' } }));
    await ack();
    if (!pointed) return;
    const done = deps.thinking(pointed.channel, pointed.threadTs, pointed.ts);
    const request = async () => {
      const link = await client.chat
        .getPermalink({ channel: pointed.channel, message_ts: pointed.ts })
        .then((r) => r.permalink ?? `${pointed.channel}/${pointed.ts}`)
        .catch(() => `${pointed.channel}/${pointed.ts}`);
      await deps.handler.message({
        conversation: toConversation(pointed.channel, pointed.threadTs),
        actor: toActor(body.user),
        text: askAboutMessageText(question, pointed, link),
        newRequest: true,
        place: pointed.channel,
      });
    };
    deps.track(request().finally(done));
  });
}
