/**
 * One chat message per run, updated in place (Slack and Discord). Changes are folded into the card's state at once
 * and handed to the platform at most once per `minIntervalMs` per card; the update is rendered when it goes, so it
 * carries the latest state. A final state goes at once and first; a card is forgotten only once the platform
 * accepted its final state.
 */
import type { PlanCard } from '../engine/messages.ts';
import { createLiveCard, isFinished, withNewRevision, type LiveCard } from './live-card-state.ts';

/** How urgent a card update is (lower goes first): a final state, then a status change, then progress. */
export const CardPriority = { finalState: 0, statusChange: 1, progress: 3 } as const;

/** The two platform calls a live card needs, for messages of type `M`. */
export interface CardPoster<M> {
  /** Posts a message in a thread and returns its id (Slack: its ts). */
  post(channel: string, thread: string, message: M): Promise<string>;
  /**
   * Updates a message with `latest()`, read when the call goes (after any wait or 429), at the priority
   * `priority()` says then; resolves once the platform accepted it.
   */
  update(channel: string, id: string, latest: () => M, priority: () => number): Promise<void>;
}

/** How a platform draws a card, and what it does when a drawing is refused. */
export interface CardRenderer<M> {
  render(live: LiveCard, now: number): M;
  /**
   * Called when sending `message` failed with `err`: true when the platform refused a form that a second drawing
   * avoids (Slack's plan block), so the card is sent again at once; false to give up on this state.
   */
  refused?(err: unknown, message: M | null): boolean;
}

interface Entry {
  channel: string;
  thread: string;
  ts: string | null;
  live: LiveCard;
  /** Bumped by every change; `sent` is the version the platform last accepted, `urgentAt` the first unsent urgent one. */
  version: number;
  sent: number;
  urgentAt: number;
  /** An update is waiting in the outbox or in flight. */
  queued: boolean;
  timer: NodeJS.Timeout | null;
  lastSentAt: number;
  waiters: (() => void)[];
}

/** Live cards by run id. */
export class LiveCards<M> {
  private readonly entries = new Map<string, Entry>();
  private flushing = false;

  constructor(
    private readonly poster: CardPoster<M>,
    private readonly renderer: CardRenderer<M>,
    private readonly options: {
      minIntervalMs: number;
      now: () => number;
      log: (message: string) => void;
    },
  ) {}

  /** Shows a plan card: posted the first time, replaced in place for a new revision or a re-sent card. */
  async show(channel: string, thread: string, card: PlanCard): Promise<void> {
    if (this.entries.has(card.runId)) {
      this.change(card.runId, (live, now) => withNewRevision(live, card, now), true);
      await this.settled(card.runId);
      return;
    }
    const entry: Entry = {
      channel,
      thread,
      ts: null,
      live: createLiveCard(card, this.options.now()),
      version: 0,
      sent: 0,
      urgentAt: 0,
      queued: false,
      timer: null,
      lastSentAt: 0,
      waiters: [],
    };
    this.entries.set(card.runId, entry);
    try {
      const first = this.render(entry.live);
      entry.ts = await this.poster.post(channel, thread, first).catch((err: unknown) => {
        if (!this.renderer.refused?.(err, first)) throw err;
        return this.poster.post(channel, thread, this.render(entry.live));
      });
    } catch (err) {
      this.entries.delete(card.runId);
      for (const resolve of entry.waiters.splice(0)) resolve();
      throw err;
    }
    entry.lastSentAt = this.options.now();
    this.afterSend(card.runId, entry);
  }

  /**
   * Applies a change to a run's card (ignored when this process shows no card for the run) and schedules an
   * update; `urgent` (a status change, a revision) goes before progress of other cards.
   */
  change(runId: string, fn: (live: LiveCard, now: number) => LiveCard, urgent = false): void {
    const entry = this.entries.get(runId);
    if (!entry) return;
    const next = fn(entry.live, this.options.now());
    // The report after a final status changes nothing a person sees: no second update.
    if (next === entry.live || (isFinished(entry.live) && next.status === entry.live.status)) return;
    entry.live = next;
    entry.version += 1;
    if (urgent && entry.urgentAt <= entry.sent) entry.urgentAt = entry.version;
    this.schedule(runId, entry);
  }

  /** Resolves once everything changed so far has been accepted by the platform, or given up. */
  settled(runId: string): Promise<void> {
    const entry = this.entries.get(runId);
    if (!entry || (entry.sent === entry.version && !entry.queued && entry.ts !== null)) return Promise.resolve();
    return new Promise((resolve) => entry.waiters.push(resolve));
  }

  /** The summary on a run's card ('' when this process shows none). */
  summaryOf(runId: string): string {
    return this.entries.get(runId)?.live.card.summary ?? '';
  }

  /** Whether a thread holds the card of a run that has not ended. */
  hasActiveCard(channel: string, thread: string): boolean {
    for (const e of this.entries.values())
      if (e.channel === channel && e.thread === thread && !isFinished(e.live)) return true;
    return false;
  }

  /** Sends every pending change now, without the per-card pause (at shutdown); resolves when all settled. */
  async flushAll(): Promise<void> {
    this.flushing = true;
    for (const [runId, entry] of this.entries) {
      if (!entry.timer) continue;
      clearTimeout(entry.timer);
      entry.timer = null;
      this.send(runId, entry);
    }
    await Promise.all([...this.entries.keys()].map((runId) => this.settled(runId)));
  }

  private schedule(runId: string, entry: Entry): void {
    if (entry.ts === null || entry.queued) return;
    // A final state is the last change a card gets: nothing is gained by holding it back.
    const now = this.flushing || isFinished(entry.live);
    if (entry.timer && !now) return;
    if (entry.timer) clearTimeout(entry.timer);
    const wait = now ? 0 : Math.max(0, entry.lastSentAt + this.options.minIntervalMs - this.options.now());
    entry.timer = setTimeout(() => {
      entry.timer = null;
      this.send(runId, entry);
    }, wait);
  }

  private send(runId: string, entry: Entry): void {
    const ts = entry.ts;
    if (ts === null) return;
    entry.queued = true;
    let rendered = entry.version;
    const last: { message: M | null } = { message: null };
    const latest = () => ((rendered = entry.version), (last.message = this.render(entry.live)));
    const priority = () =>
      isFinished(entry.live)
        ? CardPriority.finalState
        : entry.urgentAt > entry.sent
          ? CardPriority.statusChange
          : CardPriority.progress;
    const update = () => this.poster.update(entry.channel, ts, latest, priority);
    update()
      // The platform refused this form of the card (Slack: a plan block): it goes again at once, drawn the other way.
      .catch((err: unknown) => {
        if (this.renderer.refused?.(err, last.message)) return update();
        throw err;
      })
      .catch((err: unknown) => {
        const what = isFinished(entry.live) ? 'its final state is not shown' : 'it shows an older state';
        this.options.log(`run ${runId}: card update failed (${what}): ${(err as Error).message}`);
      })
      // A failed state is not tried again on its own (the platform refused it, or shutdown): the next change sends anew.
      .finally(() => {
        entry.sent = rendered;
        entry.queued = false;
        entry.lastSentAt = this.options.now();
        this.afterSend(runId, entry);
      });
  }

  private render(live: LiveCard): M {
    return this.renderer.render(live, this.options.now());
  }

  private afterSend(runId: string, entry: Entry): void {
    if (entry.version > entry.sent) return this.schedule(runId, entry);
    // A finished card never changes again: forget it, so memory stays bounded by the runs in flight.
    if (isFinished(entry.live) && this.entries.get(runId) === entry) this.entries.delete(runId);
    for (const resolve of entry.waiters.splice(0)) resolve();
  }
}
