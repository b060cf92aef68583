/**
 * A report on the console while the model writes it: its heading at the first words, then each piece as it arrives.
 * When the report is done the preview is closed if it was the report, or the report is printed whole after it when
 * it was not (the model's answer broke off and code wrote a plain report, or another report was stored first).
 */
import type { Report, ReportStream } from '../engine/messages.ts';
import type { RunStatus } from '../engine/types.ts';
import { toTerminalText } from './console-text.ts';

/** What the stream needs from the console: raw output, and the whole-message path it falls back to. */
export interface ConsoleReportTarget {
  status: RunStatus;
  /** Writes text as it is (no newline added); the stream makes it inert first. */
  write(text: string): void;
  /** Sends a message the way `send` does (a report printed whole). */
  whole(report: Report): Promise<void>;
  /** Tells the console's bookkeeping the report was shown. */
  shown(report: Report): void;
}

/** Opens a report preview on the console; it prints nothing before the first piece. */
export function consoleReportStream(target: ConsoleReportTarget): ReportStream {
  let shown = '';
  // A piece may end inside a surrogate pair: its first half waits for the next piece, or it would print escaped.
  let held = '';
  let opened = false;
  let closed = false;
  return {
    append(delta) {
      if (closed || !delta) return;
      if (!opened) target.write(`\n=== Report (${target.status}) ===\n`);
      opened = true;
      let text = held + delta;
      held = /[\uD800-\uDBFF]$/.test(text) ? text.slice(-1) : '';
      if (held) text = text.slice(0, -1);
      shown += text;
      target.write(toTerminalText(text));
    },
    async finish(report) {
      closed = true;
      if (!opened) return target.whole(report);
      if ((shown + held).trim() === report.text) {
        target.write(`${toTerminalText(held)}\n\n`);
        return target.shown(report);
      }
      target.write(`\n! The text above is not the final report; here it is.\n`);
      await target.whole(report);
    },
    fail() {
      if (opened && !closed)
        target.write('\n! This report was cut off here: the process that took the run over reports it.\n');
      closed = true;
      return Promise.resolve();
    },
  };
}
