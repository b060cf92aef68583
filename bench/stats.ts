/** Small statistics and formatting helpers for the bench: quantiles, spreads, table cells. */

/** The q-quantile (0..1) of `xs` by linear interpolation; NaN for an empty list. */
export function quantile(xs: readonly number[], q: number): number {
  const sorted = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
}

/** The median of `xs`. */
export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}

/** Median with its interquartile range, e.g. `1.23 (1.10–1.40)`. */
export function spread(xs: readonly number[], digits = 2, unit = ''): string {
  if (xs.length === 0) return '—';
  const f = (x: number) => `${x.toFixed(digits)}${unit}`;
  if (xs.length === 1) return f(xs[0] as number);
  return `${f(median(xs))} (${f(quantile(xs, 0.25))}–${f(quantile(xs, 0.75))})`;
}

/** The sum of `xs`. */
export function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

/** A number with thousands separated by a thin space-free comma, e.g. `12,345`. */
export function int(x: number): string {
  return Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—';
}

/** A share as a percentage, e.g. `97%`. */
export function pct(x: number): string {
  return Number.isFinite(x) ? `${Math.round(x * 100)}%` : '—';
}

/** One Markdown table row. */
export function row(cells: readonly (string | number)[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** A Markdown table header with its alignment line; columns after the first `left` are right-aligned. */
export function header(cells: readonly string[], left = 1): string[] {
  return [row(cells), `|${cells.map((_, i) => (i < left ? '---' : '---:')).join('|')}|`];
}

/** Groups items by a key, keeping first-seen key order. */
export function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
