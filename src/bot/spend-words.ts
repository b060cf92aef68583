/**
 * Spend in words, the same on every chat platform (pure): the plan card's spend line beside its estimate, the
 * sentence of a card that waits for an approver because of a spend cap, and the answer to `/steward spend`. Each
 * platform escapes and marks them up its own way.
 */
import {
  capWords,
  formatUsd,
  leftMicroUsd,
  type SpendOutlook,
  type SpendReport,
  type SpendWindowTotal,
} from '../engine/spend.ts';

/**
 * A spend key's channel as people read it: `#C123` for `slack:C123`, `#123…` for `discord:<guild>:123…` (the channel
 * the thread was started in), `console` for the console.
 */
export function channelName(key: string): string {
  const parts = key.split(':');
  const id = parts[parts.length - 1] ?? key;
  return parts[0] === 'console' ? 'console' : `#${id}`;
}

/** The card's spend line: `Spend: up to $0.0040 more · left: this channel $0.50 of $1.00 today, …`. */
export function spendLine(outlook: SpendOutlook): string {
  const would = outlook.wouldSpendMicroUsd;
  const parts = [would ? `Spend: ${range(would.low, would.high)} more` : 'Spend: not estimated (no history yet)'];
  const left = outlook.windows.map(
    (w) => `${owner(w)} ${formatUsd(leftMicroUsd(w) ?? 0)} of ${formatUsd(w.capMicroUsd ?? 0)} ${when(w)}`,
  );
  if (left.length > 0) parts.push(`left: ${left.join(', ')}`);
  if (outlook.exempt) parts.push('an approver let this run go past the caps');
  return parts.join(' · ');
}

/**
 * The sentence of a card waiting because its run would pass a spend cap (null when it would not): said where the
 * card's warnings are, so nobody approves without reading it.
 */
export function spendWaitText(outlook: SpendOutlook | undefined): string | null {
  const over = outlook?.over;
  if (!over || over.capMicroUsd === null) return null;
  const would = outlook.wouldSpendMicroUsd;
  const cap = capWords(
    over.scope,
    over.period,
    over.capMicroUsd,
    over.scope === 'person' ? 'the requester' : undefined,
  );
  return (
    `This run would spend up to ${formatUsd(would?.high ?? 0)}, more than the ${formatUsd(leftMicroUsd(over) ?? 0)} ` +
    `left of ${cap}: it waits for an approver. Only an approver's Approve starts it (and lets it go past the caps).`
  );
}

/** The answer to `/steward spend`, in plain lines (each platform escapes them its way). */
export function spendReportText(report: SpendReport): string {
  const { day, month } = report.windows;
  const lines = [`Spend on models in US dollars, today (${day}, UTC) and this month (${month.slice(0, 7)}):`];
  for (const scope of ['workspace', 'channel', 'person'] as const) {
    const windows = report.totals.filter((t) => t.scope === scope);
    const dayTotal = windows.find((w) => w.period === 'day');
    const monthTotal = windows.find((w) => w.period === 'month');
    const label = scope === 'workspace' ? 'Workspace' : scope === 'channel' ? 'This channel' : 'You';
    lines.push(
      `${label}: ${formatUsd(dayTotal?.spentMicroUsd ?? 0)} today, ${formatUsd(monthTotal?.spentMicroUsd ?? 0)} this month · ${caps(windows)}`,
    );
  }
  const list = (title: string, items: SpendReport['byChannel'], name: (key: string, n?: string) => string) => {
    if (items.length === 0) return;
    lines.push(`${title}:`);
    for (const i of items) {
      lines.push(
        `• ${name(i.key, i.name)}: ${formatUsd(i.dayMicroUsd)} today, ${formatUsd(i.monthMicroUsd)} this month`,
      );
    }
  };
  list(report.narrowed ? 'This channel' : 'By channel', report.byChannel, channelName);
  list(report.narrowed ? 'You' : 'By person', report.byPerson, (k, n) => n ?? k.slice(k.indexOf(':') + 1));
  list(report.narrowed ? 'Your calls by model' : 'By model', report.byModel, (k) => k);
  if (report.byModel.length === 0) lines.push('No model calls were charged this month.');
  if (report.narrowed) lines.push('(An approver sees every channel and person.)');
  lines.push(
    'Caps are set by the operator (STEWARD_SPEND_* settings); a model without a price counts at the default price.',
  );
  return lines.join('\n');
}

/** The caps of one scope, with what is left: `cap $5.00 a day ($3.80 left), no monthly cap`. */
function caps(windows: readonly SpendWindowTotal[]): string {
  const set = windows.filter((w) => w.capMicroUsd !== null);
  if (set.length === 0) return 'no cap';
  return set
    .map((w) => `cap ${formatUsd(w.capMicroUsd ?? 0)} a ${w.period} (${formatUsd(leftMicroUsd(w) ?? 0)} left)`)
    .join(', ');
}

function owner(w: SpendWindowTotal): string {
  return w.scope === 'channel' ? 'this channel' : w.scope === 'workspace' ? 'the workspace' : 'the requester';
}

function when(w: SpendWindowTotal): string {
  return w.period === 'day' ? 'today' : 'this month';
}

function range(low: number, high: number): string {
  return low === high ? formatUsd(high) : `${formatUsd(low)}–${formatUsd(high)}`;
}
