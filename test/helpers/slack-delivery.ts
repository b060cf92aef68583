/**
 * Slack's side of a conversation with Steward processes in HTTP mode: mentions and button presses delivered to a
 * chosen process's `/slack/events`, signed as Slack signs them, and readers for what the fake Slack recorded
 * (threads, cards, their buttons, reports). With several processes behind one app, each delivery goes to whichever
 * URL `pick` answers, as a load balancer would; a mention that fails is delivered again (with Slack's retry headers)
 * to the next pick, as Slack retries events. Button presses are not retried: Slack shows the person an error.
 *
 *   const slackSide = createSlackDelivery({ slack, signingSecret });
 *   const { threadTs } = await slackSide.mention(() => randomLive().eventsUrl, { text: 'do the work' });
 *   const card = cardOf(slack, threadTs);
 *   if (card && buttonOf(card, 'approve')) await slackSide.press(() => p2.eventsUrl, card, 'approve');
 */
import { createHmac } from 'node:crypto';
import type { FakeMessage, FakeSlack } from '../fakes/fake-slack-server.ts';
import {
  createAppHomeOpened,
  createBlockAction,
  createHomeSelect,
  createMention,
  eventEnvelope,
  interactionBody,
  newTs,
} from '../e2e/slack-requests.ts';

/** One try at delivering a request: the URL and the HTTP status, or the network error. */
export interface DeliveryTry {
  url: string;
  at: number;
  status?: number;
  error?: string;
}

/** A request and every try at delivering it; `ok` when one try was answered 200. */
export interface Delivery {
  ok: boolean;
  tries: DeliveryTry[];
}

export interface SlackDelivery {
  /** Mentions Steward at the top of a channel (a new thread); retried on failure up to `retries` times. */
  mention(
    pick: () => string | undefined,
    o: { text: string; user?: string; channel?: string },
  ): Promise<Delivery & { threadTs: string }>;
  /** Presses a button (`approve`, `stop`…) on a message as it stands now; the value shown unless given. */
  press(
    pick: () => string | undefined,
    message: FakeMessage,
    action: string,
    o?: { user?: string; value?: string },
  ): Promise<Delivery>;
  /** A person opens the app's Home tab (an app_home_opened event); not retried. */
  openHome(pick: () => string | undefined, o?: { user?: string }): Promise<Delivery>;
  /**
   * A person chooses an option in a select on their Home view as the fake Slack holds it now (`steward.<action>`);
   * fails when they have no Home view yet.
   */
  chooseInHome(pick: () => string | undefined, action: string, value: string, o?: { user?: string }): Promise<Delivery>;
}

/** A button on a Steward message. */
export interface SlackButton {
  action_id: string;
  value: string;
}

/** Signs and delivers requests to Steward processes for the fake Slack `slack`. */
export function createSlackDelivery(o: {
  slack: FakeSlack;
  signingSecret: string;
  /** Deliveries of an event after the first (Slack makes up to 3). */
  retries?: number;
  /** Wait before a retry (Slack waits a minute and more; a test need not). */
  retryDelayMs?: number;
  /** Per-try timeout: Slack gives up on a request after 3 s. */
  timeoutMs?: number;
}): SlackDelivery {
  const retries = o.retries ?? 3;
  const timeoutMs = o.timeoutMs ?? 3_000;
  const post = async (
    url: string,
    body: string,
    type: 'application/json' | 'application/x-www-form-urlencoded',
    extra: Record<string, string> = {},
  ): Promise<DeliveryTry> => {
    const at = Date.now();
    const timestamp = Math.floor(at / 1000);
    const signature = `v0=${createHmac('sha256', o.signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': type,
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': signature,
          ...extra,
        },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.arrayBuffer();
      return { url, at, status: res.status };
    } catch (err) {
      return { url, at, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
    }
  };

  return {
    async mention(pick, m) {
      const threadTs = newTs();
      const event = createMention({ text: m.text, user: m.user, channel: m.channel, ts: threadTs }, o.slack.botUserId);
      const body = eventEnvelope(event, o.slack.botUserId);
      const tries: DeliveryTry[] = [];
      for (let n = 0; n <= retries; n++) {
        const url = pick();
        if (url !== undefined) {
          const retry: Record<string, string> =
            n === 0 ? {} : { 'x-slack-retry-num': String(n), 'x-slack-retry-reason': 'http_error' };
          const t = await post(url, body, 'application/json', retry);
          tries.push(t);
          if (t.status === 200) return { ok: true, tries, threadTs };
        }
        await new Promise((r) => setTimeout(r, o.retryDelayMs ?? 300));
      }
      return { ok: false, tries, threadTs };
    },
    async press(pick, message, action, p = {}) {
      const url = pick();
      if (url === undefined) return { ok: false, tries: [] };
      const payload = createBlockAction({
        user: p.user ?? 'U0ADA',
        actionId: `steward.${action}`,
        value: p.value ?? buttonOf(message, action)?.value ?? '',
        channel: message.channel,
        messageTs: message.ts,
        threadTs: message.threadTs,
        triggerId: o.slack.newTriggerId(),
        botUserId: o.slack.botUserId,
      });
      const t = await post(url, interactionBody(payload), 'application/x-www-form-urlencoded');
      return { ok: t.status === 200, tries: [t] };
    },
    async openHome(pick, h = {}) {
      const url = pick();
      if (url === undefined) return { ok: false, tries: [] };
      const body = eventEnvelope(createAppHomeOpened({ user: h.user }), o.slack.botUserId);
      const t = await post(url, body, 'application/json');
      return { ok: t.status === 200, tries: [t] };
    },
    async chooseInHome(pick, action, value, h = {}) {
      const user = h.user ?? 'U0ADA';
      const view = o.slack.homeViews.get(user);
      if (!view) throw new Error(`${user} has no Home view to choose in`);
      const url = pick();
      if (url === undefined) return { ok: false, tries: [] };
      const payload = createHomeSelect({
        user,
        actionId: `steward.${action}`,
        value,
        view,
        triggerId: o.slack.newTriggerId(),
      });
      const t = await post(url, interactionBody(payload), 'application/x-www-form-urlencoded');
      return { ok: t.status === 200, tries: [t] };
    },
  };
}

/** Every bot message in a thread as it stands now, oldest first. */
export function threadMessages(slack: FakeSlack, threadTs: string): FakeMessage[] {
  return [...slack.messages.values()].filter((m) => m.threadTs === threadTs);
}

/** The run cards in a thread (messages that start with a header), oldest first: a restart may post a new one. */
export function cardsOf(slack: FakeSlack, threadTs: string): FakeMessage[] {
  return threadMessages(slack, threadTs).filter((m) => m.blocks[0]?.type === 'header');
}

/** The newest card in a thread, if any. */
export function cardOf(slack: FakeSlack, threadTs: string): FakeMessage | undefined {
  return cardsOf(slack, threadTs).at(-1);
}

/** The Steward button for `action` on a message, if it shows one now. */
export function buttonOf(message: FakeMessage, action: string): SlackButton | undefined {
  return message.blocks
    .flatMap((b) => (b.type === 'actions' ? (b.elements as SlackButton[]) : []))
    .find((b) => b.action_id === `steward.${action}`);
}

/** A report title as Steward renders it: `*✅ Report*`, `*⏹️ Report (stopped)*`… */
const REPORT_TITLE = /^\*\S+ Report(?: \((\w+)\))?\*/u;

/**
 * The reports Slack accepted in a thread, their status in order: posted whole (chat.postMessage), or streamed
 * (chat.startStream) and then made the report (the chat.update of that message that gave it the report's title).
 */
export function reportsIn(slack: FakeSlack, threadTs: string): string[] {
  const streamed = new Set(
    slack
      .callsOf('chat.startStream')
      .filter((c) => c.args.thread_ts === threadTs && c.response.ok === true)
      .map((c) => c.response.ts),
  );
  // A report is a message: posted whole, or streamed and then updated to the report. The same message updated again
  // (a process that took the run over finishing the report another posted) is still one report.
  const byMessage = new Map<string, string>();
  for (const c of slack.calls.filter((x) => x.response.ok === true)) {
    const posted = c.method === 'chat.postMessage' && c.args.thread_ts === threadTs;
    const ts = posted ? c.response.ts : c.args.ts;
    if (typeof ts !== 'string' || !(posted || (c.method === 'chat.update' && (streamed.has(ts) || byMessage.has(ts)))))
      continue;
    const m = REPORT_TITLE.exec(typeof c.args.text === 'string' ? c.args.text : '');
    if (m) byMessage.set(ts, m[1] ?? 'completed');
  }
  return [...byMessage.values()];
}

/** The text of every message Slack accepted in a thread (chat.postMessage), in order. */
export function postsIn(slack: FakeSlack, threadTs: string): string[] {
  return slack
    .callsOf('chat.postMessage')
    .filter((c) => c.args.thread_ts === threadTs && c.response.ok === true)
    .map((c) => (typeof c.args.text === 'string' ? c.args.text : ''));
}

/** Ephemeral notices Slack accepted in a thread since `since` (refusals of a button press land here). */
export function ephemeralsIn(slack: FakeSlack, threadTs: string, since = 0): string[] {
  return slack
    .callsOf('chat.postEphemeral')
    .filter((c) => c.args.thread_ts === threadTs && c.at >= since && c.response.ok === true)
    .map((c) => (typeof c.args.text === 'string' ? c.args.text : ''));
}
