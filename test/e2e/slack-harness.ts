/**
 * Slack end-to-end harness: the real Bolt app in HTTP mode (signed requests, as Slack sends them), its Web API
 * pointed at the fake Slack server, the real engine, store, MCP servers from npm and the fake LLM.
 * Ada (U0ADA) asks; Bob (U0BOB) is a bystander; Boss (U0BOSS) is a configured approver.
 */
import { SlackChannel } from '../../src/bot/slack/slack-channel.ts';
import type { Steward, StewardSettings } from '../../src/engine/flows/steward.ts';
import type { McpServerConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import type { SetUp } from '../helpers/connect-origin.ts';
import { PgEstimateHistory } from '../../src/store/estimate-history.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { startFakeLlm, type FakeLlm, type FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { allTexts } from '../bot/slack/fixtures.ts';
import { startFakeSlack, type FakeMessage, type FakeSlack } from '../fakes/fake-slack-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { mcpConfig } from '../helpers/mcp-servers.ts';
import { waitUntil, type Found } from '../helpers/wait.ts';
import {
  createBlockAction,
  createMention,
  createMessage,
  createViewSubmission,
  eventEnvelope,
  interactionBody,
  newTs,
  sendSigned,
  slashCommandBody,
} from './slack-requests.ts';
import {
  CANARY_KEY,
  checkInvariants,
  createSteward,
  onlyRun,
  recordingTools,
  serverQuestions,
  type RecordedCall,
} from './harness.ts';
import { CronerCalendar } from '../../src/cron/croner-calendar.ts';
import { PgWorkflowStore } from '../../src/store/pg-workflow-store.ts';
import { PgAssistantStore } from '../../src/store/pg-assistant-store.ts';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { PgDelegationStore } from '../../src/store/pg-delegation-store.ts';

export interface SlackHarness {
  llm: FakeLlm;
  slack: FakeSlack;
  store: PgRunStore;
  db: TestDatabase;
  /** The Steward running now (after `restart`, the next one). */
  readonly steward: Steward;
  /** The SlackChannel running now, to which Slack delivers events (after `restart`, the next one). */
  readonly channel: SlackChannel;
  logs: string[];
  /** Mentions Steward at the top of #general; returns the new thread's ts. */
  mention(text: string, user?: string): Promise<string>;
  /** A plain reply in a thread. */
  reply(threadTs: string, text: string, user?: string): Promise<void>;
  /** The value of a button on a card as it is now. */
  buttonValue(card: FakeMessage, action: string): string;
  /**
   * Presses a button on a card (the value as shown now, unless given); resolves with the HTTP status once the engine
   * is done with the press (`answerOnly`: as soon as Slack's request is answered).
   */
  press(
    card: FakeMessage,
    action: string,
    o?: { user?: string; value?: string; answerOnly?: boolean },
  ): Promise<number>;
  /** Submits the modal opened last, with this text. */
  submitAmend(text: string, user?: string): Promise<number>;
  /** Posts any body signed with the right (or a forged) secret. */
  post(
    body: string,
    contentType: 'application/json' | 'application/x-www-form-urlencoded',
    forge?: { timestamp?: number; secret?: string },
  ): Promise<Response>;
  /** The run card in a thread (the bot message that starts with a header). */
  card(threadTs: string): FakeMessage;
  /** Every bot message in a thread except the card, in order. */
  replies(threadTs: string): FakeMessage[];
  /** Polls until `check` returns a truthy value (a check that throws counts as not yet). */
  waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs?: number): Promise<Found<T>>;
  /**
   * Stops this Steward and its SlackChannel as a deploy would, then starts the next on the same database and the same
   * fake Slack (same bot token and workspace; Slack now delivers to its URL) and has it recover.
   */
  restart(): Promise<void>;
  /**
   * Starts another Steward process with its own SlackChannel on the same database and workspace, and has it recover.
   * Slack delivers events to one Request URL, the first process's; the other is only there. It calls Slack with a
   * bot token of its own for the same bot, so its calls are `slack.calls` with its `token`. `close` stops it.
   */
  startSecondProcess(): Promise<SecondSlackProcess>;
  /** Stops every process and fails on an MCP call outside an approved plan by any of them, or a leaked secret. */
  close(): Promise<void>;
}

/** A second Steward process on the harness's database and fake Slack. */
export interface SecondSlackProcess {
  steward: Steward;
  channel: SlackChannel;
  /** Its bot token: its Slack calls are those made with it. */
  token: string;
  /** The MCP calls it made. */
  calls: readonly RecordedCall[];
}

/** One Steward process: its engine and the SlackChannel it answers Slack through. */
interface SlackProcess {
  steward: Steward;
  channel: SlackChannel;
  /** Where Slack posts its events and interactions. */
  url: string;
}

const SECRET = 'test-signing-secret-0123456789';

/** What a person reads in a bot message: every text in its blocks, a line each. */
export function messageText(m: FakeMessage): string {
  return allTexts(m.blocks).join('\n');
}

/**
 * Slack delivers a mention, or a message in a channel, only from a conversation the app is a member of
 * (https://api.slack.com/events/message.channels: "A message was posted to a channel" the app is in); so an event
 * from a channel means the bot is in it, and the fake Slack is told so.
 */
function joinWhereDelivered(slack: FakeSlack, body: string, type: string): void {
  if (type !== 'application/json') return;
  let event: { type?: string; channel?: string; channel_type?: string } | undefined;
  try {
    event = (JSON.parse(body) as { event?: typeof event }).event;
  } catch {
    return; // a malformed body (a test of the app's guards) comes from nowhere
  }
  if (!event?.channel) return;
  const fromChannel = event.type === 'app_mention' || ['channel', 'group'].includes(event.channel_type ?? '');
  if (fromChannel) slack.join(event.channel, event.channel_type === 'group');
}

/** Runs `/steward <text>` as `user` and returns the texts posted privately to its response_url. */
export async function privateCommand(harness: SlackHarness, text: string, user: string): Promise<string[]> {
  const before = harness.slack.calls.length;
  const body = slashCommandBody({
    text,
    user,
    responseUrl: harness.slack.responseUrl(),
    triggerId: harness.slack.newTriggerId(),
  });
  await harness.post(body, 'application/x-www-form-urlencoded');
  await harness.channel.settled();
  return harness.slack.calls
    .slice(before)
    .filter((c) => c.method === 'response_url')
    .map((c) => String((c.args as { text?: string }).text));
}

/** The id of the one run a test made (the test fails if there is not exactly one). */
export async function onlyRunId(harness: SlackHarness): Promise<string> {
  return (await onlyRun(harness)).id;
}

/** Starts every part; `close` stops them all. */
export async function startSlackHarness(options: {
  db: 'postgres' | 'pglite';
  servers: McpServerConfig[];
  script: FakeLlmScript;
  settings?: Partial<StewardSettings>;
  /** Cards use plan blocks (`channel`), and whether the fake workspace accepts them (`workspace`, default yes). */
  planBlocks?: { channel: boolean; workspace?: boolean };
  /** The dashboard's address: `/steward dashboard` then answers with sign-in links to it (else: it is off). */
  dashboardUrl?: string;
  /** The first process's run store (a restart or another process gets a plain one). */
  store?: (db: TestDatabase['db']) => PgRunStore;
  /**
   * Parts on the harness's database started before the MCP host (a web origin for OAuth callbacks): the host's
   * options, people's connections for Steward, more secrets that must never be shown, and how to stop them.
   */
  setup?: SetUp;
  /** Servers may ask questions (MCP elicitation), as the app wires it. */
  questions?: boolean;
  /** The fake Slack's clock (rate limits, stream lifetimes), for tests that move Slack's time. */
  slackNow?: () => number;
  /** Plan cards carry estimates from the database's history, as the app wires them (off by default). */
  estimates?: boolean;
}): Promise<SlackHarness> {
  const llm = await startFakeLlm(options.script);
  // The membership rule is on: the bot is in the channels Slack delivers mentions and messages from (`post`).
  const slack = await startFakeSlack({ planBlocks: options.planBlocks?.workspace, now: options.slackNow, members: [] });
  const db = await createTestDatabase(options.db);
  const extra = await options.setup?.(db);
  const asks = serverQuestions(options.questions, db);
  const { host, failures } = await McpHost.connect(mcpConfig(...options.servers), { ...extra?.host, ...asks.host });
  if (failures.length > 0) throw new Error(`MCP servers failed: ${JSON.stringify(failures)}`);
  const connections = extra?.connections?.(host);
  const store = options.store?.(db.db) ?? new PgRunStore(db.db);
  const calls: RecordedCall[] = [];
  const logs: string[] = [];
  const log = (level: string, message: string) => logs.push(`${level} ${message}`);
  const open = async (o: { runs: PgRunStore; recorded: RecordedCall[]; botToken: string }): Promise<SlackProcess> => {
    const channel = new SlackChannel({
      botToken: o.botToken,
      signingSecret: SECRET,
      port: 0,
      apiUrl: slack.apiUrl,
      log,
      planBlocks: options.planBlocks?.channel,
    });
    const steward = createSteward({
      llm,
      tools: recordingTools(host, o.recorded),
      store: o.runs,
      notifier: channel,
      log,
      settings: { approvers: ['slack:U0BOSS'], ...options.settings },
      signals: db.signals,

      workflows: new PgWorkflowStore(db.db, { owner: o.runs.owner }),
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
    return { steward, channel, url: `http://127.0.0.1:${channel.port}/slack/events` };
  };
  const stop = async (p: SlackProcess) => {
    await p.steward.shutdown();
    await p.channel.stop();
  };
  let now = await open({ runs: store, recorded: calls, botToken: slack.botToken });
  const others: (SecondSlackProcess & SlackProcess)[] = [];
  const post: SlackHarness['post'] = (body, type, forge) => {
    joinWhereDelivered(slack, body, type);
    return sendSigned(now.url, SECRET, body, type, forge);
  };
  const ok = async (res: Promise<Response>) => {
    const r = await res;
    await now.channel.settled();
    return r.status;
  };
  const botMessages = (threadTs: string) => [...slack.messages.values()].filter((m) => m.threadTs === threadTs);
  const card = (threadTs: string) => {
    const found = botMessages(threadTs).find((m) => m.blocks[0]?.type === 'header');
    if (!found) throw new Error(`no card in thread ${threadTs}`);
    return found;
  };
  const buttonValue = (c: FakeMessage, action: string) => {
    const buttons = c.blocks.flatMap((b) =>
      b.type === 'actions' ? (b.elements as Array<{ action_id: string; value: string }>) : [],
    );
    const button = buttons.find((b) => b.action_id === `steward.${action}`);
    if (!button)
      throw new Error(
        `no ${action} button on the card; it has ${buttons.map((b) => b.action_id).join(', ') || 'none'}`,
      );
    return button.value;
  };

  return {
    llm,
    slack,
    store,
    db,
    get steward() {
      return now.steward;
    },
    get channel() {
      return now.channel;
    },
    logs,
    post,
    card,
    buttonValue,
    async mention(text, user) {
      const ts = newTs();
      await ok(
        post(eventEnvelope(createMention({ text, user, ts }, slack.botUserId), slack.botUserId), 'application/json'),
      );
      return ts;
    },
    async reply(threadTs, text, user) {
      await ok(post(eventEnvelope(createMessage({ text, user, threadTs }), slack.botUserId), 'application/json'));
    },
    press(c, action, o = {}) {
      const payload = createBlockAction({
        user: o.user ?? 'U0ADA',
        actionId: `steward.${action}`,
        value: o.value ?? buttonValue(c, action),
        channel: c.channel,
        messageTs: c.ts,
        threadTs: c.threadTs,
        triggerId: slack.newTriggerId(),
        botUserId: slack.botUserId,
      });
      const answer = post(interactionBody(payload), 'application/x-www-form-urlencoded');
      return o.answerOnly ? answer.then((r) => r.status) : ok(answer);
    },
    submitAmend(text, user) {
      const opened = slack.callsOf('views.open').at(-1);
      if (!opened) throw new Error('no modal was opened');
      const view = opened.args.view as Record<string, unknown>;
      const payload = createViewSubmission({
        user: user ?? 'U0ADA',
        view,
        values: { amend: { text: { type: 'plain_text_input', value: text } } },
      });
      return ok(post(interactionBody(payload), 'application/x-www-form-urlencoded'));
    },
    replies: (threadTs) => botMessages(threadTs).filter((m) => m.blocks[0]?.type !== 'header'),
    waitFor: (what, check, timeoutMs = 20_000) =>
      waitUntil(what, check, { timeoutMs, details: () => `logs:\n${logs.join('\n')}` }),
    async restart() {
      await stop(now);
      // A new process: a new owner of the runs it takes over, as after a deploy.
      now = await open({ runs: new PgRunStore(db.db), recorded: calls, botToken: slack.botToken });
      await now.steward.recover();
    },
    async startSecondProcess() {
      const recorded: RecordedCall[] = [];
      const token = slack.issueBotToken();
      const other = await open({ runs: new PgRunStore(db.db), recorded, botToken: token });
      others.push({ ...other, token, calls: recorded });
      await other.steward.recover();
      return { steward: other.steward, channel: other.channel, token, calls: recorded };
    },
    async close() {
      const idle = Promise.all([now, ...others].map((p) => p.steward.idle()));
      await Promise.race([idle, new Promise((r) => setTimeout(r, 2000))]);
      // What the bot sent to Slack is what people saw; the bot token travels only in the Authorization header.
      const shown = [...logs, ...slack.calls.map(({ args: { token: _transport, ...args } }) => JSON.stringify(args))];
      const problems = await checkInvariants({
        store,
        db,
        calls: [...calls, ...others.flatMap((o) => o.calls)],
        llm,
        shown,
        canaries: [CANARY_KEY, slack.botToken, ...others.map((o) => o.token), SECRET, ...(extra?.canaries?.() ?? [])],
        // As the console harness: steps started early are read-only closed-world calls of these tools.
        tools: host.listTools(),
      });
      for (const p of [now, ...others]) await stop(p);
      await extra?.close?.();
      await host.close();
      await db.close();
      await llm.close();
      await slack.close();
      if (problems.length > 0)
        throw new Error(`MCP calls outside an approved plan, or leaked secrets:\n${problems.join('\n')}`);
    },
  };
}
