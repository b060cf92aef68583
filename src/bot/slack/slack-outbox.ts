/**
 * Every Web API call Steward makes for its output waits here in its lane (method and channel, or method across the
 * workspace: `slack-pacing.ts`) and goes when Slack's pace allows. A 429 holds only its own lane until Retry-After
 * and the call waits there to go again; no other method or channel waits. Within a lane, lower priority goes first
 * (a card's final state before progress of other cards), then the oldest.
 */
import { classifyFailure, laneKey, LaneClock, paceOf } from './slack-pacing.ts';
import { CardPriority } from '../live-cards.ts';

/** Order within a lane: lower goes first. */
export const Priority = { ...CardPriority, reply: 1, newCard: 2 } as const;

/** A call to make through the outbox. */
export interface OutboxCall<T> {
  method: string;
  channel: string;
  /** Makes the call; it runs when the call goes (again after a 429), so it can send the latest state. */
  send: () => Promise<T>;
  /** Read when the lane picks its next call, so a waiting card update can become urgent (default `reply`). */
  priority?: number | (() => number);
  /** Longest time the call may wait in its lane before it is given up with a logged error (default: no limit). */
  maxWaitMs?: number;
  /** Tries again after a network error or a 5xx (the WebClient already retried it a little); default 0. */
  transientRetries?: number;
}

interface Job {
  seq: number;
  what: string;
  priority: () => number;
  send: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  queuedAt: number;
  deadline: number;
  notBefore: number;
  transientLeft: number;
  failures: number;
}

interface Lane {
  key: string;
  method: string;
  clock: LaneClock;
  queue: Job[];
  inFlight: number;
  timer: NodeJS.Timeout | null;
  wakeAt: number;
}

const BACKOFF_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

/** Lanes of Web API calls, paced as Slack allows; each call's promise settles when Slack accepted or refused it. */
export class SlackOutbox {
  /** 429s answered so far, by lane. */
  readonly rateLimited: Record<string, number> = {};
  private readonly lanes = new Map<string, Lane>();
  private seq = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly options: {
      log: (level: 'info' | 'warn' | 'error', message: string) => void;
      now?: () => number;
      /** Told of each 429, with the Web API method it answered (for the operator's metrics). */
      onRateLimited?: (method: string) => void;
    },
  ) {}

  /** Queues a call in its lane; resolves with Slack's answer, rejects on a refusal, a give-up or shutdown. */
  call<T>(c: OutboxCall<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`slack: ${c.method} not sent: the channel is shutting down`));
    const now = this.now();
    const lane = this.laneFor(laneKey(c.method, c.channel), c.method, now);
    const priority = c.priority ?? Priority.reply;
    return new Promise<T>((resolve, reject) => {
      lane.queue.push({
        seq: this.seq++,
        what: `${c.method} in ${c.channel}`,
        priority: typeof priority === 'number' ? () => priority : priority,
        send: c.send,
        resolve: resolve as (value: unknown) => void,
        reject,
        queuedAt: now,
        deadline: c.maxWaitMs === undefined ? Number.POSITIVE_INFINITY : now + c.maxWaitMs,
        notBefore: 0,
        transientLeft: c.transientRetries ?? 0,
        failures: 0,
      });
      this.pump(lane);
    });
  }

  /** Calls queued or in flight. */
  get pending(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.queue.length + lane.inFlight;
    return n;
  }

  /** Resolves true once nothing is queued or in flight, or false after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.pending === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([idle, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Refuses new calls and gives up the queued ones (logged), so shutdown ends; calls in flight still settle. */
  close(): void {
    this.closed = true;
    const left: string[] = [];
    for (const lane of this.lanes.values()) {
      if (lane.timer) clearTimeout(lane.timer);
      lane.timer = null;
      for (const job of lane.queue.splice(0)) {
        left.push(job.what);
        job.reject(new Error(`slack: ${job.what} not sent: the channel shut down while it waited`));
      }
    }
    if (left.length > 0)
      this.options.log('warn', `slack: ${left.length} call(s) still waiting at shutdown were dropped (${left[0]}…)`);
  }

  private pump(lane: Lane): void {
    const now = this.now();
    this.expire(lane, now);
    while (lane.queue.length > 0 && lane.inFlight < lane.clock.pace.inFlight) {
      const wait = lane.clock.waitMs(now);
      if (wait > 0) return this.wake(lane, now + wait);
      const i = nextJob(lane.queue, now);
      if (i < 0) return this.wake(lane, Math.min(...lane.queue.map((j) => j.notBefore)));
      const [job] = lane.queue.splice(i, 1) as [Job];
      lane.clock.take(now);
      this.dispatch(lane, job);
    }
    if (lane.queue.length === 0 && lane.inFlight === 0) this.retire(lane, now);
  }

  private dispatch(lane: Lane, job: Job): void {
    lane.inFlight += 1;
    void job
      .send()
      .then(job.resolve, (err: unknown) => this.failed(lane, job, err))
      .finally(() => {
        lane.inFlight -= 1;
        this.pump(lane);
        if (this.pending === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      });
  }

  private failed(lane: Lane, job: Job, err: unknown): void {
    const f = classifyFailure(err);
    const now = this.now();
    if (f.kind === 'rateLimited' && !this.closed) {
      lane.clock.refused(now, f.retryAfterMs);
      this.rateLimited[lane.key] = (this.rateLimited[lane.key] ?? 0) + 1;
      this.options.onRateLimited?.(lane.method);
      lane.queue.push(job);
      return;
    }
    if (f.kind === 'transient' && job.transientLeft > 0 && !this.closed) {
      job.transientLeft -= 1;
      job.notBefore = now + (BACKOFF_MS[Math.min(job.failures++, BACKOFF_MS.length - 1)] ?? 30_000);
      lane.queue.push(job);
      return;
    }
    if (f.kind === 'permanent')
      this.options.log('error', `slack: Slack refused ${job.what}: ${f.reason} (not retried)`);
    job.reject(err);
  }

  /** Gives up calls that waited longer than they may: a lane held that long means Slack is refusing it for good. */
  private expire(lane: Lane, now: number): void {
    for (const job of lane.queue.filter((j) => j.deadline <= now)) {
      lane.queue.splice(lane.queue.indexOf(job), 1);
      const waited = Math.round((now - job.queuedAt) / 1000);
      const message = `slack: ${job.what} waited ${waited} s in its lane (rate limited) and was given up`;
      this.options.log('error', message);
      job.reject(new Error(message));
    }
  }

  private wake(lane: Lane, at: number): void {
    const deadline = Math.min(...lane.queue.map((j) => j.deadline));
    const when = Math.min(at, deadline);
    if (lane.timer && lane.wakeAt <= when) return;
    if (lane.timer) clearTimeout(lane.timer);
    lane.wakeAt = when;
    lane.timer = setTimeout(
      () => {
        lane.timer = null;
        this.pump(lane);
      },
      Math.max(0, when - this.now()),
    );
  }

  /** Drops an idle lane once its bucket is full again, so lanes stay bounded by the channels in use. */
  private retire(lane: Lane, now: number): void {
    const fullIn = lane.clock.fullInMs(now);
    if (fullIn > 0 && !this.closed) return this.wake(lane, now + fullIn);
    if (lane.timer) clearTimeout(lane.timer);
    this.lanes.delete(lane.key);
  }

  private laneFor(key: string, method: string, now: number): Lane {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { key, method, clock: new LaneClock(paceOf(method), now), queue: [], inFlight: 0, timer: null, wakeAt: 0 };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** The lowest priority ready to go, the oldest first; -1 when every call waits out a backoff. */
function nextJob(queue: readonly Job[], now: number): number {
  let best = -1;
  let bestPriority = Number.POSITIVE_INFINITY;
  queue.forEach((job, i) => {
    if (job.notBefore > now) return;
    const p = job.priority();
    if (p < bestPriority || (p === bestPriority && job.seq < (queue[best]?.seq ?? Number.POSITIVE_INFINITY))) {
      best = i;
      bestPriority = p;
    }
  });
  return best;
}
