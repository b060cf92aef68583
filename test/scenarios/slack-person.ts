/**
 * A person in Slack (test/scenarios/person.ts): each request is a mention that opens its own thread; decisions are
 * button presses on the newest message offering them, amendments and edits go through their modals, status is a
 * thread reply and history the card's overflow menu; Assistants and workflows are `/steward` commands. What the
 * person saw is every message Steward posted or updated (by the first process: a second one is only there).
 */
import { allTexts } from '../bot/slack/fixtures.ts';
import { startSharedAuditServer } from '../e2e/harness.ts';
import { chooseMore, pickBreakpoints, submitEdit } from '../e2e/slack-controls.ts';
import { privateCommand, startSlackHarness, type SlackHarness } from '../e2e/slack-harness.ts';
import type { FakeLlmScript } from '../fakes/fake-llm-server.ts';
import type { FakeMessage, SlackCall } from '../fakes/fake-slack-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { README_DEFAULTS } from './console-stage.ts';
import { chatLooks } from './chat-looks.ts';
import type { Cell } from './matrix.ts';
import type { Person } from './person.ts';
import { SAID } from './plans.ts';
import { seedCostlyStep, SPEND_HELD_SETTINGS } from './spend-held.ts';

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

/** The card of a run handed to an Assistant by a step of another run: Slack names the run whose step it is. */
const isChildCard = (m: FakeMessage) =>
  m.blocks[0]?.type === 'header' && /\(a step of run `/.test(allTexts(m.blocks).join('\n'));

/** Runs `/steward <text>` as `user` and fails unless its private answer says what `expected` matches. */
async function command(h: SlackHarness, text: string, user: string, expected: RegExp): Promise<void> {
  const answers = await privateCommand(h, text, user);
  if (!answers.some((a) => expected.test(a)))
    throw new Error(`/steward ${text} answered ${JSON.stringify(answers)}, not ${String(expected)}`);
}

/** Starts a Slack stage for a cell (the real Bolt app over the fake Slack) and the person in it. */
export async function slackPerson(script: FakeLlmScript, cell?: Cell): Promise<Person> {
  const audit = await startSharedAuditServer();
  const capped = cell?.context === 'spendCapHeld';
  const h = await startSlackHarness({
    db: 'postgres',
    servers: [audit.config()],
    script,
    settings: capped ? { ...README_DEFAULTS, ...SPEND_HELD_SETTINGS } : README_DEFAULTS,
    estimates: capped,
  });
  if (capped) await seedCostlyStep(h.db);
  const other = cell?.context === 'secondProcess' ? await h.startSecondProcess() : undefined;
  const calls = () => audit.entries().filter((e) => e.type === 'call');
  // The thread of the person's run: where they asked, or where a workflow's fire posted its card.
  let thread = '';
  /** Calls by the process Slack delivers to (the second process, if any, calls Slack with a token of its own). */
  const first = (c: SlackCall) => c.token !== other?.token;
  const shown = (from: number) => h.slack.calls.slice(from).filter((c) => SHOWN.has(c.method) && first(c));
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const textOf = (args: Record<string, unknown>) =>
    [str(args.text), str(args.markdown_text), ...allTexts(args.blocks ?? [])].join('\n');
  const transcript = (from: number) =>
    shown(from)
      .map((c) => textOf(c.args))
      .join('\n');
  const inThread = () => [...h.slack.messages.values()].filter((m) => m.threadTs === thread || m.ts === thread);
  /** Messages of the person's own run in its thread: not the card of a run it handed to ops, which shares it. */
  const ofRun = () => inThread().filter((m) => !isChildCard(m));
  /**
   * The newest message in the cell's thread offering `action`, once there is one (cards are updated as paced). Only
   * Approve is pressed on a handed-over run's card (which asks for it under review "all"); the rest act on the run.
   */
  const offering = (action: string): Promise<FakeMessage> =>
    waitUntil(
      `a message in the thread offering ${action}`,
      () => (action === 'approve' ? inThread() : ofRun()).filter((x) => has(x, action)).at(-1),
      {
        timeoutMs: 20_000,
        details: () => transcript(0),
      },
    );
  const press = async (action: string) => void (await h.press(await offering(action), action));
  /** The run's card as it is now: the newest in its thread (a restart posts it again, a fire after the saved run's). */
  const card = () => {
    const found = ofRun()
      .filter((m) => m.blocks[0]?.type === 'header')
      .at(-1);
    if (!found) throw new Error(`no card in thread ${thread}`);
    return found;
  };
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
    other: other && {
      calls: () => other.calls.length,
      // It hears no events: anything it posted or updated in Slack would be a card or report of the run.
      showedRun: () => h.slack.calls.some((c) => c.token === other.token && SHOWN.has(c.method)),
    },
    restart: () => h.restart(),
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
      await command(h, 'assistant create ops "Operations"', 'U0BOSS', /^Created the Assistant/);
      await command(h, 'assistant ops grant audit allow', 'U0BOSS', /"ops": allow/);
      // So that ops's own plan may hand work on (the delegate shape asked of ops): the depth brake stops a third.
      await command(
        h,
        'assistant ops grant steward.delegate allow',
        'U0BOSS',
        /"ops": allow the tool steward\.delegate/,
      );
    },
    async saveWorkflow() {
      // Typed in the channel of the run's thread: the save takes Ada's latest approved run there.
      await command(h, `save ${SAID.workflow}`, 'U0ADA', /^Saved workflow "scenario" \(version 1\)/);
      await command(h, `workflow ${SAID.workflow} review every-fire`, 'U0ADA', /Each fire of "scenario" now waits/);
    },
    async fire() {
      const from = h.slack.calls.length;
      await command(h, `workflow ${SAID.workflow} run`, 'U0ADA', /^Running "scenario" version 1 now/);
      // The fire's card goes where the saved run reported: the person follows it there.
      const posted = await waitUntil(
        "the fire's card",
        () =>
          shown(from).find(
            (c) =>
              c.method === 'chat.postMessage' &&
              (c.args.blocks as { type?: string }[] | undefined)?.[0]?.type === 'header',
          ),
        { timeoutMs: 20_000, details: () => transcript(0) },
      );
      thread = String(posted.args.thread_ts ?? posted.response.ts);
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
    approveAsApprover: async () => void (await h.press(await offering('approve'), 'approve', { user: 'U0BOSS' })),
    async amend(text) {
      // A card offers Amend (a modal); a running plan is amended in words, by a reply in its thread.
      if (!ofRun().some((m) => has(m, 'amend'))) return h.reply(thread, text);
      await h.press(await offering('amend'), 'amend');
      await h.submitAmend(text);
    },
    async edit(steps) {
      await h.press(await offering('edit-plan'), 'edit-plan');
      await submitEdit(h, JSON.stringify({ steps }));
    },
    cancel: () => press(ofRun().some((m) => has(m, 'cancel')) ? 'cancel' : 'stop'),
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
