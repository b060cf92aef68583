/**
 * The Discord side of the shared chat scenarios (test/chat/chat.ts): the real discord.js client over the fake Discord
 * (test/e2e/discord-harness.ts). A request is a mention Steward answers in a thread started on it; a press is a
 * component interaction; a form is a modal; private answers are ephemeral replies to the interaction.
 */
import type { APIUser } from 'discord.js';
import type { StoredMessage } from '../fakes/fake-discord-server.ts';
import { startDiscordHarness, shownText, type DiscordHarness } from '../e2e/discord-harness.ts';
import { textOf, type Shown as Body } from '../scenarios/discord-sights.ts';
import type { Action, Chat, ChatOptions, Shown, Who } from './chat.ts';

/** The Discord chat, with its harness for the checks only Discord has. */
export interface DiscordChat extends Chat {
  readonly h: DiscordHarness;
}

// Discord's custom ids carry a kind of their own where it differs from the shared name.
const KINDS: Partial<Record<Action, string>> = { 'ask-first': 'askfirst', 'save-workflow': 'wfsave' };
const ACTIONS = new Map(Object.entries(KINDS).map(([action, kind]) => [kind, action]));

const isCard = (m: StoredMessage) => (m.message.embeds ?? []).some((e) => e.author?.name?.includes('· revision'));

/** The labels of a message's buttons, rows flattened. */
function labelsOf(m: StoredMessage): string[] {
  const rows = (m.message.components ?? []) as { components?: { type: number; label?: string }[] }[];
  return rows.flatMap((r) => r.components ?? []).flatMap((c) => (c.type === 2 && c.label ? [c.label] : []));
}

/** The custom ids of a message's buttons, rows flattened. */
function customIdsOf(m: StoredMessage): string[] {
  const rows = (m.message.components ?? []) as { components?: { type: number; custom_id?: string }[] }[];
  return rows.flatMap((r) => r.components ?? []).flatMap((c) => (c.type === 2 && c.custom_id ? [c.custom_id] : []));
}

/** The step ids a message's breakpoint select shows as picked. */
function pickedOf(m: StoredMessage): string[] {
  const rows = (m.message.components ?? []) as {
    components?: { type: number; options?: { value: string; default?: boolean }[] }[];
  }[];
  const select = rows.flatMap((r) => r.components ?? []).find((c) => c.type === 3);
  return (select?.options ?? []).filter((o) => o.default).map((o) => o.value);
}

/** Starts a Discord stage (the real discord.js client over the fake Discord) for the shared scenarios. */
export async function discordChat(options: ChatOptions): Promise<DiscordChat> {
  const h = await startDiscordHarness(options);
  const users = (): Record<Who, APIUser> => ({ ada: h.ada, bob: h.bob, boss: h.boss });
  const show = (m: StoredMessage): Shown => ({
    id: m.message.id,
    text: shownText(m.message),
    actions: h.buttons(m).map((kind) => ACTIONS.get(kind) ?? kind),
    labels: labelsOf(m),
    picked: pickedOf(m),
  });
  const message = (s: Shown) => {
    const found = h.discord.messages.get(s.id);
    if (!found) throw new Error(`no message ${s.id}`);
    return found;
  };
  const fromBot = (thread: string) =>
    h.discord.messagesIn(thread).filter((m) => m.message.author.id === h.discord.botUser.id && !m.ephemeral);
  return {
    platform: 'discord',
    h,
    llm: h.llm,
    db: h.db,
    get store() {
      return h.store;
    },
    get steward() {
      return h.steward;
    },
    idOf: (who) => users()[who].id,
    bold: (text) => `**${text}**`,
    assistant: (name) => `**Assistant** ${name}`,
    mention: (text, as = 'ada') => h.mention(text, { author: users()[as] }),
    reply: (thread, text, as = 'ada') => h.reply(thread, text, { author: users()[as] }),
    card: (thread) => show(h.card(thread)),
    cards: (thread) => fromBot(thread).filter(isCard).map(show),
    replies: (thread) => h.replies(thread).map(show),
    async press(shown, action, as = 'ada') {
      const id = await h.press(message(shown), KINDS[action] ?? action, { user: users()[as] });
      return { id, privately: () => h.privateTexts(id) };
    },
    pick: async (shown, stepIds, as = 'ada') =>
      void (await h.select(message(shown), 'bp', stepIds, { user: users()[as] })),
    submitAmend: async (text, as = 'ada') => void (await h.submitModal({ 'amend-text': text }, { user: users()[as] })),
    formsOpened: () => h.discord.calls.filter((c) => (c.body as { type?: number } | null)?.type === 9).length,
    edits: (shown) =>
      h.discord
        .callsTo('PATCH', '/channels/:channel/messages/:message')
        .filter((c) => c.path.endsWith(shown.id))
        .map((c) => ({ at: c.at, text: textOf(c.body as Body) })),
    told(as) {
      const user = users()[as].id;
      const dm = h.discord.dmChannelOf(user);
      return [...h.discord.messages.values()]
        .filter((m) => m.message.author.id === h.discord.botUser.id)
        .filter((m) =>
          m.ephemeral
            ? h.discord.interaction(m.interactionId ?? '')?.userId === user
            : dm !== undefined && m.message.channel_id === dm,
        )
        .map((m) => ({ ...show(m), actions: customIdsOf(m) }));
    },
    async pressPrivate(shown, button, as = 'ada') {
      const m = message(shown);
      const prefix = button === 'connection-use' ? 'stwc:use:' : 'stwc:notme:';
      const customId = customIdsOf(m).find((id) => id.startsWith(prefix));
      if (!customId) throw new Error(`no ${button} on ${shown.id}`);
      const id = await h.press(m, button, { user: users()[as], customId });
      return h.waitFor(`the answer to ${button}`, () => h.privateTexts(id).length > 0 && h.privateTexts(id));
    },
    async pressQuestion(shown, button, as = 'ada') {
      const m = message(shown);
      const customId = customIdsOf(m).find((id) => id.startsWith(`stwq:${button}:`));
      if (!customId) throw new Error(`no ${button} on ${shown.id}`);
      const modals = h.discord.calls.filter((c) => (c.body as { type?: number } | null)?.type === 9).length;
      const id = await h.press(m, button, { user: users()[as], customId });
      return h.waitFor(`the answer to ${button}`, () => {
        const opened = h.discord.calls.filter((c) => (c.body as { type?: number } | null)?.type === 9).length;
        return (opened > modals || h.privateTexts(id).length > 0) && h.privateTexts(id);
      });
    },
    async answerQuestion(shown, values, as = 'ada') {
      const told: string[] = [];
      const modals = () => h.discord.calls.filter((c) => (c.body as { type?: number } | null)?.type === 9).length;
      let before = modals();
      told.push(...(await (this as Chat).pressQuestion(shown, 'answer', as)));
      // One modal per part; after each part but the last, Discord shows a Continue button privately.
      for (let part = 0; modals() > before && part < 20; part++) {
        before = modals();
        const form = h.lastModal()!;
        const inputs = (
          form.components as { components: { custom_id: string; label: string; value?: string }[] }[]
        ).map((row) => row.components[0]!);
        const fields = Object.fromEntries(inputs.map((i) => [i.custom_id, values[i.label] ?? i.value ?? '']));
        const id = await h.submitModal(fields, { user: users()[as] });
        const texts = await h.waitFor(
          'the answer to a form',
          () => h.privateTexts(id).length > 0 && h.privateTexts(id),
        );
        told.push(...texts);
        const reply = [...h.discord.messages.values()].find((m) => m.interactionId === id && m.ephemeral);
        const next = reply && customIdsOf(reply).find((c) => c.startsWith('stwq:answer:'));
        if (!reply || !next || !texts.some((t) => t.includes('is kept'))) break;
        await h.press(reply, 'continue', { user: users()[as], customId: next });
        await h.waitFor('the next part of the form', () => modals() > before);
      }
      return told;
    },
    async command(text, as) {
      const id = await h.slash(...slashOf(text), { user: users()[as] });
      return await h.waitFor(
        `the answer to /steward ${text}`,
        () => h.privateTexts(id).length > 0 && h.privateTexts(id),
      );
    },
    posted: () => [...h.discord.messages.values()].filter((m) => !m.ephemeral).length,
    refused: () => h.discord.calls.filter((c) => c.status >= 400).map((c) => `${c.method} ${c.path}: ${c.status}`),
    waitFor: (what, check, timeoutMs) => h.waitFor(what, check, timeoutMs),
    close: () => h.close(),
  };
}

/** `/steward <text>` as Discord's subcommand and options: the first word names the subcommand. */
function slashOf(text: string): [string, Record<string, string>] {
  const [word = 'help', ...rest] = text.split(' ');
  const more = rest.join(' ');
  switch (word) {
    case 'review':
      return ['review', { preference: more }];
    case 'suggestions':
      return ['suggestions', { offers: more }];
    case 'ask':
      return ['ask', { request: more }];
    case 'assistant':
      // The subcommand's name already says "assistant", so a person types what follows it.
      return ['assistant', { command: more }];
    case 'assistants':
      return ['assistant', { command: text }];
    case 'connections': {
      const [action, server] = rest;
      return ['connections', { ...(action && { action }), ...(server && { server }) }];
    }
    case 'save':
    case 'schedule':
    case 'workflow':
    case 'workflows':
    case 'fork':
      return ['workflow', { command: text }];
    default:
      return [word, {}];
  }
}
