/**
 * The Discord channel: a mention starts a request in a thread on that message, the plan card is one message per run
 * kept up to date in place, buttons, menus and modals become decisions, and replies go in the thread. Everything is
 * sent through discord.js's REST client, which keeps Discord's per-route rate limits and retries a 429 after its
 * `retry_after`; card edits are coalesced by `LiveCards` first, so a busy card asks for at most one edit a second.
 */
import { runFilesMessage } from './discord-attachments.ts';
import { createHash } from 'node:crypto';
import {
  MessageFlags,
  RESTEvents,
  RESTJSONErrorCodes,
  Routes,
  type Client,
  type RepliableInteraction,
} from 'discord.js';
import type { ChannelAdapter, InboundHandler } from '../../engine/channel.ts';
import type { OutboundMessage, Report } from '../../engine/messages.ts';
import type { Conversation } from '../../engine/ports.ts';
import type { Breakpoint } from '../../engine/plan/breakpoints.ts';
import type { Actor } from '../../engine/types.ts';
import { withBreakpoints, withProgress, withReport, withRunStatus } from '../live-card-state.ts';
import { LiveCards } from '../live-cards.ts';
import { createDiscordClient, logIn, type DiscordSettings } from './discord-client.ts';
import {
  ASK_MESSAGE_COMMAND,
  ASK_MESSAGE_GUILD_COMMAND,
  STEWARD_COMMAND,
  STEWARD_GUILD_COMMAND,
} from './discord-command-text.ts';
import { registerAskMessage } from './discord-ask-message.ts';
import { registerCommands } from './discord-commands.ts';
import { fromConversation } from './discord-inbound.ts';
import { registerInteractions } from './discord-interactions.ts';
import { registerMessages } from './discord-messages.ts';
import { renderCard, textMessage, toMessageOptions, type DiscordMessage } from './discord-render.ts';
import { renderQuestion, renderQuestionEnded } from './discord-question.ts';
import { questionClosedText } from '../question-words.ts';
import type { QuestionCard } from '../../engine/messages.ts';
import { renderConnectionCheck } from './discord-connections.ts';
import { renderAnswer, renderBreakpoint, renderNotice, renderReport } from './discord-thread-render.ts';
import { TypingSigns } from './discord-typing.ts';

const STOP_GRACE_MS = 10_000;
/** Interaction tokens live 15 minutes; a private follow-up is only tried on one younger than this. */
const TOKEN_MAX_AGE_MS = 14 * 60_000;
/** Card edits try again after a network error or a 5xx this many times (discord.js retries 429s itself). */
const UPDATE_TRANSIENT_RETRIES = 4;

/** A message Discord creates at most once per nonce within a few minutes (Create Message, `enforce_nonce`). */
type OnceMessage = DiscordMessage & { nonce: string; enforce_nonce: true };

/** The nonce of one part of a run's report: the same in every process, at most Discord's 25 characters. */
function reportNonce(runId: string, part: number): string {
  return createHash('sha256').update(`report:${runId}:${part}`).digest('base64url').slice(0, 25);
}

/** Discord settings plus the log, and how often one card's progress is edited (default 1 s; a final state at once). */
export interface DiscordChannelOptions extends DiscordSettings {
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  minUpdateIntervalMs?: number;
  now?: () => number;
  /**
   * Told of each 429 Discord answers (discord.js waits it out and sends the call again), with the HTTP method and
   * route as discord.js buckets it, ids and tokens left out (`PATCH /channels/:id/messages/:id`), for the metrics.
   */
  onRateLimited?: (method: string) => void;
}

/** The last interaction a person made: a private notice for them goes as its ephemeral follow-up while it lives. */
interface LastPress {
  interaction: RepliableInteraction;
  at: number;
  channelId: string | null;
}

/** A channel adapter over a discord.js client. */
export class DiscordChannel implements ChannelAdapter {
  readonly name = 'discord';
  readonly client: Client;
  private readonly cards: LiveCards<DiscordMessage>;
  private readonly pending = new Set<Promise<void>>();
  private readonly presses = new Map<string, LastPress>();
  /** Questions shown by this process, so their message can say how they ended. */
  private readonly questions = new Map<string, { card: QuestionCard; channelId: string; messageId: string }>();
  private readonly typing: TypingSigns;
  private started = false;

  constructor(private readonly options: DiscordChannelOptions) {
    this.client = createDiscordClient(options);
    const { onRateLimited } = options;
    // Only answers that were 429s: discord.js's `rateLimited` event also fires when it waits before sending.
    if (onRateLimited)
      this.client.rest.on(RESTEvents.Response, (request, response) => {
        if (response.status === 429) onRateLimited(`${request.method.toUpperCase()} ${request.route}`);
      });
    this.typing = new TypingSigns(
      (channelId) => this.client.rest.post(Routes.channelTyping(channelId)),
      (m) => options.log('warn', m),
    );
    this.cards = new LiveCards<DiscordMessage>(
      {
        post: (channelId, _thread, message) => this.post(channelId, message),
        update: (channelId, messageId, latest) => this.edit(channelId, messageId, latest),
      },
      {
        render: (live, now) =>
          renderCard(live, now, options.messageContent ? {} : { mentionToReply: this.client.user?.username }),
      },
      {
        minIntervalMs: options.minUpdateIntervalMs ?? 1_000,
        now: options.now ?? Date.now,
        log: (m) => options.log('warn', m),
      },
    );
  }

  /** The clock of cards and interaction tokens (tests move it). */
  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async start(handler: InboundHandler): Promise<void> {
    const deps = {
      handler,
      client: this.client,
      log: this.options.log,
      track: (work: Promise<void>) => this.track(work),
      typing: this.typing,
      hasActiveCard: (channelId: string) => this.cards.hasActiveCard(channelId, channelId),
      summaryOf: (runId: string) => this.cards.summaryOf(runId),
      pressed: (actor: Actor, interaction: RepliableInteraction) =>
        this.presses.set(actor.id, { interaction, at: this.now(), channelId: interaction.channelId }),
      showBreakpoints: (runId: string, breakpoints: readonly Breakpoint[]) =>
        this.cards.change(runId, (live) => withBreakpoints(live, breakpoints)),
      post: (channelId: string, message: DiscordMessage) => this.post(channelId, message).then(() => undefined),
    };
    registerMessages(deps);
    registerInteractions(deps);
    registerCommands(deps);
    registerAskMessage(deps);
    await logIn(this.client, this.options.token);
    await this.registerSlashCommand(deps);
    this.started = true;
  }

  async stop(): Promise<void> {
    // A planner call in flight may take a minute; a run cut short while planning is failed cleanly at restart.
    await Promise.race([this.settled(), new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
    await this.cards.flushAll();
    this.typing.clearAll();
    if (this.started) await this.client.destroy();
    this.started = false;
  }

  /** Resolves once every engine call started by a Discord event so far has returned. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async send(conversation: Conversation, message: OutboundMessage): Promise<void> {
    const where = fromConversation(conversation);
    switch (message.kind) {
      case 'plan':
        if (where) await this.cards.show(where.channelId, where.channelId, message);
        return;
      case 'progress':
        return this.cards.change(message.runId, (live, now) => withProgress(live, message, now));
      case 'runStatus':
        return this.cards.change(message.runId, (live, now) => withRunStatus(live, message, now), true);
      case 'report':
        // The card's final state is an edit on its own route; the report is a new message and does not wait for it.
        this.cards.change(message.runId, (live, now) => withReport(live, message, now), true);
        if (where) await this.postReport(where.channelId, message);
        return;
      case 'breakpoint':
        if (where) await this.post(where.channelId, renderBreakpoint(message));
        return;
      case 'answer':
        if (where) await this.postAll(where.channelId, renderAnswer(message));
        return;
      case 'notice':
        if (message.to) return this.privately(message.to, where?.channelId ?? null, renderNotice(message));
        if (where) await this.post(where.channelId, renderNotice(message));
        return;
      case 'files': {
        if (!where) return;
        const { body, files } = runFilesMessage(message);
        try {
          await this.client.rest.post(Routes.channelMessages(where.channelId), { body, files });
        } catch (err) {
          // Refused (a server's own lower limit, say): the thread still learns the files exist and why they are missing.
          const why = `\n• The files could not be attached (Discord said: ${(err as Error).message.slice(0, 200)}).`;
          const content = `${String(body.content)}${why}`.slice(0, 2000);
          await this.post(where.channelId, textMessage(content));
        }
        return;
      }
      case 'connectionCheck':
        return this.privately(message.to, where?.channelId ?? null, renderConnectionCheck(message));
      case 'question': {
        if (!where) return;
        const id = await this.post(where.channelId, renderQuestion(message));
        this.questions.set(message.questionId, { card: message, channelId: where.channelId, messageId: id });
        return;
      }
      case 'questionClosed': {
        const shown = this.questions.get(message.questionId);
        this.questions.delete(message.questionId);
        // Its buttons go, and the message says how it ended; shown by another process, a line in the thread says so.
        if (shown) return this.edit(shown.channelId, shown.messageId, () => renderQuestionEnded(shown.card, message));
        if (where) await this.post(where.channelId, textMessage(questionClosedText(message, (a) => `<@${a.id}>`)));
        return;
      }
    }
  }

  /**
   * A notice for one person: an ephemeral follow-up to their last press while its token lives (15 minutes); else a
   * direct message, which stays private; only where Discord refuses that, a normal message where the notice belongs.
   */
  private async privately(actor: Actor, channelId: string | null, message: DiscordMessage): Promise<void> {
    const last = this.presses.get(actor.id);
    if (last && this.now() - last.at < TOKEN_MAX_AGE_MS) {
      try {
        await last.interaction.followUp({ ...toMessageOptions(message), flags: MessageFlags.Ephemeral });
        return;
      } catch (err) {
        this.options.log('warn', `discord: a private follow-up failed (${(err as Error).message})`);
      }
    }
    try {
      const dm = (await this.client.rest.post(Routes.userChannels(), { body: { recipient_id: actor.id } })) as {
        id: string;
      };
      await this.post(dm.id, message);
      return;
    } catch (err) {
      this.options.log('warn', `discord: could not message ${actor.id} directly (${(err as Error).message})`);
    }
    const to = channelId ?? last?.channelId;
    if (!to) return this.options.log('warn', `discord: nowhere to show a notice to ${actor.id}`);
    await this.post(to, message);
  }

  /**
   * Posts a report, each of its messages with a nonce of the run and the part that Discord enforces. A process killed
   * after posting a report but before noting it sent leaves it owed, and the process that takes the run over sends it
   * again: with the same nonces Discord returns the messages already there instead of creating a second report. The
   * first post carries the nonce too (it cannot know it will die), and Discord remembers one only a few minutes.
   */
  private async postReport(channelId: string, report: Report): Promise<void> {
    for (const [part, message] of renderReport(report).entries())
      await this.post(channelId, { ...message, nonce: reportNonce(report.runId, part), enforce_nonce: true });
  }

  /** Posts a message in a channel or thread and returns its id; Steward's first message ends the typing sign. */
  private async post(channelId: string, message: DiscordMessage | OnceMessage): Promise<string> {
    const res = (await this.client.rest.post(Routes.channelMessages(channelId), { body: message })) as { id: string };
    this.typing.clear(channelId);
    return res.id;
  }

  private async postAll(channelId: string, messages: readonly DiscordMessage[]): Promise<void> {
    for (const m of messages) await this.post(channelId, m);
  }

  /** Edits a card with its latest state; a network error or a 5xx is tried again (a 429 waits inside discord.js). */
  private async edit(channelId: string, messageId: string, latest: () => DiscordMessage): Promise<void> {
    let unarchived = false;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.client.rest.patch(Routes.channelMessage(channelId, messageId), { body: latest() });
        return;
      } catch (err) {
        // The run's thread archived itself (a plan that waited longer than the thread's inactivity time): opened
        // again, as a person's message there would, and the card is edited once more.
        if ((err as { code?: unknown }).code === RESTJSONErrorCodes.InvalidActionOnArchivedThread && !unarchived) {
          unarchived = true;
          await this.client.rest.patch(Routes.channel(channelId), { body: { archived: false } });
          this.options.log(
            'info',
            `discord: thread ${channelId} had archived itself; opened it again to update a card`,
          );
          continue;
        }
        const status = (err as { status?: number }).status;
        const transient = status === undefined || status >= 500;
        if (!transient || attempt >= UPDATE_TRANSIENT_RETRIES) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 500 * 2 ** attempt)));
      }
    }
  }

  /** `/steward` in the configured server (seen at once) or globally (Discord shows it within the hour). */
  private async registerSlashCommand(deps: { log: DiscordChannelOptions['log'] }): Promise<void> {
    const appId = this.client.application?.id;
    if (!appId) return deps.log('warn', 'discord: no application id at ready; /steward is not registered');
    const route = this.options.guildId
      ? Routes.applicationGuildCommands(appId, this.options.guildId)
      : Routes.applicationCommands(appId);
    try {
      const guild = Boolean(this.options.guildId);
      const body = guild ? [STEWARD_GUILD_COMMAND, ASK_MESSAGE_GUILD_COMMAND] : [STEWARD_COMMAND, ASK_MESSAGE_COMMAND];
      await this.client.rest.put(route, { body });
    } catch (err) {
      deps.log('warn', `discord: could not register /steward (${(err as Error).message}); mentions still work`);
    }
  }

  private track(work: Promise<void>): void {
    const p: Promise<void> = work
      .catch((err: unknown) => this.options.log('error', `discord: ${(err as Error).message}`))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }
}
