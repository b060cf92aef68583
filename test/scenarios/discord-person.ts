/**
 * A person in Discord (test/scenarios/person.ts): each request is a mention Steward answers in a thread of its own;
 * decisions are button presses on the newest message offering them, amendments and edits go through their modals,
 * breakpoints through the card's menu, status is a thread reply, workflows and Assistants are `/steward` commands.
 * What the person saw is every message Steward posted or edited, and every interaction answer, in order.
 */
import { startSharedAuditServer } from '../e2e/harness.ts';
import { startDiscordHarness, type DiscordProcess } from '../e2e/discord-harness.ts';
import type { FakeLlmScript } from '../fakes/fake-llm-server.ts';
import type { StoredMessage } from '../fakes/fake-discord-rest.ts';
import { waitUntil } from '../helpers/wait.ts';
import { README_DEFAULTS } from './console-stage.ts';
import { chatLooks } from './chat-looks.ts';
import { bodiesOf, isCard, kinds, modalInputs, showsRun, textOf, type Shown } from './discord-sights.ts';
import type { Cell } from './matrix.ts';
import type { Person } from './person.ts';
import { SAID } from './plans.ts';
import { seedCostlyStep, SPEND_HELD_SETTINGS } from './spend-held.ts';

const looks = chatLooks;

/** Starts a Discord stage for a cell (the real discord.js client over the fake Discord) and the person in it. */
export async function discordPerson(script: FakeLlmScript, cell?: Cell): Promise<Person> {
  const audit = await startSharedAuditServer();
  const capped = cell?.context === 'spendCapHeld';
  const h = await startDiscordHarness({
    db: 'postgres',
    servers: [audit.config()],
    script,
    settings: capped ? { ...README_DEFAULTS, ...SPEND_HELD_SETTINGS } : README_DEFAULTS,
    // Cards edited at most once a second, as in production: with no pause every change was its own edit, past
    // Discord's 5 edits per 5 s per channel (the fake's bucket), and the card offering Stop came late.
    minUpdateIntervalMs: 1_000,
    estimates: capped,
  });
  if (capped) await seedCostlyStep(h.db);
  const second = cell?.context === 'secondProcess' ? await startSecond() : undefined;
  /** Another Steward on the database and bot token; both start as the app does, recovering what needs an owner. */
  async function startSecond(): Promise<DiscordProcess> {
    const started = await h.startProcess('second');
    await h.steward.recover();
    return started;
  }
  const calls = () => audit.entries().filter((e) => e.type === 'call');
  let thread = '';
  /** The store owner of the process that took the cell's request (with a second process, either may). */
  let owner = '';
  // The messages that existed at each mark: what came after a mark is what is new since.
  const existed = new Map<number, Set<string>>();
  const bodies = (from: number): Shown[] => bodiesOf(h.discord.calls.slice(from));
  const transcript = (from: number) => bodies(from).map(textOf).join('\n');
  const offering = (kind: string): Promise<StoredMessage> =>
    waitUntil(
      `a message in the thread offering ${kind}`,
      () =>
        h.discord
          .messagesIn(thread)
          .filter((m) => h.buttons(m).includes(kind) || kinds(m.message as Shown).includes(kind))
          .at(-1),
      { timeoutMs: 20_000, details: () => transcript(0) },
    );
  const press = async (kind: string) => void (await h.press(await offering(kind), kind));
  const cardBodies = (from: number) => bodies(from).filter(isCard);
  /** Takes the thread of the run whose request starts with `request`, once stored, and the process that holds it. */
  const follow = async (request: string) => {
    const run = await waitUntil('the run to be stored', () =>
      h.db.db
        .selectFrom('runs')
        .select(['conversation_key', 'owner'])
        .where('request', 'like', `${request}%`)
        .orderBy('created_at', 'desc')
        .executeTakeFirst(),
    );
    thread = run.conversation_key.split(':')[1]!;
    owner = run.owner ?? '';
  };
  /** `/steward workflow <command>` in the cell's thread; resolves with its private answer once it matches. */
  const workflow = async (command: string, answer: RegExp) => {
    const id = await h.slash('workflow', { command }, { channelId: thread });
    await waitUntil(`the answer to "${command}"`, () => h.privateTexts(id).find((t) => answer.test(t)), {
      details: () => h.privateTexts(id).join('\n'),
    });
  };
  /** The process that does not hold the cell's run: it must neither call its tools nor show its cards or report. */
  const bystander = () => {
    if (!second) throw new Error('no second process');
    const main = { calls: h.calls, caller: undefined };
    if (owner === h.store.owner) return second;
    if (owner === second.store.owner) return main;
    throw new Error(`the cell's run is held by neither process (${owner || 'nobody'})`);
  };
  return {
    llm: h.llm,
    audit,
    db: h.db,
    get store() {
      return h.store;
    },
    steward: () => h.steward,
    // Both processes get every event and the first to claim it acts, so the run is held by whichever took the
    // mention (the driver's "second process" is the other one): it alone calls the run's tools and shows its cards.
    other: second && {
      calls: () => bystander().calls.length,
      showedRun: () => bodiesOf(h.discord.calls.filter((c) => c.caller === bystander().caller)).some(showsRun),
    },
    reviewAll: async () => void (await h.slash('review', { preference: 'all' })),
    async askQuick() {
      await h.mention(SAID.quick);
      await waitUntil('the quick answer', () => looks('quickAnswer').test(transcript(0)));
    },
    async startOther() {
      await h.mention(SAID.other);
      await waitUntil('the other run to be running', () => calls().some((e) => e.name === 'sleep'));
    },
    async makeAssistant() {
      // Only approvers change Assistants: the boss sets ops up; Ada asks it. Ops may hand work on (the delegate
      // shape asked of ops), where the depth brake stops a third.
      for (const command of ['create ops "Operations"', 'ops grant audit allow', 'ops grant steward.delegate allow'])
        await h.slash('assistant', { command }, { user: h.boss });
    },
    async saveWorkflow() {
      await workflow(`save ${SAID.workflow}`, /Saved workflow "scenario" \(version 1\)/);
      await workflow(`workflow ${SAID.workflow} review every-fire`, /Each fire of "scenario" now waits for approval/);
    },
    async fire() {
      await h.slash('workflow', { command: `workflow ${SAID.workflow} run` }, { channelId: thread });
      // The fire's run talks where the saved run did; its card is the one the person acts on from now.
      await follow(SAID.fire);
    },
    async ask(_besides, assistant) {
      if (assistant) await h.slash('ask', { request: `${assistant}: ${SAID.request}` });
      else await h.mention(SAID.request);
      await follow(SAID.request);
    },
    mark() {
      const at = h.discord.calls.length;
      existed.set(at, new Set(h.discord.messages.keys()));
      return at;
    },
    async card(from) {
      const found = await waitUntil('a card offering Approve', () => cardBodies(from)[0], {
        timeoutMs: 20_000,
        details: () => transcript(0),
      });
      return `${textOf(found)}\n${kinds(found).join(' ')}`;
    },
    offersAmend: (card) => /\bamend\b/.test(card.split('\n').at(-1) ?? ''),
    // Cards posted (not edits of one already shown), e.g. the card shown again after a restart.
    cards: (from) => {
      const posts = h.discord.calls.slice(from).filter((c) => c.method === 'POST' && c.route.endsWith('/messages'));
      return bodiesOf(posts).filter(isCard).length;
    },
    waitSeen: async (what, from) =>
      void (await waitUntil(String(looks(what)), () => looks(what).test(transcript(from)), {
        timeoutMs: 20_000,
        details: () => transcript(0),
      })),
    seen: (what, from) => looks(what).test(transcript(from)),
    // Report messages in the cell's thread since `from`, as they stand (a streamed report is one message, edited).
    reports: (from) =>
      h.discord
        .messagesIn(thread)
        .filter((m) => !existed.get(from)?.has(m.message.id))
        .filter((m) => looks('report:any').test(textOf(m.message as Shown))).length,
    transcript,
    restart: () => h.restart(),
    approve: () => press('approve'),
    approveAsApprover: async () => void (await h.press(await offering('approve'), 'approve', { user: h.boss })),
    async amend(words) {
      // A card offers Amend (a modal); a running plan is amended in words, by a reply in its thread.
      if (!h.discord.messagesIn(thread).some((m) => h.buttons(m).includes('amend'))) return h.reply(thread, words);
      await h.press(await offering('amend'), 'amend');
      await h.submitModal({ 'amend-text': words });
    },
    async edit(steps, change) {
      await h.press(await offering('edit'), 'edit');
      const inputs = modalInputs(h.lastModal()?.components ?? []);
      if ('plan-json' in inputs) await h.submitModal({ 'plan-json': JSON.stringify({ steps }) });
      else {
        const key = `step:${change.stepId}`;
        await h.submitModal({ ...inputs, [key]: inputs[key]!.replace(change.from, change.to) });
      }
    },
    cancel: () => press(h.discord.messagesIn(thread).some((m) => h.buttons(m).includes('cancel')) ? 'cancel' : 'stop'),
    breakpoint: async (id) => void (await h.select(await offering('bp'), 'bp', [id])),
    continueRun: () => press('resume'),
    pause: () => press('pause'),
    resume: () => press('resume'),
    stop: () => press('stop'),
    askStatus: () => h.reply(thread, 'how is it going?'),
    history: () => press('history'),
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
