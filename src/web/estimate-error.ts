/** How far a duration estimate was from what the run took, and the median of such errors (pure). */
import type { Range } from '../engine/estimate-history.ts';

/**
 * The error of an estimated range against the actual duration, in % of the actual: 0 inside the range, else the
 * distance to its nearest end. An actual of 0 ms counts as 1 ms, so the error stays a number.
 */
export function estimateErrorPercent(range: Range, actualMs: number): number {
  const low = Math.min(range.low, range.high);
  const high = Math.max(range.low, range.high);
  if (actualMs >= low && actualMs <= high) return 0;
  const distance = actualMs < low ? low - actualMs : actualMs - high;
  return (distance / Math.max(actualMs, 1)) * 100;
}

/** The median of some numbers; null for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** An error as text: `0 %`, `4.5 %`, `130 %`. */
export function percentText(value: number): string {
  return `${value < 10 && value !== 0 ? value.toFixed(1) : Math.round(value)} %`;
}
