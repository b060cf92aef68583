/**
 * Discord end-to-end harness: the real discord.js client (gateway and REST) against the local fake Discord, the real
 * engine, store, MCP servers from npm and the fake LLM. Ada (the fake's default member) asks; Bob is a bystander;
 * Boss is a configured approver by id, and anyone with the Ops role is an approver by role.
 */
import { Events, type APIMessage, type APIUser } from 'discord.js';
import { DiscordChannel } from '../../src/bot/discord/discord-channel.ts';
import { parseCustomId } from '../../src/bot/discord/discord-actions.ts';
import type { Steward, StewardSettings } from '../../src/engine/flows/steward.ts';
import type { McpServerConfig } from '../../src/mcp/mcp-config.ts';
import type { SetUp } from '../helpers/connect-origin.ts';
import type { PersonConnections } from '../../src/engine/ports.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { PgEstimateHistory } from '../../src/store/estimate-history.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { startFakeDiscord, type FakeDiscord, type StoredMessage } from '../fakes/fake-discord-server.ts';
import type { GatewayMessage } from '../fakes/fake-discord-payloads.ts';
import { startFakeLlm, type FakeLlm, type FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { mcpConfig } from '../helpers/mcp-servers.ts';
import { waitUntil, type Found } from '../helpers/wait.ts';
import { CronerCalendar } from '../../src/cron/croner-calendar.ts';
import { PgWorkflowStore } from '../../src/store/pg-workflow-store.ts';
import { PgAssistantStore } from '../../src/store/pg-assistant-store.ts';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { PgDelegationStore } from '../../src/store/pg-delegation-store.ts';
import {
  CANARY_KEY,
  checkInvariants,
  createSteward,
  serverQuestions,
  databaseAt,
  recordingTools,
  type RecordedCall,
} from './harness.ts';

/** The role whose members may decide on anyone's runs. */
export const OPS_ROLE = '700000000000000001';

/** One Steward process on the fake Discord: its engine, its discord.js channel, its store (owner) and MCP calls. */
export interface DiscordProcess {
  steward: Steward;
  channel: DiscordChannel;
  store: PgRunStore;
  calls: RecordedCall[];
  /** The fake's `caller` on this process's REST calls; undefined for the harness's own (through `discord.apiUrl`). */
  caller?: string;
}

export interface DiscordHarness {
  llm: FakeLlm;
  discord: FakeDiscord;
  /** The current process's (after `restart`, the new one's). */
  store: PgRunStore;
  db: TestDatabase;
  steward: Steward;
  channel: DiscordChannel;
  /** The MCP calls of the harness's process, over all its starts. */
  calls: RecordedCall[];
  logs: string[];
  ada: APIUser;
  bob: APIUser;
  boss: APIUser;
  /** Mentions Steward in the server's text channel; returns the thread Steward started on it once its run exists. */
  mention(text: string, o?: { author?: APIUser }): Promise<string>;
  /** A message in a thread (mentioning Steward or not). */
  reply(threadId: string, text: string, o?: { author?: APIUser; mention?: boolean }): Promise<void>;
  /** Dispatches a message as Discord would and resolves once the client received it and Steward's work settled. */
  deliver(message: GatewayMessage): Promise<void>;
  /** A direct message to Steward; returns the DM channel's id. */
  dm(text: string, o?: { author?: APIUser }): Promise<string>;
  /** The run card in a channel: the first message Steward posted there with an embed. */
  card(channelId: string): StoredMessage;
  /** Steward's messages in a channel other than the card, in order. */
  replies(channelId: string): StoredMessage[];
  /** The custom id of a button or menu on a message whose kind (approve, stop, bp…) is `kind`. */
  componentId(m: StoredMessage, kind: string): string;
  /** The kinds of the buttons on a message, in order. */
  buttons(m: StoredMessage): string[];
  /**
   * Presses a button on a message as it stands now; resolves with the interaction's id once handled. Stop and Cancel
   * ask first, privately: the question is answered Yes by the same person (the id is then the Yes press's), unless
   * `confirm: false` leaves it open.
   */
  press(
    m: StoredMessage,
    kind: string,
    o?: { user?: APIUser; roles?: string[]; customId?: string; confirm?: boolean },
  ): Promise<string>;
  /** The private question a Stop or Cancel press opened, if Steward asked one. */
  question(interactionId: string): StoredMessage | undefined;
  /** Picks options in a select menu on a message. */
  select(m: StoredMessage, kind: string, values: string[], o?: { user?: APIUser }): Promise<string>;
  /** Submits the modal Steward opened last (on the message it was opened from) with these field values. */
  submitModal(fields: Record<string, string>, o?: { user?: APIUser }): Promise<string>;
  /** The last modal Steward opened (callback type 9), as sent. */
  lastModal(): { custom_id: string; title: string; components: unknown[] } | undefined;
  /** `/steward <sub> …`; resolves with the interaction's id once handled. */
  slash(
    sub: string,
    options?: Record<string, string>,
    o?: { user?: APIUser; roles?: string[]; channelId?: string },
  ): Promise<string>;
  /**
   * Types into `/steward <sub>`'s `focused` option (its text in `options`): the choices Steward offered, once it
   * answered the autocomplete interaction (the fake checks them as Discord does).
   */
  autocomplete(
    sub: string,
    options: Record<string, string>,
    focused: string,
    o?: { user?: APIUser; roles?: string[]; channelId?: string },
  ): Promise<{ name: string; value: string }[]>;
  /** Apps → "Ask Steward" on a message the fake holds; resolves with the interaction's id once answered. */
  askSteward(messageId: string, o?: { user?: APIUser; roles?: string[]; channelId?: string }): Promise<string>;
  /** Everything private sent for an interaction (ephemeral replies and follow-ups), as text. */
  privateTexts(interactionId: string): string[];
  waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs?: number): Promise<Found<T>>;
  /**
   * Steward stops as at a deploy (its engine, then its gateway session) and the next one starts on the same database
   * and bot token, with a new store owner, and recovers; `steward`, `channel` and `store` are then the new one's.
   */
  restart(): Promise<void>;
  /**
   * Starts another Steward process on the same database and bot token (its own store owner, MCP host and gateway
   * session; its REST calls marked `caller`), recovered as the app starts; `close` stops it and checks its calls too.
   */
  startProcess(caller: string): Promise<DiscordProcess>;
  close(): Promise<void>;
}

/** What a person reads in a message: its content, and its embeds' headings, titles, descriptions, fields, footers. */
export function shownText(m: Pick<APIMessage, 'content' | 'embeds'>): string {
  const parts = [m.content];
  for (const e of m.embeds ?? [])
    parts.push(
      e.author?.name ?? '',
      e.title ?? '',
      e.description ?? '',
      ...(e.fields ?? []).flatMap((f) => [f.name, f.value]),
      e.footer?.text ?? '',
    );
  return parts.filter(Boolean).join('\n');
}

/** Every component of a message, rows flattened. */
function componentsOf(m: StoredMessage): Array<{ type: number; custom_id?: string; label?: string }> {
  const rows = (m.message.components ?? []) as Array<{ components?: Array<{ type: number; custom_id?: string }> }>;
  return rows.flatMap((r) => r.components ?? []);
}

/** Starts every part; `close` stops them all and checks the invariants. */
export async function startDiscordHarness(options: {
  /** A fresh test database of that kind, or the PostgreSQL database at `url` (a private cluster's, for faults). */
  db: 'postgres' | 'pglite' | { url: string };
  servers: McpServerConfig[];
  script: FakeLlmScript;
  settings?: Partial<StewardSettings>;
  /** Steward asks for the Message Content intent (default on), and whether the app may have it (default yes). */
  messageContent?: boolean;
  allowMessageContent?: boolean;
  /** Least time between two edits of one card (default 1 s, as in production). */
  minUpdateIntervalMs?: number;
  /** The channel's clock (cards, interaction tokens) and the fake's, for tests that move time. */
  now?: () => number;
  /** The dashboard's address: `/steward dashboard` then answers with sign-in links to it (else: it is off). */
  dashboardUrl?: string;
  /**
   * The first process's run store (default: a plain PgRunStore), e.g. one that never notes a report sent; a restart
   * or another process gets a plain one.
   */
  store?: (db: TestDatabase['db']) => PgRunStore;
  /**
   * Parts on the harness's database started before the MCP host (a web origin for OAuth callbacks): the host's
   * options, people's connections for Steward, more secrets that must never be shown, and how to stop them.
   */
  setup?: SetUp;
  /** Servers may ask questions (MCP elicitation), as the app wires it. */
  questions?: boolean;
  /** Plan cards carry estimates from the database's history, as the app wires them (off by default). */
  estimates?: boolean;
}): Promise<DiscordHarness> {
  const llm = await startFakeLlm(options.script);
  const discord = await startFakeDiscord({
    allowMessageContent: options.allowMessageContent ?? true,
    roles: [{ id: OPS_ROLE, name: 'Ops' }],
    now: options.now,
  });
  const db = typeof options.db === 'string' ? await createTestDatabase(options.db) : await databaseAt(options.db.url);
  const extra = await options.setup?.(db);
  const asks = serverQuestions(options.questions, db);
  const { host, failures } = await McpHost.connect(mcpConfig(...options.servers), { ...extra?.host, ...asks.host });
  if (failures.length > 0) throw new Error(`MCP servers failed: ${JSON.stringify(failures)}`);
  const connectionsOf = new Map<McpHost, PersonConnections | undefined>();
  const calls: RecordedCall[] = [];
  const logs: string[] = [];
  const log = (level: string, message: string) => logs.push(`${level} ${message}`);
  const ada = discord.defaultUser;
  const bob = discord.user({ username: 'bob' });
  const boss = discord.user({ username: 'boss' });
  // Messages each process's client has received. Steward's listener was registered first, so once an id is here its
  // work is tracked and `channel.settled()` waits for it; without this a reply could be "settled" before it arrived.
  const received = new Map<DiscordProcess, Set<string>>();
  const launch = async (o: {
    calls: RecordedCall[];
    tools: McpHost;
    caller?: string;
    store?: PgRunStore;
  }): Promise<DiscordProcess> => {
    const store = o.store ?? new PgRunStore(db.db);
    // One connection flow per MCP host (a restart keeps its host, and so its flow).
    if (!connectionsOf.has(o.tools)) connectionsOf.set(o.tools, extra?.connections?.(o.tools));
    const connections = connectionsOf.get(o.tools);
    const channel = new DiscordChannel({
      token: discord.token,
      apiUrl: o.caller ? discord.apiUrlAs(o.caller) : discord.apiUrl,
      guildId: discord.guildId,
      messageContent: options.messageContent ?? true,
      log,
      minUpdateIntervalMs: options.minUpdateIntervalMs,
      now: options.now,
    });
    const steward = createSteward({
      llm,
      tools: recordingTools(o.tools, o.calls),
      store,
      notifier: channel,
      log,
      settings: { approvers: [`discord:${boss.id}`, `discord:role:${OPS_ROLE}`], ...options.settings },
      signals: db.signals,

      workflows: new PgWorkflowStore(db.db, { owner: store.owner }),
      calendar: new CronerCalendar(),
      assistants: new PgAssistantStore(db.db),
      delegations: new PgDelegationStore(db.db),
      ...(options.dashboardUrl && { dashboardLinks: new PgDashboard(db.db, { baseUrl: options.dashboardUrl }) }),
      ...(connections && { connections }),
      prompts: host,
      ...(options.estimates && { estimateHistory: new PgEstimateHistory(db.db) }),
      ...asks.steward,
    });
    asks.bind(steward);
    await channel.start(steward);
    const started: DiscordProcess = { steward, channel, store, calls: o.calls, ...(o.caller && { caller: o.caller }) };
    const ids = new Set<string>();
    channel.client.on(Events.MessageCreate, (m) => ids.add(m.id));
    received.set(started, ids);
    return started;
  };
  const stop = async (p: DiscordProcess) => {
    received.delete(p);
    await p.steward.shutdown();
    await p.channel.stop();
  };
  let main = await launch({ calls, tools: host, store: options.store?.(db.db) });
  const others: { process: DiscordProcess; host: McpHost }[] = [];
  const live = () => [...received.keys()];
  const settled = () => Promise.all(live().map((p) => p.channel.settled()));
  const delivered = async (id: string, sent: unknown) => {
    if (sent !== undefined)
      await waitUntil('every process to receive the message', () => [...received.values()].every((r) => r.has(id)));
    await settled();
  };

  const fromBot = (m: StoredMessage) => m.message.author.id === discord.botUser.id && !m.ephemeral;
  const inChannel = (channelId: string) => discord.messagesIn(channelId).filter(fromBot);
  const handled = async (id: string) => {
    await waitUntil('the interaction to be answered', () => discord.interaction(id)?.callbackType !== undefined, {
      timeoutMs: 5_000,
      details: () => `logs:\n${logs.join('\n')}`,
    });
    await settled();
    return id;
  };
  const componentId = (m: StoredMessage, kind: string) => {
    const ids = componentsOf(m).flatMap((c) => (c.custom_id ? [c.custom_id] : []));
    const found = ids.find((id) => parseCustomId(id)?.kind === kind);
    if (!found) throw new Error(`no ${kind} on the message; it has ${ids.join(', ') || 'nothing'}`);
    return found;
  };
  const current = (m: StoredMessage) => discord.messages.get(m.message.id) ?? m;
  const question = (interactionId: string) =>
    [...discord.messages.values()].find(
      (m) =>
        m.interactionId === interactionId && m.ephemeral && componentsOf(m).some((c) => c.custom_id?.includes('-yes:')),
    );
  const modalCalls = () => discord.calls.filter((c) => (c.body as { type?: number } | null)?.type === 9);
  const lastModal = () =>
    (modalCalls().at(-1)?.body as { data: { custom_id: string; title: string; components: unknown[] } } | undefined)
      ?.data;

  return {
    llm,
    discord,
    get store() {
      return main.store;
    },
    db,
    get steward() {
      return main.steward;
    },
    get channel() {
      return main.channel;
    },
    calls,
    logs,
    ada,
    bob,
    boss,
    async mention(text, o = {}) {
      const message = discord.messageCreate({ content: `<@${discord.botUser.id}> ${text}`, mentionsBot: true, ...o });
      discord.dispatch('MESSAGE_CREATE', message);
      // A thread started on a message has the message's id; the request is taken once its run is stored.
      const thread = await waitUntil('Steward to start a thread on the request', () =>
        discord.threads.find((t) => t.id === message.id),
      );
      await waitUntil('the run of the request', () =>
        db.db
          .selectFrom('runs')
          .select('id')
          .where('conversation_key', '=', `${discord.guildId}:${thread.id}`)
          .executeTakeFirst(),
      );
      return thread.id;
    },
    async reply(threadId, text, o = {}) {
      const content = o.mention ? `<@${discord.botUser.id}> ${text}` : text;
      const message = discord.messageCreate({ content, threadId, mentionsBot: o.mention ?? false, author: o.author });
      await delivered(message.id, discord.dispatch('MESSAGE_CREATE', message));
    },
    deliver: (message) => delivered(message.id, discord.dispatch('MESSAGE_CREATE', message)),
    async dm(text, o = {}) {
      const message = discord.messageCreate({ content: text, dm: true, author: o.author });
      await delivered(message.id, discord.dispatch('MESSAGE_CREATE', message));
      return message.channel_id;
    },
    card(channelId) {
      const found = inChannel(channelId).find((m) => (m.message.embeds ?? []).length > 0);
      if (!found) throw new Error(`no card in channel ${channelId}`);
      return found;
    },
    replies(channelId) {
      const all = inChannel(channelId);
      const card = all.find((m) => (m.message.embeds ?? []).length > 0);
      return all.filter((m) => m !== card);
    },
    componentId: (m, kind) => componentId(current(m), kind),
    buttons: (m) =>
      componentsOf(current(m))
        .filter((c) => c.type === 2 && c.custom_id)
        .map((c) => parseCustomId(c.custom_id ?? '')?.kind ?? '?'),
    async press(m, kind, o = {}) {
      const now = current(m);
      const payload = discord.buttonPress({
        messageId: now.message.id,
        customId: o.customId ?? componentId(now, kind),
        channelId: now.message.channel_id,
        user: o.user,
        roles: o.roles,
      });
      discord.dispatch('INTERACTION_CREATE', payload);
      const id = await handled(String(payload.id));
      const asked = (kind === 'stop' || kind === 'cancel') && o.confirm !== false ? question(id) : undefined;
      if (!asked) return id;
      const yes = discord.buttonPress({
        messageId: asked.message.id,
        customId: componentId(asked, `${kind}-yes`),
        channelId: asked.message.channel_id,
        user: o.user,
        roles: o.roles,
      });
      discord.dispatch('INTERACTION_CREATE', yes);
      return handled(String(yes.id));
    },
    question,
    select(m, kind, values, o = {}) {
      const now = current(m);
      const payload = discord.stringSelect({
        messageId: now.message.id,
        customId: componentId(now, kind),
        values,
        channelId: now.message.channel_id,
        user: o.user,
      });
      discord.dispatch('INTERACTION_CREATE', payload);
      return handled(String(payload.id));
    },
    lastModal,
    submitModal(fields, o = {}) {
      const opened = modalCalls().at(-1);
      const customId = lastModal()?.custom_id;
      if (!opened || !customId) throw new Error('no modal was opened');
      const messageId = discord.interaction(opened.interactionId ?? '')?.componentMessageId;
      const payload = discord.modalSubmit({ customId, fields, user: o.user, ...(messageId && { messageId }) });
      discord.dispatch('INTERACTION_CREATE', payload);
      return handled(String(payload.id));
    },
    slash(sub, opts = {}, o = {}) {
      const payload = discord.slashCommand({ subcommand: sub, options: opts, ...o });
      discord.dispatch('INTERACTION_CREATE', payload);
      return handled(String(payload.id));
    },
    async autocomplete(sub, options, focused, o = {}) {
      const payload = discord.slashCommand({ subcommand: sub, options, focused, ...o });
      discord.dispatch('INTERACTION_CREATE', payload);
      const id = await handled(String(payload.id));
      return discord.interaction(id)?.choices ?? [];
    },
    askSteward(messageId, o = {}) {
      const payload = discord.messageCommand({ messageId, name: 'Ask Steward', ...o });
      discord.dispatch('INTERACTION_CREATE', payload);
      return handled(String(payload.id));
    },
    privateTexts(interactionId) {
      return [...discord.messages.values()]
        .filter((m) => m.interactionId === interactionId && m.ephemeral)
        .map((m) => shownText(m.message));
    },
    waitFor: (what, check, timeoutMs = 20_000) =>
      waitUntil(what, check, { timeoutMs, details: () => `logs:\n${logs.join('\n')}` }),
    async restart() {
      await stop(main);
      main = await launch({ calls, tools: host });
      await main.steward.recover();
    },
    async startProcess(caller) {
      const connected = await McpHost.connect(mcpConfig(...options.servers), extra?.host);
      if (connected.failures.length > 0) throw new Error(`MCP servers failed: ${JSON.stringify(connected.failures)}`);
      const started = await launch({ calls: [], tools: connected.host, caller });
      others.push({ process: started, host: connected.host });
      await started.steward.recover();
      return started;
    },
    async close() {
      const idle = Promise.all(live().map((p) => p.steward.idle()));
      await Promise.race([idle, new Promise((r) => setTimeout(r, 2000))]);
      // What the bot sent to Discord is what people saw; the token travels only in the Authorization header.
      const shown = [...logs, ...discord.calls.map((c) => JSON.stringify(c.body ?? null))];
      // As the console harness: steps started early are read-only closed-world calls of these tools.
      const tools = host.listTools();
      const problems = await checkInvariants({
        store: main.store,
        db,
        calls: [...calls, ...others.flatMap((o) => o.process.calls)],
        llm,
        shown,
        canaries: [CANARY_KEY, discord.token, ...(extra?.canaries?.() ?? [])],
        tools,
      });
      const refused = discord.calls.filter((c) => c.problems.length > 0);
      const pinging = discord.calls.filter(
        (c) => c.allowedMentions !== undefined && JSON.stringify(c.allowedMentions) !== '{"parse":[]}',
      );
      for (const o of others) {
        await stop(o.process);
        await o.host.close();
      }
      await stop(main);
      await extra?.close?.();
      await host.close();
      await db.close();
      await llm.close();
      await discord.close();
      if (problems.length > 0)
        throw new Error(`MCP calls outside an approved plan, or leaked secrets:\n${problems.join('\n')}`);
      if (refused.length > 0)
        throw new Error(
          `Discord refused calls (over its limits, or without a permission):\n${refused.flatMap((c) => c.problems).join('\n')}`,
        );
      if (pinging.length > 0)
        throw new Error(
          `messages that could ping: ${pinging.map((c) => JSON.stringify(c.allowedMentions)).join(', ')}`,
        );
    },
  };
}
