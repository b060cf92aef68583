/**
 * A server's progress report for a running call, in the words of the step's line on the card (pure). The server's
 * message is untrusted text: it is made one short line here, and each channel escapes it as it escapes any tool text.
 */
import type { ToolProgress } from '../ports.ts';

/** Longest part of a server's progress message a step line shows. */
export const PROGRESS_MESSAGE_MAX = 120;

/** `calling srv.tool: 3 / 8, copying files`: the running step's line with the server's latest progress. */
export function callProgressDetail(tool: string, report: ToolProgress): string {
  const said = progressWords(report);
  return said ? `calling ${tool}: ${said}` : `calling ${tool}`;
}

/** `3 / 8, copying files`: how far and what the server said, one short line ('' when it said nothing showable). */
export function progressWords(report: ToolProgress): string {
  const amount = progressAmount(report);
  const message = report.message === undefined ? '' : oneShortLine(report.message, PROGRESS_MESSAGE_MAX);
  return [amount, message].filter(Boolean).join(', ');
}

/**
 * How far a call is: `42 %` (out of 100, or out of a total that is not a whole count), `3 / 8` (whole counts), or
 * `at 42` when the server gives no total. '' for a number that cannot be shown.
 */
export function progressAmount(report: ToolProgress): string {
  const { progress, total } = report;
  if (!Number.isFinite(progress)) return '';
  if (total === undefined || !Number.isFinite(total) || total <= 0) return `at ${shortNumber(progress)}`;
  if (total !== 100 && Number.isInteger(progress) && Number.isInteger(total))
    return `${shortNumber(progress)} / ${shortNumber(total)}`;
  const percent = Math.min(100, Math.max(0, Math.floor((progress / total) * 100)));
  return `${percent} %`;
}

function shortNumber(n: number): string {
  return String(Number.isInteger(n) ? n : Math.round(n * 100) / 100);
}

// Controls, line and paragraph separators and bidirectional overrides: a line on a card is one plain line.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]/g;

function oneShortLine(text: string, max: number): string {
  const line = text.replace(UNPRINTABLE, ' ').replace(/\s+/g, ' ').trim();
  if (line.length <= max) return line;
  // Never half of a character outside the basic plane.
  return `${line.slice(0, max - 1).replace(/[\ud800-\udbff]$/, '')}…`;
}
