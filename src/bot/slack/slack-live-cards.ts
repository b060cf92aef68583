/**
 * One Slack message per run, updated in place. Changes are folded into the card's state at once and handed to the
 * outbox at most once per `minIntervalMs` per card; the update is rendered when it goes, so it carries the latest
 * state. A final state goes at once and first; a card is forgotten only once Slack accepted its final state.
 */
import type { PlanCard } from '../../engine/messages.ts';
import { createLiveCard, isFinished, withNewRevision, type LiveCard } from './slack-card-state.ts';
import { Priority } from './slack-outbox.ts';
import { PlanBlockSwitch } from './slack-plan-block.ts';
import { renderCard, type SlackMessage } from './slack-render.ts';

/** The two Web API calls a live card needs. */
export interface CardPoster {
  /** Posts a message in a thread and returns its ts. */
  post(channel: string, threadTs: string, message: SlackMessage): Promise<string>;
  /**
   * Updates a message with `latest()`, read when the call goes (after any wait or 429), at the priority
   * `priority()` says then; resolves once Slack accepted it.
   */
  update(channel: string, ts: string, latest: () => SlackMessage, priority: () => number): Promise<void>;
}

interface Entry {
  channel: string;
  threadTs: string;
  ts: string | null;
  live: LiveCard;
  /** Bumped by every change; `sent` is the version Slack last accepted, `urgentAt` the first unsent urgent one. */
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
export class LiveCards {
  private readonly entries = new Map<string, Entry>();
  private flushing = false;
  private readonly plans: PlanBlockSwitch;

  constructor(
    private readonly poster: CardPoster,
    private readonly options: {
      minIntervalMs: number;
      now: () => number;
      log: (message: string) => void;
      /** Whether steps show as a native plan block (default: never). */
      planBlocks?: PlanBlockSwitch;
    },
  ) {
    this.plans = options.planBlocks ?? new PlanBlockSwitch(false, options.log);
  }

  /** Shows a plan card: posted the first time, replaced in place for a new revision or a re-sent card. */
  async show(channel: string, threadTs: string, card: PlanCard): Promise<void> {
    if (this.entries.has(card.runId)) {
      this.change(card.runId, (live, now) => withNewRevision(live, card, now), true);
      await this.settled(card.runId);
      return;
    }
    const entry: Entry = {
      channel,
      threadTs,
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
      entry.ts = await this.plans.send(
        () => this.render(entry.live),
        (message) => this.poster.post(channel, threadTs, message),
      );
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

  /** Resolves once everything changed so far has been accepted by Slack, or given up. */
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
  hasActiveCard(channel: string, threadTs: string): boolean {
    for (const e of this.entries.values())
      if (e.channel === channel && e.threadTs === threadTs && !isFinished(e.live)) return true;
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
    const last: { message: SlackMessage | null } = { message: null };
    const latest = () => ((rendered = entry.version), (last.message = this.render(entry.live)));
    const priority = () =>
      isFinished(entry.live)
        ? Priority.finalState
        : entry.urgentAt > entry.sent
          ? Priority.statusChange
          : Priority.progress;
    const update = () => this.poster.update(entry.channel, ts, latest, priority);
    update()
      // A workspace without plan blocks refused this one: the card goes again at once as step lines.
      .catch((err: unknown) => {
        if (this.plans.refusedPlan(err, last.message)) return update();
        throw err;
      })
      .catch((err: unknown) => {
        const what = isFinished(entry.live) ? 'its final state is not shown' : 'it shows an older state';
        this.options.log(`run ${runId}: card update failed (${what}): ${(err as Error).message}`);
      })
      // A failed state is not tried again on its own (Slack refused it, or shutdown): the next change sends anew.
      .finally(() => {
        entry.sent = rendered;
        entry.queued = false;
        entry.lastSentAt = this.options.now();
        this.afterSend(runId, entry);
      });
  }

  private render(live: LiveCard): SlackMessage {
    return renderCard(live, this.options.now(), { planBlocks: this.plans.enabled });
  }

  private afterSend(runId: string, entry: Entry): void {
    if (entry.version > entry.sent) return this.schedule(runId, entry);
    // A finished card never changes again: forget it, so memory stays bounded by the runs in flight.
    if (isFinished(entry.live) && this.entries.get(runId) === entry) this.entries.delete(runId);
    for (const resolve of entry.waiters.splice(0)) resolve();
  }
}
