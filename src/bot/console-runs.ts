/**
 * The runs the console has shown and not yet seen end, from the messages it was sent (pure bookkeeping), so that on
 * `quit` it can say what becomes of each: Steward hands them back and takes them up again at its next start.
 */
import type { OutboundMessage } from '../engine/messages.ts';
import { isTerminal, type RunStatus } from '../engine/types.ts';
import { shortRunId } from '../engine/text.ts';

interface Seen {
  status: RunStatus;
  summary?: string;
}

const FATE: Partial<Record<RunStatus, string>> = {
  planning: 'was being planned; it is planned again when Steward next starts',
  awaiting_review: 'waits for your review; its plan is shown again when Steward next starts',
  paused: 'is paused; it stays paused and can be resumed when Steward next starts',
};

/** Active runs as this console last saw them. */
export class ConsoleRuns {
  private readonly active = new Map<string, Seen>();

  /** Notes what a message says about a run's state. */
  seen(message: OutboundMessage): void {
    switch (message.kind) {
      case 'plan':
        return this.set(message.runId, message.needsReview ? 'awaiting_review' : 'running', message.summary);
      case 'breakpoint':
        return this.set(message.runId, 'paused');
      case 'runStatus':
        return isTerminal(message.status)
          ? void this.active.delete(message.runId)
          : this.set(message.runId, message.status);
      case 'report':
        this.active.delete(message.runId);
        return;
      default:
        return;
    }
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
    this.active.set(runId, { status, summary: summary ?? this.active.get(runId)?.summary });
  }
}

/** The first eight characters of a run id: enough to tell runs apart on one terminal. */
export function shortId(runId: string): string {
  return shortRunId(runId);
}
