/**
 * One Slack message per run, updated in place. Changes are folded into the card's state at once and sent at
 * most once per `minIntervalMs` per card (chat.update is rate limited); the last state is always sent.
 */
import type { PlanCard } from '../../engine/messages.ts';
import { createLiveCard, isFinished, withNewRevision, type LiveCard } from './slack-card-state.ts';
import { renderCard, type SlackMessage } from './slack-render.ts';

/** The two Web API calls a live card needs. */
export interface CardPoster {
  /** Posts a message in a thread and returns its ts. */
  post(channel: string, threadTs: string, message: SlackMessage): Promise<string>;
  update(channel: string, ts: string, message: SlackMessage): Promise<void>;
}

interface Entry {
  channel: string;
  threadTs: string;
  ts: string | null;
  live: LiveCard;
  dirty: boolean;
  busy: boolean;
  timer: NodeJS.Timeout | null;
  lastSentAt: number;
  waiters: (() => void)[];
}

/** Live cards by run id. */
export class LiveCards {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly poster: CardPoster,
    private readonly options: { minIntervalMs: number; now: () => number; log: (message: string) => void },
  ) {}

  /** Shows a plan card: posted the first time, replaced in place for a new revision or a re-sent card. */
  async show(channel: string, threadTs: string, card: PlanCard): Promise<void> {
    const existing = this.entries.get(card.runId);
    if (existing) {
      this.change(card.runId, (live, now) => withNewRevision(live, card, now));
      await this.settled(card.runId);
      return;
    }
    const entry: Entry = {
      channel,
      threadTs,
      ts: null,
      live: createLiveCard(card, this.options.now()),
      dirty: false,
      busy: true,
      timer: null,
      lastSentAt: 0,
      waiters: [],
    };
    this.entries.set(card.runId, entry);
    try {
      entry.ts = await this.poster.post(channel, threadTs, renderCard(entry.live, this.options.now()));
    } catch (err) {
      this.entries.delete(card.runId);
      for (const resolve of entry.waiters.splice(0)) resolve();
      throw err;
    } finally {
      entry.lastSentAt = this.options.now();
      entry.busy = false;
    }
    this.afterSend(card.runId, entry);
  }

  /** Applies a change to a run's card (ignored when this process shows no card for the run) and schedules a send. */
  change(runId: string, fn: (live: LiveCard, now: number) => LiveCard): void {
    const entry = this.entries.get(runId);
    if (!entry) return;
    entry.live = fn(entry.live, this.options.now());
    entry.dirty = true;
    this.schedule(runId, entry);
  }

  /** Resolves once everything changed so far has been sent. */
  settled(runId: string): Promise<void> {
    const entry = this.entries.get(runId);
    if (!entry || (!entry.dirty && !entry.busy && !entry.timer)) return Promise.resolve();
    return new Promise((resolve) => entry.waiters.push(resolve));
  }

  /** The summary on a run's card ('' when this process shows none). */
  summaryOf(runId: string): string {
    return this.entries.get(runId)?.live.card.summary ?? '';
  }

  /** Whether a thread holds the card of a run that has not ended. */
  hasActiveCard(channel: string, threadTs: string): boolean {
    for (const e of this.entries.values())
      if (e.channel === channel && e.threadTs === threadTs && !isFinished(e.live)) return true;
    return false;
  }

  /** Sends every pending change now (used at shutdown). */
  async flushAll(): Promise<void> {
    for (const [runId, entry] of this.entries) {
      if (entry.timer) {
        clearTimeout(entry.timer);
        entry.timer = null;
        this.send(runId, entry);
      }
    }
    await Promise.all([...this.entries.keys()].map((runId) => this.settled(runId)));
  }

  private schedule(runId: string, entry: Entry): void {
    if (entry.busy || entry.timer) return;
    const wait = Math.max(0, entry.lastSentAt + this.options.minIntervalMs - this.options.now());
    entry.timer = setTimeout(() => {
      entry.timer = null;
      this.send(runId, entry);
    }, wait);
  }

  private send(runId: string, entry: Entry): void {
    if (entry.ts === null) return;
    entry.dirty = false;
    entry.busy = true;
    this.poster
      .update(entry.channel, entry.ts, renderCard(entry.live, this.options.now()))
      .catch((err: unknown) => this.options.log(`run ${runId}: card update failed: ${(err as Error).message}`))
      .finally(() => {
        entry.busy = false;
        entry.lastSentAt = this.options.now();
        this.afterSend(runId, entry);
      });
  }

  private afterSend(runId: string, entry: Entry): void {
    if (entry.dirty) return this.schedule(runId, entry);
    // A finished card never changes again: forget it, so memory stays bounded by the runs in flight.
    if (isFinished(entry.live) && this.entries.get(runId) === entry) this.entries.delete(runId);
    for (const resolve of entry.waiters.splice(0)) resolve();
  }
}
