/**
 * A person in Slack (test/scenarios/person.ts): each request is a mention that opens its own thread; decisions are
 * button presses on the newest message offering them, amendments and edits go through their modals, status is a
 * thread reply and history the card's overflow menu. What the person saw is every message Steward posted or updated.
 */
import { allTexts } from '../bot/slack/fixtures.ts';
import { createAuditServer } from '../e2e/harness.ts';
import { chooseMore, pickBreakpoints, submitEdit } from '../e2e/slack-controls.ts';
import { privateCommand, startSlackHarness } from '../e2e/slack-harness.ts';
import type { FakeLlmScript } from '../fakes/fake-llm-server.ts';
import type { FakeMessage } from '../fakes/fake-slack-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { README_DEFAULTS } from './console-stage.ts';
import { chatLooks } from './chat-looks.ts';
import type { Person } from './person.ts';
import { SAID } from './plans.ts';

const SHOWN = new Set([
  'chat.postMessage',
  'chat.update',
  'chat.postEphemeral',
  'response_url',
  'chat.appendStream',
  'chat.stopStream',
  'chat.startStream',
]);

const looks = chatLooks;

const has = (m: { blocks?: unknown }, action: string) =>
  JSON.stringify(m.blocks ?? []).includes(`"action_id":"steward.${action}"`);

/** Starts a Slack stage for a cell (the real Bolt app over the fake Slack) and the person in it. */
export async function slackPerson(script: FakeLlmScript): Promise<Person> {
  const audit = createAuditServer();
  const h = await startSlackHarness({ db: 'postgres', servers: [audit.config()], script, settings: README_DEFAULTS });
  const calls = () => audit.entries().filter((e) => e.type === 'call');
  let thread = '';
  const shown = (from: number) => h.slack.calls.slice(from).filter((c) => SHOWN.has(c.method));
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const textOf = (args: Record<string, unknown>) =>
    [str(args.text), str(args.markdown_text), ...allTexts(args.blocks ?? [])].join('\n');
  const transcript = (from: number) =>
    shown(from)
      .map((c) => textOf(c.args))
      .join('\n');
  const inThread = () => [...h.slack.messages.values()].filter((m) => m.threadTs === thread || m.ts === thread);
  /** The newest message in the cell's thread offering `action`, once there is one (cards are updated as paced). */
  const offering = (action: string): Promise<FakeMessage> =>
    waitUntil(
      `a message in the thread offering ${action}`,
      () =>
        inThread()
          .filter((x) => has(x, action))
          .at(-1),
      {
        timeoutMs: 20_000,
        details: () => transcript(0),
      },
    );
  const press = async (action: string) => void (await h.press(await offering(action), action));
  const card = () => h.card(thread);
  const cardCalls = (from: number) =>
    shown(from).filter(
      (c) =>
        (c.method === 'chat.postMessage' || c.method === 'chat.update') &&
        has(c.args, 'approve') &&
        /revision \d+/.test(textOf(c.args)),
    );
  return {
    llm: h.llm,
    audit,
    db: h.db,
    store: h.store,
    steward: () => h.steward,
    reviewAll: async () => void (await privateCommand(h, 'review all', 'U0ADA')),
    async askQuick() {
      await h.mention(SAID.quick);
      await waitUntil('the quick answer', () => looks('quickAnswer').test(transcript(0)));
    },
    async startOther() {
      await h.mention(SAID.other);
      await waitUntil('the other run to be running', () => calls().some((e) => e.name === 'sleep'));
    },
    async makeAssistant() {
      // Only approvers change Assistants: the boss sets ops up; Ada asks it.
      for (const command of ['assistant create ops "Operations"', 'assistant ops grant audit allow'])
        await privateCommand(h, command, 'U0BOSS');
    },
    async ask(_besides, assistant) {
      thread = await h.mention(assistant ? `ask ${assistant}: ${SAID.request}` : SAID.request);
    },
    mark: () => h.slack.calls.length,
    async card(from) {
      const found = await waitUntil('a card offering Approve', () => cardCalls(from)[0], {
        timeoutMs: 20_000,
        details: () => transcript(0),
      });
      return textOf(found.args);
    },
    offersAmend: (card) => card.includes('steward.amend'),
    cards: (from) => cardCalls(from).length,
    waitSeen: async (what, from) =>
      void (await waitUntil(String(looks(what)), () => looks(what).test(transcript(from)), {
        timeoutMs: 20_000,
        details: () => transcript(0),
      })),
    seen: (what, from) => looks(what).test(transcript(from)),
    reports: (from) =>
      shown(from).filter((c) => /The work is over\./.test(textOf(c.args)) && c.method !== 'chat.update').length,
    transcript,
    approve: () => press('approve'),
    async amend(text) {
      // A card offers Amend (a modal); a running plan is amended in words, by a reply in its thread.
      if (!inThread().some((m) => has(m, 'amend'))) return h.reply(thread, text);
      await h.press(await offering('amend'), 'amend');
      await h.submitAmend(text);
    },
    async edit(steps) {
      await h.press(await offering('edit-plan'), 'edit-plan');
      await submitEdit(h, JSON.stringify({ steps }));
    },
    cancel: () => press(inThread().some((m) => has(m, 'cancel')) ? 'cancel' : 'stop'),
    breakpoint: async (id) => void (await pickBreakpoints(h, card(), [id])),
    continueRun: () => press('resume'),
    pause: () => press('pause'),
    resume: () => press('resume'),
    stop: () => press('stop'),
    askStatus: () => h.reply(thread, 'how is it going?'),
    history: async () => void (await chooseMore(h, card(), 'history')),
    newQuick: async () => void (await h.mention(SAID.quick)),
    async close() {
      try {
        await h.close();
      } finally {
        audit.remove();
      }
    },
  };
}
