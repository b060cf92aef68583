/**
 * Requests as Slack sends them to an app in HTTP mode: events as JSON, interactions as a form field `payload`,
 * each signed with v0 HMAC-SHA256 over `v0:<timestamp>:<body>` in `x-slack-signature`.
 * Builders take overrides (`createMention({ text })`) instead of copied JSON blobs.
 */
import { createHmac, randomBytes } from 'node:crypto';

/** The workspace the fixtures live in. */
export const TEAM = 'T0000001';
const APP = 'A0STEWARD';

let seq = 0;
/** A fresh Slack timestamp (`seconds.micros`), unique within the test process. */
export function newTs(): string {
  seq += 1;
  return `${Math.floor(Date.now() / 1000)}.${String(seq).padStart(6, '0')}`;
}

/** Posts a body to the app the way Slack does; `signature` overrides let tests forge bad or stale requests. */
export async function sendSigned(
  url: string,
  secret: string,
  body: string,
  contentType: 'application/json' | 'application/x-www-form-urlencoded',
  forge: { timestamp?: number; secret?: string } = {},
): Promise<Response> {
  const timestamp = forge.timestamp ?? Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', forge.secret ?? secret)
    .update(`v0:${timestamp}:${body}`)
    .digest('hex')}`;
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature,
    },
    body,
  });
}

/** An Events API envelope around an event. */
export function eventEnvelope(event: Record<string, unknown>, botUserId: string): string {
  return JSON.stringify({
    token: 'legacy-verification-token',
    team_id: TEAM,
    api_app_id: APP,
    event,
    type: 'event_callback',
    event_id: `Ev${randomBytes(5).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      { enterprise_id: null, team_id: TEAM, user_id: botUserId, is_bot: true, is_enterprise_install: false },
    ],
    is_ext_shared_channel: false,
  });
}

/** An app_mention event. */
export function createMention(
  o: { text: string; user?: string; channel?: string; ts?: string; threadTs?: string },
  botUserId: string,
) {
  const ts = o.ts ?? newTs();
  return {
    type: 'app_mention',
    user: o.user ?? 'U0ADA',
    text: `<@${botUserId}> ${o.text}`,
    ts,
    channel: o.channel ?? 'C0GENERAL',
    event_ts: ts,
    team: TEAM,
    ...(o.threadTs ? { thread_ts: o.threadTs } : {}),
  };
}

/** A message event (a reply in a thread when `threadTs` is given). */
export function createMessage(o: {
  text: string;
  user?: string;
  channel?: string;
  threadTs?: string;
  subtype?: string;
  botId?: string;
}) {
  const ts = newTs();
  return {
    type: 'message',
    channel_type: 'channel',
    user: o.user ?? 'U0ADA',
    text: o.text,
    ts,
    channel: o.channel ?? 'C0GENERAL',
    event_ts: ts,
    team: TEAM,
    ...(o.threadTs ? { thread_ts: o.threadTs, parent_user_id: 'U0ADA' } : {}),
    ...(o.subtype ? { subtype: o.subtype } : {}),
    ...(o.botId ? { bot_id: o.botId } : {}),
  };
}

/** A block_actions payload for a button pressed on a message. */
export function createBlockAction(o: {
  user: string;
  actionId: string;
  value: string;
  channel: string;
  messageTs: string;
  threadTs?: string;
  triggerId: string;
  botUserId: string;
}) {
  return {
    type: 'block_actions',
    user: { id: o.user, username: o.user.toLowerCase(), name: o.user.toLowerCase(), team_id: TEAM },
    api_app_id: APP,
    token: 'legacy-verification-token',
    container: {
      type: 'message',
      message_ts: o.messageTs,
      channel_id: o.channel,
      is_ephemeral: false,
      thread_ts: o.threadTs,
    },
    trigger_id: o.triggerId,
    team: { id: TEAM, domain: 'test' },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: o.channel, name: 'general' },
    message: {
      type: 'message',
      user: o.botUserId,
      ts: o.messageTs,
      thread_ts: o.threadTs,
      text: 'card',
      bot_id: 'BBOT0001',
    },
    state: { values: {} },
    response_url: 'https://hooks.slack.test/actions/T0000001/1/abc',
    actions: [
      {
        type: 'button',
        action_id: o.actionId,
        block_id: 'steward.card',
        text: { type: 'plain_text', text: 'x' },
        value: o.value,
        action_ts: String(Date.now() / 1000),
      },
    ],
  };
}

/** An app_home_opened event: a person opened the app's Home tab (or its Messages tab, `tab: 'messages'`). */
export function createAppHomeOpened(o: { user?: string; tab?: 'home' | 'messages'; view?: Record<string, unknown> }) {
  const user = o.user ?? 'U0ADA';
  return {
    type: 'app_home_opened',
    user,
    channel: `D${user.slice(1)}`,
    tab: o.tab ?? 'home',
    event_ts: newTs(),
    ...(o.view ? { view: o.view } : {}),
  };
}

/**
 * A block_actions payload for an option chosen in a static select on the app's Home view (`view` as views.publish
 * received it): the container is the view, and there is no channel or message.
 */
export function createHomeSelect(o: {
  user: string;
  actionId: string;
  value: string;
  view: Record<string, unknown>;
  triggerId: string;
}) {
  const viewId = typeof o.view.id === 'string' ? o.view.id : 'V0HOME';
  return {
    type: 'block_actions',
    user: { id: o.user, username: o.user.toLowerCase(), name: o.user.toLowerCase(), team_id: TEAM },
    api_app_id: APP,
    token: 'legacy-verification-token',
    container: { type: 'view', view_id: viewId },
    trigger_id: o.triggerId,
    team: { id: TEAM, domain: 'test' },
    enterprise: null,
    is_enterprise_install: false,
    view: { team_id: TEAM, app_id: APP, bot_id: 'BBOT0001', hash: '1.home', state: { values: {} }, ...o.view },
    actions: [
      {
        type: 'static_select',
        action_id: o.actionId,
        block_id: 'home',
        selected_option: { text: { type: 'plain_text', text: o.value }, value: o.value },
        action_ts: String(Date.now() / 1000),
      },
    ],
  };
}

/** A view_submission payload for a modal the app opened (`view` as views.open received it). */
export function createViewSubmission(o: {
  user: string;
  view: Record<string, unknown>;
  values: Record<string, Record<string, unknown>>;
}) {
  return {
    type: 'view_submission',
    team: { id: TEAM, domain: 'test' },
    user: { id: o.user, username: o.user.toLowerCase(), name: o.user.toLowerCase(), team_id: TEAM },
    api_app_id: APP,
    token: 'legacy-verification-token',
    trigger_id: `${Date.now()}.view`,
    view: {
      id: 'V0MODAL',
      team_id: TEAM,
      app_id: APP,
      bot_id: 'BBOT0001',
      hash: '1.abc',
      state: { values: o.values },
      ...o.view,
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}

/** An interaction payload as the form body Slack posts. */
export function interactionBody(payload: unknown): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** A direct message to the bot (`message.im`); in the DM's thread when `threadTs` is given. */
export function createDirectMessage(o: {
  text: string;
  user?: string;
  channel?: string;
  ts?: string;
  threadTs?: string;
}) {
  const ts = o.ts ?? newTs();
  return {
    type: 'message',
    channel_type: 'im',
    user: o.user ?? 'U0ADA',
    text: o.text,
    ts,
    channel: o.channel ?? 'D0ADA',
    event_ts: ts,
    team: TEAM,
    ...(o.threadTs ? { thread_ts: o.threadTs, parent_user_id: o.user ?? 'U0ADA' } : {}),
  };
}

/** A slash command as the form body Slack posts (`command=/steward&text=…`). */
export function slashCommandBody(o: {
  text: string;
  user?: string;
  channel?: string;
  responseUrl: string;
  triggerId: string;
}): string {
  const user = o.user ?? 'U0ADA';
  return new URLSearchParams({
    token: 'legacy-verification-token',
    team_id: TEAM,
    team_domain: 'test',
    channel_id: o.channel ?? 'C0GENERAL',
    channel_name: 'general',
    user_id: user,
    user_name: user.toLowerCase(),
    command: '/steward',
    text: o.text,
    api_app_id: APP,
    is_enterprise_install: 'false',
    response_url: o.responseUrl,
    trigger_id: o.triggerId,
  }).toString();
}

/**
 * A person opened a new thread with Steward in Slack's AI app split view (`assistant_thread_started`; the shape is
 * @slack/types' AssistantThreadStartedEvent): the thread lives in their DM with the app.
 */
export function createAssistantThreadStarted(o: { user?: string; channel?: string; threadTs?: string; from?: string }) {
  const threadTs = o.threadTs ?? newTs();
  return {
    type: 'assistant_thread_started',
    assistant_thread: {
      user_id: o.user ?? 'U0ADA',
      context: { channel_id: o.from ?? 'C0GENERAL', team_id: TEAM, enterprise_id: null },
      channel_id: o.channel ?? 'D0ADA',
      thread_ts: threadTs,
    },
    event_ts: threadTs,
  };
}

/**
 * A message shortcut (`message_action`, https://api.slack.com/reference/interaction-payloads/shortcuts): `user` chose
 * one of the app's shortcuts from the ⋯ menu of a message in `channel`.
 */
export function createMessageShortcut(o: {
  callbackId: string;
  user?: string;
  channel?: string;
  triggerId: string;
  message: { ts: string; text: string; user?: string; thread_ts?: string };
}) {
  const user = o.user ?? 'U0ADA';
  return {
    type: 'message_action',
    token: 'legacy-verification-token',
    action_ts: String(Date.now() / 1000),
    team: { id: TEAM, domain: 'test' },
    user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: TEAM },
    channel: { id: o.channel ?? 'C0GENERAL', name: 'general' },
    is_enterprise_install: false,
    enterprise: null,
    callback_id: o.callbackId,
    trigger_id: o.triggerId,
    response_url: 'https://hooks.slack.test/app/T0000001/1/abc',
    message_ts: o.message.ts,
    message: { type: 'message', user: o.message.user ?? 'U0BOB', ...o.message },
  };
}
