/**
 * The Slack side of the shared chat scenarios (test/chat/chat.ts): the real Bolt app over the fake Slack
 * (test/e2e/slack-harness.ts). A request is a mention that opens its thread; a press is a signed block action; a
 * form is a modal; private answers are ephemeral messages to the presser in the card's thread.
 */
import { allTexts } from '../bot/slack/fixtures.ts';
import type { FakeMessage } from '../fakes/fake-slack-server.ts';
import { pickBreakpoints, pickedSteps } from '../e2e/slack-controls.ts';
import { messageText, privateCommand, startSlackHarness, type SlackHarness } from '../e2e/slack-harness.ts';
import { createBlockAction, createViewSubmission, interactionBody } from '../e2e/slack-requests.ts';
import type { Action, Chat, ChatOptions, Shown, Who } from './chat.ts';

/** The Slack chat, with its harness for the checks only Slack has. */
export interface SlackChat extends Chat {
  readonly h: SlackHarness;
}

const USERS: Record<Who, string> = { ada: 'U0ADA', bob: 'U0BOB', boss: 'U0BOSS' };

// Slack's action ids (`steward.<id>`) where they differ from the shared names.
const SLACK_ACTIONS: Partial<Record<Action, string>> = { suggested: 'take-suggestions' };
const NAMES = new Map(Object.entries(SLACK_ACTIONS).map(([action, id]) => [id, action]));

const keyOf = (m: FakeMessage) => `${m.channel}:${m.ts}`;
type Element = { action_id?: string; type?: string; text?: { text?: string } };
const elementsOf = (m: FakeMessage) =>
  (m.blocks as { type?: string; elements?: Element[] }[])
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements ?? []);
const show = (m: FakeMessage): Shown => ({
  id: keyOf(m),
  text: messageText(m),
  actions: elementsOf(m).map((e) => {
    const id = (e.action_id ?? '').replace(/^steward\./, '');
    return NAMES.get(id) ?? id;
  }),
  picked: picked(m),
  labels: elementsOf(m)
    .filter((e) => e.type === 'button')
    .map((e) => e.text?.text ?? ''),
});
const textOf = (args: Record<string, unknown>) =>
  [typeof args.text === 'string' ? args.text : '', ...allTexts(args.blocks ?? [])].filter(Boolean).join('\n');

type FormElement = {
  type: string;
  initial_value?: string;
  initial_option?: { value: string };
  initial_options?: { value: string }[];
  options?: { text: { text: string }; value: string }[];
};
type FormBlock = { type: string; block_id?: string; label?: { text: string }; element?: FormElement };

/** A modal's state as Slack sends it on submission: what the person entered by label, else what the form showed. */
function formState(blocks: FormBlock[], values: Record<string, string>): Record<string, Record<string, unknown>> {
  const state: Record<string, Record<string, unknown>> = {};
  for (const b of blocks) {
    if (b.type !== 'input' || !b.block_id || !b.element) continue;
    const e = b.element;
    const given = b.label ? values[b.label.text] : undefined;
    const byLabel = (text: string) => e.options?.find((o) => o.text.text === text || o.value === text);
    if (e.type === 'plain_text_input')
      state[b.block_id] = { value: { type: e.type, value: given ?? e.initial_value ?? null } };
    else if (e.type === 'static_select') {
      const option = given !== undefined ? byLabel(given) : e.initial_option;
      state[b.block_id] = { value: { type: e.type, selected_option: option ?? null } };
    } else if (e.type === 'multi_static_select') {
      const options =
        given !== undefined ? given.split(',').flatMap((t) => byLabel(t.trim()) ?? []) : (e.initial_options ?? []);
      state[b.block_id] = { value: { type: e.type, selected_options: options } };
    }
  }
  return state;
}

/** A private (ephemeral) message as shown: its id is its call's place, for `pressPrivate`. */
function showEphemeral(args: Record<string, unknown>, index: number): Shown {
  const elements = ((args.blocks ?? []) as { elements?: Element[] }[]).flatMap((b) => b.elements ?? []);
  return {
    id: `ephemeral:${index}`,
    text: textOf(args),
    actions: elements.map((e) => (e.action_id ?? '').replace(/^steward\./, '')),
    labels: elements.filter((e) => e.type === 'button').map((e) => e.text?.text ?? ''),
    picked: [],
  };
}

/** The steps a card's picker shows picked (none where it has no controls row, as a finished card). */
function picked(m: FakeMessage): string[] {
  try {
    return pickedSteps(m);
  } catch {
    return [];
  }
}

/** Starts a Slack stage (the real Bolt app over the fake Slack) for the shared scenarios. */
export async function slackChat(options: ChatOptions): Promise<SlackChat> {
  const h = await startSlackHarness(options);
  const message = (s: Shown) => {
    const found = h.slack.messages.get(s.id);
    if (!found) throw new Error(`no message ${s.id}`);
    return found;
  };
  const cards = (thread: string) =>
    [...h.slack.messages.values()].filter((m) => m.threadTs === thread && m.blocks[0]?.type === 'header');
  return {
    platform: 'slack',
    h,
    llm: h.llm,
    db: h.db,
    get store() {
      return h.store;
    },
    get steward() {
      return h.steward;
    },
    idOf: (who) => USERS[who],
    bold: (text) => `*${text}*`,
    assistant: (name) => `Assistant *${name}*`,
    mention: (text, as = 'ada') => h.mention(text, USERS[as]),
    reply: (thread, text, as = 'ada') => h.reply(thread, text, USERS[as]),
    card: (thread) => show(h.card(thread)),
    cards: (thread) => cards(thread).map(show),
    replies: (thread) => h.replies(thread).map(show),
    async press(shown, action, as = 'ada') {
      const m = message(shown);
      const from = h.slack.calls.length;
      const status = await h.press(m, SLACK_ACTIONS[action] ?? action, { user: USERS[as] });
      if (status !== 200) throw new Error(`Slack's press of ${action} was answered ${status}`);
      return {
        id: String(from),
        privately: () =>
          h.slack.calls
            .slice(from)
            .filter((c) => c.method === 'chat.postEphemeral' && c.args.user === USERS[as])
            // Told where it was pressed: in the card's thread.
            .filter((c) => c.args.channel === m.channel && c.args.thread_ts === (m.threadTs ?? m.ts))
            .map((c) => textOf(c.args)),
      };
    },
    pick: async (shown, stepIds, as = 'ada') =>
      void (await pickBreakpoints(h, message(shown), stepIds, { user: USERS[as] })),
    submitAmend: async (text, as = 'ada') => {
      const status = await h.submitAmend(text, USERS[as]);
      if (status !== 200) throw new Error(`Slack's amendment was answered ${status}`);
    },
    formsOpened: () => h.slack.callsOf('views.open').length,
    edits: (shown) => {
      const m = message(shown);
      return h.slack.calls
        .filter((c) => c.method === 'chat.update' && c.args.ts === m.ts && c.args.channel === m.channel)
        .map((c) => ({ at: c.at, text: textOf(c.args) }));
    },
    told: (as) =>
      h.slack.calls
        .map((c, i) => ({ c, i }))
        .filter(({ c }) => c.method === 'chat.postEphemeral' && c.args.user === USERS[as])
        .map(({ c, i }) => showEphemeral(c.args, i)),
    async pressPrivate(shown, button, as = 'ada') {
      const call = h.slack.calls[Number(shown.id.replace(/^ephemeral:/, ''))];
      if (!call || call.method !== 'chat.postEphemeral') throw new Error(`no private message ${shown.id}`);
      const elements = (call.args.blocks as { elements?: { action_id?: string; value?: string }[] }[]).flatMap(
        (b) => b.elements ?? [],
      );
      const pressed = elements.find((e) => e.action_id === `steward.${button}`);
      if (!pressed) throw new Error(`no ${button} on ${shown.id}`);
      const payload = createBlockAction({
        user: USERS[as],
        actionId: `steward.${button}`,
        value: pressed.value ?? '',
        channel: String(call.args.channel),
        messageTs: '1700000000.000099',
        ...(typeof call.args.thread_ts === 'string' ? { threadTs: call.args.thread_ts } : {}),
        triggerId: h.slack.newTriggerId(),
        botUserId: h.slack.botUserId,
      });
      // A press on an ephemeral message: its container says so, and it carries no message.
      const { message: _none, ...ephemeral } = { ...payload, container: { ...payload.container, is_ephemeral: true } };
      const from = h.slack.calls.length;
      const status = (await h.post(interactionBody(ephemeral), 'application/x-www-form-urlencoded')).status;
      if (status !== 200) throw new Error(`Slack's press of ${button} was answered ${status}`);
      await h.channel.settled();
      return h.slack.calls
        .slice(from)
        .filter((c) => c.method === 'chat.postEphemeral' && c.args.user === USERS[as])
        .map((c) => textOf(c.args));
    },
    async pressQuestion(shown, button, as = 'ada') {
      const m = message(shown);
      const from = h.slack.calls.length;
      const status = await h.press(m, `question.${button}`, { user: USERS[as] });
      if (status !== 200) throw new Error(`Slack's press of ${button} was answered ${status}`);
      return h.slack.calls
        .slice(from)
        .filter((c) => c.method === 'chat.postEphemeral' && c.args.user === USERS[as])
        .map((c) => textOf(c.args));
    },
    async answerQuestion(shown, values, as = 'ada') {
      const from = h.slack.calls.length;
      const opened = h.slack.callsOf('views.open').length;
      const told = await (this as Chat).pressQuestion(shown, 'answer', as);
      const open = h.slack.callsOf('views.open');
      if (open.length === opened) return told;
      const view = open.at(-1)!.args.view as { blocks: FormBlock[] };
      const payload = createViewSubmission({ user: USERS[as], view, values: formState(view.blocks, values) });
      const res = await h.post(interactionBody(payload), 'application/x-www-form-urlencoded');
      if (res.status !== 200) throw new Error(`Slack's form submission was answered ${res.status}`);
      const body = await res.text();
      await h.channel.settled();
      const errors = body ? Object.values((JSON.parse(body) as { errors?: Record<string, string> }).errors ?? {}) : [];
      const privately = h.slack.calls
        .slice(from)
        .filter((c) => c.method === 'chat.postEphemeral' && c.args.user === USERS[as])
        .map((c) => textOf(c.args));
      return [...privately, ...errors];
    },
    async command(text, as) {
      const from = h.slack.calls.length;
      const texts = await privateCommand(h, text, USERS[as]);
      // Answered privately: every answer to the command's response_url is ephemeral.
      const open = h.slack.calls
        .slice(from)
        .filter((c) => c.method === 'response_url' && c.args.response_type !== 'ephemeral');
      if (open.length > 0) throw new Error(`/steward ${text} answered for everyone: ${JSON.stringify(open[0]!.args)}`);
      return texts;
    },
    posted: () => h.slack.callsOf('chat.postMessage').length,
    refused: () =>
      h.slack.calls.filter((c) => c.response.ok !== true).map((c) => `${c.method}: ${JSON.stringify(c.response)}`),
    waitFor: (what, check, timeoutMs) => h.waitFor(what, check, timeoutMs),
    close: () => h.close(),
  };
}
