/**
 * The Slack channel: a mention starts a request in its thread, the plan card is one message per run kept up to
 * date in place, buttons and the amendment modal become decisions, and replies go in the thread.
 */
import type { ChannelAdapter, InboundHandler } from '../../engine/channel.ts';
import type { OutboundMessage, Report, ReportStream } from '../../engine/messages.ts';
import type { Conversation } from '../../engine/ports.ts';
import type { Actor, RunStatus } from '../../engine/types.ts';
import { createSlackApp, type SlackApp, type SlackSettings } from './slack-app.ts';
import { withBreakpoints, withProgress, withReport, withRunStatus } from '../live-card-state.ts';
import { fromConversation } from './slack-inbound.ts';
import { registerCommands } from './slack-commands.ts';

import { registerDirectMessages } from './slack-dm.ts';
import { HomeTab, registerHome } from './slack-home-tab.ts';
import { registerListeners, type SeenAt } from './slack-listeners.ts';
import { LiveCards } from '../live-cards.ts';
import { Priority, SlackOutbox } from './slack-outbox.ts';
import { PlanBlockSwitch } from './slack-plan-block.ts';
import { renderCard, type SlackMessage } from './slack-render.ts';
import { SlackReportStream } from './slack-report-stream.ts';
import { uploadRunFiles } from './slack-attachments.ts';
import { renderConnectionCheck } from './slack-connections.ts';
import { renderQuestion, renderQuestionEnded } from './slack-question.ts';
import { mentionUser } from './slack-text.ts';
import { questionClosedText } from '../question-words.ts';
import type { QuestionCard } from '../../engine/messages.ts';
import { REPORT_EVENT, renderAnswer, renderBreakpoint, renderNotice, renderReport } from './slack-thread-render.ts';
import { PLANNING_STATUS, ThinkingSigns } from './slack-thinking.ts';
import { registerAssistantThreads } from './slack-assistant-threads.ts';
import { registerAskMessage } from './slack-ask-message.ts';
import { privateText } from './slack-controls.ts';
import { withoutFeedback } from './slack-feedback.ts';
import { asDirectMessage, NotInChannelError, postRefusal } from './slack-membership.ts';

const STOP_GRACE_MS = 10_000;
/** How long `stop` waits for queued output (final card states first) before dropping what is left, logged. */
const FLUSH_GRACE_MS = 10_000;
/** A post waits in its channel's lane at most this long: past it, Slack is refusing the channel for good. */
const POST_MAX_WAIT_MS = 300_000;
/** A private notice answers a press: later than this it would only confuse, so it is given up (logged). */
const EPHEMERAL_MAX_WAIT_MS = 60_000;
/** Card updates try again after a network error or a 5xx this many times (backoff up to 30 s). */
const UPDATE_TRANSIENT_RETRIES = 6;

/** Slack settings plus the log, and how often one card's progress is updated (default 1 s; a final state goes at once). */
export interface SlackChannelOptions extends SlackSettings {
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  minUpdateIntervalMs?: number;
  now?: () => number;
  /** How long `stop` waits for queued output before dropping it (default 10 s). */
  flushGraceMs?: number;
  /** Show a card's steps as Slack's plan block while the workspace accepts it (default off; config turns it on). */
  planBlocks?: boolean;
  /** Stream reports as the model writes them while the workspace accepts it (default on). */
  streamReports?: boolean;
  /** Least time between two appends to a streamed report (default 250 ms; the first words go at once). */
  streamIntervalMs?: number;
  /** The dashboard's public base URL: the App Home tab links each run to its page there (else to its thread). */
  dashboardUrl?: string;
  /** Told of each 429 Slack answers, with its Web API method (for the operator's metrics). */
  onRateLimited?: (method: string) => void;
}

/** A channel adapter over a Bolt app (Socket Mode or HTTP). */
export class SlackChannel implements ChannelAdapter {
  readonly name = 'slack';
  /** The HTTP port once started in HTTP mode. */
  port: number | undefined;
  private readonly slack: SlackApp;
  private readonly cards: LiveCards<SlackMessage>;
  /** Every chat.postMessage, chat.update and chat.postEphemeral goes through its lanes. */
  readonly outbox: SlackOutbox;
  private readonly pending = new Set<Promise<void>>();
  private readonly lastSeen = new Map<string, SeenAt>();
  private readonly signs: ThinkingSigns;
  private started = false;
  /** Off for the process once the workspace refuses streaming for good (no such method, a missing scope). */
  private streaming: boolean;
  /** Reports carry feedback buttons until the workspace refuses them. */
  private feedbackButtons = true;
  private team: Promise<string | undefined> | null = null;
  private home: HomeTab | null = null;
  /** Questions shown by this process, so their message can say how they ended. */
  private readonly questions = new Map<string, { card: QuestionCard; channel: string; ts: string }>();

  constructor(private readonly options: SlackChannelOptions) {
    this.slack = createSlackApp(options, options.log);
    const client = this.slack.app.client;
    this.signs = new ThinkingSigns(client, (m) => options.log('warn', m));
    this.streaming = options.streamReports ?? true;
    // Real time even when the cards' clock is injected: the outbox's waits are real timers.
    this.outbox = new SlackOutbox({ log: options.log, onRateLimited: options.onRateLimited });
    const planBlocks = new PlanBlockSwitch(options.planBlocks ?? false, (m) => options.log('info', m));
    this.cards = new LiveCards(
      {
        post: async (channel, threadTs, message) =>
          (await this.post(channel, threadTs, message, Priority.newCard)) ?? '',
        update: (channel, ts, latest, priority) =>
          this.outbox.call({
            method: 'chat.update',
            channel,
            priority,
            transientRetries: UPDATE_TRANSIENT_RETRIES,
            send: async () => {
              await client.chat.update({ channel, ts, ...latest() });
            },
          }),
      },
      {
        render: (live, now) => renderCard(live, now, { planBlocks: planBlocks.enabled }),
        // A workspace without plan blocks refused one: the card goes again at once as step lines.
        refused: (err, message) => planBlocks.refusedPlan(err, message),
      },
      {
        minIntervalMs: options.minUpdateIntervalMs ?? 1_000,
        now: options.now ?? Date.now,
        log: (m) => options.log('warn', m),
      },
    );
  }

  /** Socket Mode or HTTP, as configured. */
  get mode(): 'socket' | 'http' {
    return this.slack.mode;
  }

  async start(handler: InboundHandler): Promise<void> {
    const thinking = (channel: string, threadTs: string, messageTs: string) => {
      this.signs.show(channel, threadTs, messageTs);
      return () => this.track(this.signs.clear(channel, threadTs));
    };
    registerDirectMessages(this.slack.app, {
      handler,
      thinking,
      track: (work) => this.track(work),
      ephemeral: (at, user, message) => this.ephemeral(at, user, message),
      reply: async (channel, threadTs, message) => void (await this.post(channel, threadTs, message)),
    });
    registerAskMessage(this.slack.app, {
      handler,
      track: (work) => this.track(work),
      thinking,
      // Where Steward is not a member, the person hears it by DM (`ephemeralTo`).
      tell: (channel, user, text) => this.ephemeralTo({ id: user, channel: 'slack' }, { channel }, privateText(text)),
    });
    registerAssistantThreads(this.slack.app, {
      handler,
      track: (work) => this.track(work),
      log: (m) => this.options.log('warn', m),
    });
    registerCommands(this.slack.app, {
      handler,
      thinking,
      track: (work) => this.track(work),
      postTopLevel: (channel, text) => this.postTopLevel(channel, text),
    });
    const home = new HomeTab(this.slack.app.client, handler, { dashboardUrl: this.options.dashboardUrl });
    this.home = home;
    registerHome(this.slack.app, home, (work) => this.track(work));
    registerListeners(this.slack.app, {
      home,
      thinking,
      handler,
      track: (work) => this.track(work),
      hasActiveCard: (channel, threadTs) => this.cards.hasActiveCard(channel, threadTs),
      summaryOf: (runId) => this.cards.summaryOf(runId),
      seen: (actor, at) => this.lastSeen.set(actor.id, at),
      ephemeral: (at, user, message) => this.ephemeral(at, user, message),
      showBreakpoints: (runId, breakpoints) => this.cards.change(runId, (live) => withBreakpoints(live, breakpoints)),
    });
    this.port = await this.slack.start();
    this.started = true;
  }

  async stop(): Promise<void> {
    if (this.started) await this.slack.stop();
    this.started = false;
    // A planner call in flight may take a minute; a run cut short while planning is failed cleanly at restart.
    await Promise.race([this.settled(), new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
    const flushed = this.cards.flushAll();
    await this.outbox.drain(this.options.flushGraceMs ?? FLUSH_GRACE_MS);
    this.outbox.close();
    await flushed;
  }

  /** Resolves once every engine call started by a Slack payload so far has returned. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async send(conversation: Conversation, message: OutboundMessage): Promise<void> {
    const where = fromConversation(conversation);
    switch (message.kind) {
      case 'plan':
        this.refreshHome(this.home?.runStarted(message.runId, message.requester));
        if (where) await this.cards.show(where.channel, where.threadTs, message);
        return;
      case 'progress':
        return this.cards.change(message.runId, (live, now) => withProgress(live, message, now));
      case 'runStatus':
        // Handed to the planner: the thread's working sign says so (the quick path's said only "looking into it").
        if (where && message.status === 'planning' && !message.quick)
          this.track(this.signs.relabel(where.channel, where.threadTs, PLANNING_STATUS));
        return this.cards.change(message.runId, (live, now) => withRunStatus(live, message, now), true);
      case 'report':
        // The card's final state goes first in the update lane; the report does not wait for it, since a throttled
        // update would hold the report for its Retry-After.
        this.cards.change(message.runId, (live, now) => withReport(live, message, now), true);
        this.refreshHome(this.home?.refreshFor(message.runId));
        if (where) await this.postReport(where.channel, where.threadTs, message);
        return;
      case 'breakpoint':
        if (where) await this.post(where.channel, where.threadTs, renderBreakpoint(message));
        return;
      case 'answer':
        if (where) await this.post(where.channel, where.threadTs, renderAnswer(message));
        return;
      case 'notice':
        if (message.to) return this.ephemeralTo(message.to, where, renderNotice(message));
        if (where) await this.post(where.channel, where.threadTs, renderNotice(message));
        return;
      case 'question': {
        if (!where) return;
        const ts = await this.post(where.channel, where.threadTs, renderQuestion(message));
        if (ts) this.questions.set(message.questionId, { card: message, channel: where.channel, ts });
        return;
      }
      case 'questionClosed': {
        const shown = this.questions.get(message.questionId);
        this.questions.delete(message.questionId);
        // Its buttons go, and the message says how it ended; shown by another process, a line in the thread says so.
        if (shown) return this.updateMessage(shown.channel, shown.ts, renderQuestionEnded(shown.card, message));
        if (!where) return;
        const text = questionClosedText(message, (a) => mentionUser(a.id));
        await this.post(where.channel, where.threadTs, {
          text,
          blocks: [{ type: 'context', elements: [{ type: 'mrkdwn', text, verbatim: true }] }],
        });
        return;
      }
      case 'files': {
        if (!where) return;
        const note = await uploadRunFiles(this.slack.app.client, where, message);
        if (note) await this.post(where.channel, where.threadTs, note);
        return;
      }
      case 'connectionCheck': {
        // Where the link was sent: a run's thread, or the channel a `/steward connections connect` was typed in.
        const channel = /^[A-Z0-9]+$/.test(conversation.key) ? conversation.key : null;
        const at = where ?? (channel ? { channel } : this.lastSeen.get(message.to.id));
        if (!at || message.to.channel !== 'slack')
          return this.options.log('warn', `slack: nowhere to ask ${message.to.id} to confirm a connection`);
        return this.ephemeral(at, message.to.id, renderConnectionCheck(message));
      }
    }
  }

  /**
   * Streams a report into the run's thread as the model writes it (Slack's chat.*Stream methods), unless streaming
   * was refused for good; the finished report replaces the streamed words, rendered as a plain report reply is.
   */
  openReport(
    conversation: Conversation,
    report: { runId: string; status: RunStatus; requester: Actor },
  ): ReportStream | null {
    const where = fromConversation(conversation);
    if (!where || !this.streaming) return null;
    const client = this.slack.app.client;
    const team = this.teamId();
    const stream = new SlackReportStream(
      client.chat,
      this.outbox,
      {
        ...where,
        recipient: async () => ({
          ...(report.requester.channel === 'slack' && { user: report.requester.id }),
          ...((await team) && { team: await team }),
        }),
        replace: (ts, done) => this.replaceWithReport(where.channel, ts, done),
        post: (done) => this.sendReport(done, (m) => this.post(where.channel, where.threadTs, m)),
        refused: (reason) => {
          this.streaming = false;
          this.options.log('info', `slack: the workspace refused streaming (${reason}); reports are posted whole`);
        },
        log: (m) => this.options.log('warn', m),
      },
      { intervalMs: this.options.streamIntervalMs ?? 250, now: Date.now },
    );
    // The card's final state goes with the report, as when the report is sent whole.
    const finish = (done: Report) => {
      this.cards.change(done.runId, (live, now) => withReport(live, done, now), true);
      this.refreshHome(this.home?.refreshFor(done.runId));
      return stream.finish(done);
    };
    return { append: (delta) => stream.append(delta), finish, fail: () => stream.fail() };
  }

  /** The streamed message, stopped, becomes the report exactly as `send` renders it. */
  private async updateMessage(channel: string, ts: string, message: SlackMessage): Promise<void> {
    const client = this.slack.app.client;
    await this.outbox.call({
      method: 'chat.update',
      channel,
      priority: Priority.reply,
      transientRetries: UPDATE_TRANSIENT_RETRIES,
      send: async () => {
        await client.chat.update({ channel, ts, ...message });
      },
    });
  }

  private async replaceWithReport(channel: string, ts: string, report: Report): Promise<void> {
    const client = this.slack.app.client;
    await this.sendReport(report, (message) =>
      this.outbox.call({
        method: 'chat.update',
        channel,
        priority: Priority.finalState,
        transientRetries: UPDATE_TRANSIENT_RETRIES,
        send: async () => {
          await client.chat.update({ channel, ts, ...message });
        },
      }),
    );
  }

  /**
   * Sends a report with its feedback buttons; a workspace that refuses them (`invalid_blocks`, where the same report
   * without them is taken) gets every report without them from then on, so a report is never lost to its buttons.
   */
  private async sendReport(report: Report, send: (message: SlackMessage) => Promise<unknown>): Promise<void> {
    const message = renderReport(report);
    if (!this.feedbackButtons) return void (await send(withoutFeedback(message)));
    try {
      await send(message);
    } catch (err) {
      if ((err as { data?: { error?: unknown } }).data?.error !== 'invalid_blocks') throw err;
      await send(withoutFeedback(message));
      this.feedbackButtons = false;
      this.options.log('info', 'slack: the workspace refused the feedback buttons; reports are posted without them');
    }
  }

  /**
   * Posts a report; one sent again after a takeover changes the report message the process before posted (and died
   * before noting) rather than posting it twice.
   */
  private async postReport(channel: string, threadTs: string, report: Report): Promise<void> {
    const shown = report.again ? await this.reportShown(channel, threadTs, report.runId) : null;
    if (shown) await this.replaceWithReport(channel, shown, report);
    else await this.sendReport(report, (m) => this.post(channel, threadTs, m));
  }

  /**
   * The ts of the run's report message in its thread, found by its metadata (null when there is none, or the thread
   * cannot be read: in mention-only mode the app lacks the history scopes, and the report is posted as before).
   */
  private async reportShown(channel: string, threadTs: string, runId: string): Promise<string | null> {
    const client = this.slack.app.client;
    try {
      let cursor: string | undefined;
      // The report follows its card within a few replies; ten pages (of up to 1,000) bound a thread gone long.
      for (let page = 0; page < 10; page++) {
        const res = await client.conversations.replies({ channel, ts: threadTs, include_all_metadata: true, cursor });
        const found = res.messages?.find(
          (m) =>
            m.metadata?.event_type === REPORT_EVENT &&
            (m.metadata.event_payload as Record<string, unknown> | undefined)?.['run_id'] === runId,
        );
        if (found?.ts) return found.ts;
        cursor = res.response_metadata?.next_cursor;
        if (!res.has_more || !cursor) return null;
      }
    } catch (err) {
      this.options.log('warn', `slack: could not look for an earlier report in ${channel} (${(err as Error).message})`);
    }
    return null;
  }

  /** The workspace's team id (Slack asks for it with the recipient of a stream outside a DM); asked for once. */
  private teamId(): Promise<string | undefined> {
    this.team ??= this.slack.app.client.auth.test().then(
      (res) => res.team_id,
      () => undefined,
    );
    return this.team;
  }

  private async ephemeralTo(actor: Actor, where: SeenAt | null, message: SlackMessage): Promise<void> {
    const at = where ?? this.lastSeen.get(actor.id);
    if (!at || actor.channel !== 'slack')
      return this.options.log('warn', `slack: nowhere to show a private notice to ${actor.id}`);
    try {
      await this.ephemeral(at, actor.id, message);
    } catch (err) {
      // Steward was removed from the channel (or never invited): the person hears it in their DM with Steward.
      if (!(err instanceof NotInChannelError)) throw err;
      this.options.log('warn', `slack: ${err.message}; telling ${actor.id} by direct message instead`);
      await this.postTopLevelMessage(actor.id, asDirectMessage(message, err));
    }
  }

  private async ephemeral(at: SeenAt, user: string, message: SlackMessage): Promise<void> {
    const client = this.slack.app.client;
    await this.outbox
      .call({
        method: 'chat.postEphemeral',
        channel: at.channel,
        maxWaitMs: EPHEMERAL_MAX_WAIT_MS,
        send: () =>
          client.chat.postEphemeral({
            channel: at.channel,
            user,
            ...(at.threadTs ? { thread_ts: at.threadTs } : {}),
            ...message,
          }),
      })
      .catch((err: unknown) => {
        throw postRefusal(err, at.channel);
      });
    if (at.threadTs) this.answered(at.channel, at.threadTs);
  }

  /** Steward's first message in a thread ends its working sign there. */
  private answered(channel: string, threadTs: string): void {
    this.track(this.signs.clear(channel, threadTs));
  }

  /** Posts in a thread through the channel's lane: never refused because the channel is throttled, only delayed. */
  private async post(
    channel: string,
    threadTs: string,
    message: SlackMessage,
    priority: number = Priority.reply,
  ): Promise<string | undefined> {
    const client = this.slack.app.client;
    const res = await this.outbox
      .call({
        method: 'chat.postMessage',
        channel,
        priority,
        maxWaitMs: POST_MAX_WAIT_MS,
        send: () =>
          client.chat.postMessage({
            channel,
            thread_ts: threadTs,
            unfurl_links: false,
            unfurl_media: false,
            ...message,
          }),
      })
      .catch((err: unknown) => {
        throw postRefusal(err, channel);
      });
    this.answered(channel, threadTs);
    return res.ts;
  }

  /** A new top-level message with blocks (a DM to a person: `channel` is their user id), paced like any post. */
  private async postTopLevelMessage(channel: string, message: SlackMessage): Promise<void> {
    const client = this.slack.app.client;
    await this.outbox.call({
      method: 'chat.postMessage',
      channel,
      maxWaitMs: POST_MAX_WAIT_MS,
      send: () => client.chat.postMessage({ channel, unfurl_links: false, unfurl_media: false, ...message }),
    });
  }

  /** A new top-level message (the one `/steward ask` answers under), paced in its channel's lane like any post. */
  private async postTopLevel(channel: string, text: string): Promise<string | undefined> {
    const client = this.slack.app.client;
    const res = await this.outbox.call({
      method: 'chat.postMessage',
      channel,
      maxWaitMs: POST_MAX_WAIT_MS,
      send: () => client.chat.postMessage({ channel, text, unfurl_links: false, unfurl_media: false }),
    });
    return res.ts;
  }

  /** A Home view refreshed because a run started or ended: best effort, never in the way of the run's messages. */
  private refreshHome(work: Promise<void> | null | undefined): void {
    if (work) this.track(work);
  }

  private track(work: Promise<void>): void {
    const p: Promise<void> = work
      .catch((err: unknown) => this.options.log('error', `slack: ${(err as Error).message}`))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }
}
