/**
 * The runs the console has shown and not yet seen end, from the messages it was sent (pure bookkeeping): which one
 * typed commands are for, and, on `quit`, what becomes of each (Steward takes them up again at its next start).
 *
 * The rule for typed commands: they go to the active run the person had before them last: the last card shown, a
 * request still being planned (so "cancel" drops it), or the run picked with `use <id>`. A run that ends leaves that
 * place, so a quick answer (a run that ends without a card) hands it back to the run that had it before.
 */
import type { OutboundMessage } from '../engine/messages.ts';
import { isTerminal, type RunStatus } from '../engine/types.ts';
import { shortRunId } from '../engine/text.ts';

/** A run and the revision of its card last shown: what a typed decision names. */
export interface RunRef {
  runId: string;
  revision: number;
}

interface Seen {
  status: RunStatus;
  summary?: string;
  revision: number;
  /** When the person last had this run before them (higher is later); 0: never (a run seen only by its status). */
  focus: number;
}

const FATE: Partial<Record<RunStatus, string>> = {
  planning: 'was being planned; it is planned again when Steward next starts',
  awaiting_review: 'waits for your review; its plan is shown again when Steward next starts',
  paused: 'is paused; it stays paused and can be resumed when Steward next starts',
};

/** Active runs as this console last saw them, and the one typed commands are for. */
export class ConsoleRuns {
  private readonly active = new Map<string, Seen>();
  /** Delegated runs seen here, to the run that delegated each. */
  private readonly parents = new Map<string, string>();
  /** The last run that ended while commands went to it: with no run active, "history" and "stop" still name it. */
  private ended: RunRef | null = null;
  private tick = 0;

  /** Notes what a message says about a run's state, and which run typed commands are for now. */
  seen(message: OutboundMessage): void {
    if ((message.kind === 'plan' || message.kind === 'runStatus') && message.delegatedBy)
      this.parents.set(message.runId, message.delegatedBy);
    switch (message.kind) {
      case 'plan':
        this.set(message.runId, message.needsReview ? 'awaiting_review' : 'running', message.summary);
        return this.focus(message.runId, message.revision);
      case 'breakpoint':
        this.set(message.runId, 'paused');
        return this.focus(message.runId, message.revision);
      case 'runStatus':
        if (isTerminal(message.status)) return this.end(message.runId);
        // A request being planned has no card yet: "cancel" and "stop" act on it until it ends or shows one.
        if (message.status === 'planning' && !this.active.has(message.runId)) {
          this.set(message.runId, message.status);
          return this.focus(message.runId);
        }
        return this.set(message.runId, message.status);
      case 'report':
        return this.end(message.runId);
      default:
        return;
    }
  }

  /** The run typed commands are for: the active one the person had before them last, else the last that ended. */
  current(): RunRef | null {
    let best: [string, Seen] | undefined;
    for (const entry of this.active) if (!best || entry[1].focus > best[1].focus) best = entry;
    return best ? { runId: best[0], revision: best[1].revision } : this.ended;
  }

  /**
   * The run a pause, resume or stop is for: the run the person started, reached from a delegated run shown last, so
   * that "stop" stops the whole request (its delegated runs follow it).
   */
  started(ref: RunRef): RunRef {
    let runId = ref.runId;
    for (let parent = this.parents.get(runId); parent; parent = this.parents.get(runId)) runId = parent;
    return runId === ref.runId ? ref : { runId, revision: this.active.get(runId)?.revision ?? 0 };
  }

  /** Makes this run the one typed commands are for (`use <id>`), as if its card had just been shown. */
  use(runId: string, status: RunStatus): RunRef {
    if (!this.active.has(runId)) this.set(runId, status);
    this.focus(runId);
    return this.current()!;
  }

  /** The revision of this run's card last shown here (0 when none was). */
  revisionOf(runId: string): number {
    return this.active.get(runId)?.revision ?? 0;
  }

  /** One line per run still active, saying what becomes of it once Steward has stopped. */
  leaving(): string[] {
    return [...this.active].map(([runId, { status, summary }]) => {
      const what = summary ? `: "${summary.length > 60 ? `${summary.slice(0, 59)}…` : summary}"` : '';
      const fate = FATE[status] ?? 'is still running; it continues where it stopped when Steward next starts';
      return `i Run ${shortId(runId)}${what} ${fate}.`;
    });
  }

  private set(runId: string, status: RunStatus, summary?: string): void {
    const seen = this.active.get(runId);
    this.active.set(runId, {
      status,
      summary: summary ?? seen?.summary,
      revision: seen?.revision ?? 0,
      focus: seen?.focus ?? 0,
    });
  }

  private focus(runId: string, revision?: number): void {
    const seen = this.active.get(runId);
    if (!seen) return;
    seen.focus = ++this.tick;
    if (revision !== undefined) seen.revision = revision;
  }

  private end(runId: string): void {
    const seen = this.active.get(runId);
    if (!seen) return;
    if (this.current()?.runId === runId) this.ended = { runId, revision: seen.revision };
    this.active.delete(runId);
  }
}

/** The first eight characters of a run id: enough to tell runs apart on one terminal. */
export function shortId(runId: string): string {
  return shortRunId(runId);
}
