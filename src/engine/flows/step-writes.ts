/**
 * The step writes of one dispatcher transition, stored by one statement: the ends it records and the starts it
 * makes, once each start is ready (its tool's definition checked). So a step's end and the starts of the steps that
 * waited for it commit together. A start still not ready shortly after the first one was is written on its own.
 */
import type { RunEndWrite, StepEnd, StepLog, StepStart } from '../ports.ts';

/**
 * How long a wave waits for its slowest start to be ready before it stores what it has: a step's end must not wait
 * long for a sibling's definition check (a crash meanwhile would lose a result whose call was made). A check is one
 * tools/list round trip, a few milliseconds on an idle machine and tens to a hundred on a busy one (measured in CI on
 * two cores): 50 ms split most waves there into one write per step.
 */
const LATE_START_MS = 150;

/**
 * A start the store did not write because a person's Pause or Stop was stored, or queued by another process, before
 * it: its call must not go out.
 */
export class StartsHeld extends Error {
  constructor() {
    super('a Pause or Stop came first: the step was not started');
    this.name = 'StartsHeld';
  }
}

/** What a wave needs from its driver. */
export interface WaveDeps {
  runId: string;
  fence: number;
  store: StepLog;
  /** Each step's last write; a wave's write comes after those of its steps and of their dependencies. */
  queues: Map<string, Promise<void>>;
  /** Runs a write until it is stored (retrying while the database is away), or until the run is let go. */
  durably: (what: string, write: () => Promise<void>) => Promise<void>;
  /** Told when a write failed for good (the ends in it are not stored). */
  failed: (what: string, err: unknown) => void;
}

interface PendingStart {
  stepId: string;
  start?: StepStart;
  /** Settled once the start is stored (or its write failed). */
  stored: Deferred;
}

/** One transition's ends and starts; `close` once the transition's effects were all handed in. */
export class StepWave {
  private readonly ends: StepEnd[] = [];
  /** The run's end, when this transition ended the run: stored with the wave's ends, if it has any. */
  private runEnd: { write: RunEndWrite; stored: () => void } | undefined;
  private readonly starts = new Map<string, PendingStart>();
  private readonly deps = new Set<string>();
  private prior: Promise<unknown> = Promise.resolve();
  private written = deferred();
  private closed = false;
  private flushed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly o: WaveDeps) {}

  /** An attempt's end, to be stored with this wave. */
  end(e: StepEnd): void {
    this.ends.push(e);
  }

  /**
   * The run ended with this transition: its end goes with the wave's write (`stored` is told once it is), so the last
   * steps' ends and the run's end are one statement. A wave with nothing else to write leaves the end to its owner.
   */
  endRun(write: RunEndWrite, stored: () => void): void {
    this.runEnd = { write, stored };
  }

  /** A start the transition made; `ready` or `withdraw` follows for each. */
  expectStart(key: string, stepId: string, dependsOn: readonly string[]): void {
    this.starts.set(key, { stepId, stored: deferred() });
    for (const d of dependsOn) this.deps.add(d);
  }

  /** Every write of the transition is known: the wave is ordered after earlier writes of its steps. */
  close(): void {
    this.closed = true;
    const steps = new Set([...this.ends.map((e) => e.stepId), ...[...this.starts.values()].map((s) => s.stepId)]);
    const before = [...steps, ...this.deps].flatMap((id) => this.o.queues.get(id) ?? []);
    this.prior = Promise.all(before);
    const done = this.written.promise.catch(() => undefined);
    for (const id of steps) this.o.queues.set(id, done);
    this.flushIfSettled();
    if (!this.flushed) this.timer = setTimeout(() => this.flush(), LATE_START_MS);
  }

  /** The start is ready to be stored; resolves once it is (with the wave, or alone when it came late). */
  ready(key: string, start: StepStart): Promise<void> {
    const pending = this.starts.get(key);
    if (!pending) return Promise.reject(new Error(`no start ${key} expected in this wave`));
    if (this.flushed) return this.writeAlone(pending, start);
    pending.start = start;
    this.flushIfSettled();
    return pending.stored.promise;
  }

  /** The start will not be stored (its definition changed, or it was stopped before its write). */
  withdraw(key: string): void {
    const pending = this.starts.get(key);
    if (!pending || pending.start === undefined || !this.flushed) this.starts.delete(key);
    this.flushIfSettled();
  }

  private flushIfSettled(): void {
    if (this.closed && !this.flushed && [...this.starts.values()].every((s) => s.start !== undefined)) this.flush();
  }

  private flush(): void {
    if (this.flushed) return;
    this.flushed = true;
    clearTimeout(this.timer);
    const going = [...this.starts.entries()].filter(([, s]) => s.start !== undefined);
    if (this.ends.length === 0 && going.length === 0) return this.written.resolve();
    // Late starts wait for this write too: it holds their dependencies' ends.
    const runEnd = this.runEnd;
    const what = describe(this.ends, going.length, runEnd !== undefined);
    let held = false;
    const write = this.prior.then(() =>
      this.o.durably(what, async () => {
        const recorded = await this.o.store.recordSteps({
          runId: this.o.runId,
          fence: this.o.fence,
          ended: this.ends,
          started: going.filter(([key]) => this.starts.has(key)).map(([, s]) => s.start as StepStart),
          unlessHeld: true,
          ...(runEnd && { endRun: runEnd.write }),
        });
        held = recorded.startsHeld;
      }),
    );
    if (runEnd) void write.then(runEnd.stored, () => undefined);
    write.then(this.written.resolve, (err: unknown) => {
      this.written.reject(err);
      this.o.failed(what, err);
    });
    // The ends are stored either way; the starts only when no Pause or Stop came first.
    for (const [, s] of going)
      write.then(() => (held ? s.stored.reject(new StartsHeld()) : s.stored.resolve()), s.stored.reject);
  }

  /** A start that missed its wave: stored on its own, after the wave's write. */
  private writeAlone(pending: PendingStart, start: StepStart): Promise<void> {
    const write = this.written.promise
      .catch(() => undefined)
      .then(() =>
        this.o.durably(`the start of step ${start.stepId}`, async () => {
          const recorded = await this.o.store.recordSteps({
            runId: this.o.runId,
            fence: this.o.fence,
            ended: [],
            started: [start],
            unlessHeld: true,
          });
          if (recorded.startsHeld) throw new StartsHeld();
        }),
      );
    pending.start = start;
    this.o.queues.set(
      pending.stepId,
      write.catch(() => undefined),
    );
    return write;
  }
}

/** A promise with its settle functions (Node 20 has no `Promise.withResolvers`). */
interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function deferred(): Deferred {
  const d = {} as Deferred;
  d.promise = new Promise<void>((resolve, reject) => Object.assign(d, { resolve, reject }));
  // Nobody may be waiting (every start of the wave was withdrawn): a failure is then only logged by the driver.
  d.promise.catch(() => undefined);
  return d;
}

function describe(ends: readonly StepEnd[], starts: number, runEnd: boolean): string {
  const ended = ends.map((e) => `the end of step ${e.stepId}`);
  const started = starts > 0 ? [`${starts} step start${starts === 1 ? '' : 's'}`] : [];
  return [...ended, ...started, ...(runEnd ? ['the end of the run'] : [])].join(' and ');
}
