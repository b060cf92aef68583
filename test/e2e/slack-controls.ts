/**
 * Presses on the card's steering controls (menus, the breakpoint picker, private messages' buttons) and the edit
 * modal's submission, posted to the real Bolt app as Slack posts them: signed `payload=` forms.
 */
import type { FakeMessage, SlackCall } from '../fakes/fake-slack-server.ts';
import type { SlackHarness } from './slack-harness.ts';
import { createBlockAction, createViewSubmission, interactionBody } from './slack-requests.ts';

type Obj = Record<string, unknown>;
const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });

/** The controls row of a card as it is now: its block id and elements. */
export function controlsRow(card: FakeMessage): { blockId: string; elements: Obj[] } {
  const row = card.blocks.find((b) => b.type === 'actions' && String(b.block_id).startsWith('steward.controls'));
  if (!row) throw new Error('the card has no controls row');
  return { blockId: String(row.block_id), elements: row.elements as Obj[] };
}

/** The step ids the card's breakpoint picker shows as picked. */
export function pickedSteps(card: FakeMessage): string[] {
  const picker = controlsRow(card).elements.find((e) => e.action_id === 'steward.breakpoints');
  return ((picker?.initial_options as Obj[] | undefined) ?? []).map((o) => String(o.value));
}

/** Picks exactly these steps in the card's breakpoint picker (Slack sends the whole new selection); `blockId` as drawn. */
export function pickBreakpoints(
  h: SlackHarness,
  card: FakeMessage,
  stepIds: string[],
  o: { user?: string; blockId?: string } = {},
) {
  const user = o.user ?? 'U0ADA';
  const action = {
    type: 'multi_static_select',
    action_id: 'steward.breakpoints',
    block_id: o.blockId ?? controlsRow(card).blockId,
    selected_options: stepIds.map(option),
    action_ts: String(Date.now() / 1000),
  };
  return postAction(h, onCard(h, card, user), action);
}

/** Chooses an item of the card's overflow menu. */
export function chooseMore(h: SlackHarness, card: FakeMessage, choice: 'history' | 'plan' | 'help', user = 'U0ADA') {
  const action = {
    type: 'overflow',
    action_id: 'steward.more',
    block_id: controlsRow(card).blockId,
    selected_option: option(choice),
    action_ts: String(Date.now() / 1000),
  };
  return postAction(h, onCard(h, card, user), action);
}

/**
 * Presses the control `actionId` on a private (ephemeral) message Steward sent: a button, or a select set to
 * `choose`. Slack's payload for an ephemeral message has no `message`; its container says where it was.
 */
export function pressPrivate(h: SlackHarness, sent: SlackCall, actionId: string, choose?: string) {
  const elements = (sent.args.blocks as Obj[]).flatMap((b) => [
    ...((b.elements as Obj[] | undefined) ?? []),
    ...(b.accessory ? [b.accessory as Obj] : []),
  ]);
  const element = elements.find((e) => e.action_id === actionId);
  if (!element) throw new Error(`no ${actionId} on that private message`);
  const channel = String(sent.args.channel);
  const threadTs = sent.args.thread_ts as string | undefined;
  const payload = base(h, { channel, messageTs: String(sent.response.message_ts), threadTs }, String(sent.args.user));
  delete payload.message;
  payload.container = {
    type: 'message',
    message_ts: sent.response.message_ts,
    channel_id: channel,
    is_ephemeral: true,
    thread_ts: threadTs,
  };
  const action =
    element.type === 'button'
      ? { type: 'button', action_id: actionId, block_id: 'b', value: element.value, text: element.text }
      : { type: element.type, action_id: actionId, block_id: 'b', selected_option: option(choose ?? '') };
  return postAction(h, payload, { ...action, action_ts: String(Date.now() / 1000) });
}

/** Submits the edit modal opened last with this text; resolves with the HTTP status, Slack's answer and its time. */
export async function submitEdit(
  h: SlackHarness,
  text: string,
  user = 'U0ADA',
): Promise<{ status: number; answer: Obj | null; ms: number; view: Obj }> {
  const opened = h.slack.callsOf('views.open').filter((c) => (c.args.view as Obj).callback_id === 'steward.edit');
  const view = opened.at(-1)?.args.view as Obj | undefined;
  if (!view) throw new Error('no edit modal was opened');
  const payload = createViewSubmission({
    user,
    view,
    values: { plan: { json: { type: 'plain_text_input', value: text } } },
  });
  const started = Date.now();
  const res = await h.post(interactionBody(payload), 'application/x-www-form-urlencoded');
  const body = await res.text();
  const ms = Date.now() - started;
  await h.channel.settled();
  return { status: res.status, answer: body ? (JSON.parse(body) as Obj) : null, ms, view };
}

/** Submits the step-by-step edit modal opened last with these block values; as `submitEdit`. */
export async function submitSteps(
  h: SlackHarness,
  values: Record<string, Record<string, unknown>>,
  user = 'U0ADA',
): Promise<{ status: number; answer: Obj | null; view: Obj }> {
  const view = openStepsView(h);
  if (!view) throw new Error('no step-by-step edit modal was opened');
  const payload = createViewSubmission({ user, view, values });
  const res = await h.post(interactionBody(payload), 'application/x-www-form-urlencoded');
  const body = await res.text();
  await h.channel.settled();
  return { status: res.status, answer: body ? (JSON.parse(body) as Obj) : null, view };
}

/** The step-by-step edit modal shown last (opened, or replaced by another page), as Slack answered it. */
export function openStepsView(h: SlackHarness): Obj | undefined {
  const shown = h.slack.calls.filter(
    (c) =>
      (c.method === 'views.open' || c.method === 'views.update') &&
      c.response.ok === true &&
      (c.args.view as Obj).callback_id === 'steward.edit-steps',
  );
  return shown.at(-1)?.response.view as Obj | undefined;
}

/** Chooses the page starting at `stepId` in the menu of the step-by-step edit modal shown last. */
export async function chooseStepsPage(h: SlackHarness, stepId: string, user = 'U0ADA'): Promise<number> {
  const view = openStepsView(h);
  if (!view) throw new Error('no step-by-step edit modal was opened');
  const payload = {
    ...base(h, { channel: 'unused', messageTs: 'unused' }, user),
    container: { type: 'view', view_id: view.id },
    channel: undefined,
    message: undefined,
    view,
  };
  const action = {
    type: 'static_select',
    action_id: 'steward.edit-steps-page',
    block_id: 'pages',
    selected_option: { text: { type: 'plain_text', text: stepId }, value: stepId },
    action_ts: String(Date.now() / 1000),
  };
  return postAction(h, payload, action);
}

/** The text of a private message. */
export function privateText(call: SlackCall): string {
  return JSON.stringify(call.args.blocks);
}

function onCard(h: SlackHarness, card: FakeMessage, user: string): Obj {
  return base(h, { channel: card.channel, messageTs: card.ts, threadTs: card.threadTs }, user);
}

function base(h: SlackHarness, at: { channel: string; messageTs: string; threadTs?: string }, user: string): Obj {
  return createBlockAction({
    user,
    actionId: 'unused',
    value: 'unused',
    ...at,
    triggerId: h.slack.newTriggerId(),
    botUserId: h.slack.botUserId,
  });
}

async function postAction(h: SlackHarness, payload: Obj, action: Obj): Promise<number> {
  const res = await h.post(interactionBody({ ...payload, actions: [action] }), 'application/x-www-form-urlencoded');
  await h.channel.settled();
  return res.status;
}
