/**
 * A person in Discord (test/scenarios/person.ts): each request is a mention Steward answers in a thread of its own;
 * decisions are button presses on the newest message offering them, amendments and edits go through their modals,
 * breakpoints through the card's menu, status is a thread reply. What the person saw is every message Steward posted
 * or edited, and every interaction answer, in order.
 */
import type { APIEmbed } from 'discord.js';
import { parseCustomId } from '../../src/bot/discord/discord-actions.ts';
import { createAuditServer } from '../e2e/harness.ts';
import { shownText, startDiscordHarness } from '../e2e/discord-harness.ts';
import type { FakeLlmScript } from '../fakes/fake-llm-server.ts';
import type { StoredMessage } from '../fakes/fake-discord-rest.ts';
import { waitUntil } from '../helpers/wait.ts';
import { README_DEFAULTS } from './console-stage.ts';
import { chatLooks } from './chat-looks.ts';
import type { Person } from './person.ts';
import { SAID } from './plans.ts';

const looks = chatLooks;

type Shown = { content?: string; embeds?: APIEmbed[]; components?: unknown[] };

/** The kinds of the buttons and menus in a message body. */
function kinds(body: Shown): string[] {
  const rows = (body.components ?? []) as Array<{ components?: Array<{ custom_id?: string }> }>;
  return rows.flatMap((r) => r.components ?? []).map((c) => parseCustomId(c.custom_id)?.kind ?? '?');
}

/** Starts a Discord stage for a cell (the real discord.js client over the fake Discord) and the person in it. */
export async function discordPerson(script: FakeLlmScript): Promise<Person> {
  const audit = createAuditServer();
  const h = await startDiscordHarness({
    db: 'postgres',
    servers: [audit.config()],
    script,
    settings: README_DEFAULTS,
    minUpdateIntervalMs: 0,
  });
  const calls = () => audit.entries().filter((e) => e.type === 'call');
  let thread = '';
  const bodies = (from: number): Shown[] =>
    h.discord.calls.slice(from).flatMap((c) => {
      const body = c.body as { data?: Shown } & Shown;
      const m = body?.data ?? body;
      return m && (m.content || m.embeds) ? [m] : [];
    });
  const text = (m: Shown) => shownText({ content: m.content ?? '', embeds: m.embeds ?? [] });
  const transcript = (from: number) => bodies(from).map(text).join('\n');
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
  const cardBodies = (from: number) =>
    bodies(from).filter((b) => kinds(b).includes('approve') && /revision \d+/.test(text(b)));
  return {
    llm: h.llm,
    audit,
    db: h.db,
    store: h.store,
    steward: () => h.steward,
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
      // Only approvers change Assistants: the boss sets ops up; Ada asks it.
      for (const command of ['create ops "Operations"', 'ops grant audit allow'])
        await h.slash('assistant', { command }, { user: h.boss });
    },
    async ask(_besides, assistant) {
      if (!assistant) return void (thread = await h.mention(SAID.request));
      await h.slash('ask', { request: `${assistant}: ${SAID.request}` });
      const run = await waitUntil('the run asked of the Assistant', () =>
        h.db.db.selectFrom('runs').select('conversation_key').where('request', '=', SAID.request).executeTakeFirst(),
      );
      thread = run.conversation_key.split(':')[1]!;
    },
    mark: () => h.discord.calls.length,
    async card(from) {
      const found = await waitUntil('a card offering Approve', () => cardBodies(from)[0], {
        timeoutMs: 20_000,
        details: () => transcript(0),
      });
      return `${text(found)}\n${kinds(found).join(' ')}`;
    },
    offersAmend: (card) => /\bamend\b/.test(card.split('\n').at(-1) ?? ''),
    cards: (from) => cardBodies(from).length,
    waitSeen: async (what, from) =>
      void (await waitUntil(String(looks(what)), () => looks(what).test(transcript(from)), {
        timeoutMs: 20_000,
        details: () => transcript(0),
      })),
    seen: (what, from) => looks(what).test(transcript(from)),
    // Report messages in the cell's thread as they stand (a streamed report is one message, edited as it grows).
    reports: () =>
      h.discord.messagesIn(thread).filter((m) => /The work is over\./.test(text(m.message as Shown))).length,
    transcript,
    approve: () => press('approve'),
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

/** The text inputs of a modal, by custom id, with their prefilled values. */
function modalInputs(components: unknown[]): Record<string, string> {
  const inputs: Record<string, string> = {};
  const visit = (c: unknown) => {
    if (!c || typeof c !== 'object') return;
    const o = c as { type?: number; custom_id?: string; value?: string; components?: unknown[]; component?: unknown };
    if (o.type === 4 && o.custom_id) inputs[o.custom_id] = o.value ?? '';
    for (const child of o.components ?? []) visit(child);
    if (o.component) visit(o.component);
  };
  for (const c of components) visit(c);
  return inputs;
}
