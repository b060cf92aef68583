/**
 * Spend caps in money (pure): the caps, the windows they count in, what a plan card says is left, and the port that
 * reads the totals. Amounts are whole micro-dollars, as model costs are; prices before and after a call are in
 * `model-cost.ts`.
 *
 * Terms: a *scope* is what a cap is for (the workspace, the chat channel a run talks in, the person who asked); a
 * *period* is the window it counts in (a UTC day or month); a *charge* is what one call counts against them.
 */
import type { Range } from './estimate-history.ts';
import type { Actor } from './types.ts';

/** What a cap is for. */
export type SpendScope = 'channel' | 'workspace' | 'person';
/** The window a cap counts in (UTC). */
export type SpendPeriod = 'day' | 'month';

export const SPEND_SCOPES: readonly SpendScope[] = ['channel', 'workspace', 'person'];
export const SPEND_PERIODS: readonly SpendPeriod[] = ['day', 'month'];

/** A cap per scope and period, in micro-dollars; null: no cap. */
export type SpendCaps = Readonly<Record<SpendScope, Readonly<Record<SpendPeriod, number | null>>>>;

/** No caps at all (the default): spend is still counted, so `/steward spend` can show it. */
export const NO_SPEND_CAPS: SpendCaps = {
  channel: { day: null, month: null },
  workspace: { day: null, month: null },
  person: { day: null, month: null },
};

/** The windows an instant counts in: its UTC day and the first day of its UTC month (`YYYY-MM-DD`). */
export interface SpendWindows {
  day: string;
  month: string;
}

export function spendWindows(at: Date): SpendWindows {
  const day = at.toISOString().slice(0, 10);
  return { day, month: `${day.slice(0, 7)}-01` };
}

/** A reservation's price per token in micro-dollars (a price per million tokens in dollars is exactly that). */
export interface SpendPrice {
  input: number;
  output: number;
}

/** What a model call's reservation takes from the spend totals, and the caps it is judged against. */
export interface SpendRequest {
  price: SpendPrice;
  caps: SpendCaps;
  windows: SpendWindows;
}

/** The chat channel a conversation counts for: `<platform>:<channel>` (its place, else the conversation itself). */
export function spendChannelKey(conversation: { channel: string; key: string }, place?: string | null): string {
  return `${conversation.channel}:${place ?? conversation.key}`;
}

/** The key of a person's totals: `<platform>:<id>`. */
export function spendPersonKey(actor: Pick<Actor, 'channel' | 'id'>): string {
  return `${actor.channel}:${actor.id}`;
}

/** What one window of one scope holds so far (reservations in flight included), and its cap. */
export interface SpendWindowTotal {
  scope: SpendScope;
  period: SpendPeriod;
  spentMicroUsd: number;
  /** Null: no cap. */
  capMicroUsd: number | null;
}

/** What a card says about spend: what the run would spend, what is left of each cap set, and the cap it would pass. */
export interface SpendOutlook {
  /** What the run's model calls after planning would charge (null: no history to say). */
  wouldSpendMicroUsd: Range | null;
  /** Only the windows with a cap, tightest first. */
  windows: SpendWindowTotal[];
  /** The first window whose cap the run's high estimate would pass, unless an approver exempted the run. */
  over: SpendWindowTotal | null;
  /** An approver approved this run past the caps. */
  exempt: boolean;
}

/** What is left of a window's cap (never below zero); null without a cap. */
export function leftMicroUsd(w: SpendWindowTotal): number | null {
  return w.capMicroUsd === null ? null : Math.max(0, w.capMicroUsd - w.spentMicroUsd);
}

/**
 * A card's spend outlook: the capped windows, tightest first, and the one the run would pass. "Would pass" reads the
 * high end of the estimate, so a plan that may well cost more than what is left waits for an approver before it
 * starts instead of being stopped midway. Null when no cap is set: then there is nothing to say beyond the estimate.
 */
export function spendOutlook(
  wouldSpend: Range | null,
  totals: readonly SpendWindowTotal[],
  exempt: boolean,
): SpendOutlook | null {
  const windows = totals
    .filter((w) => w.capMicroUsd !== null)
    .sort((a, b) => (leftMicroUsd(a) ?? 0) - (leftMicroUsd(b) ?? 0));
  if (windows.length === 0) return null;
  const over =
    wouldSpend && !exempt ? (windows.find((w) => wouldSpend.high > (leftMicroUsd(w) ?? Infinity)) ?? null) : null;
  return { wouldSpendMicroUsd: wouldSpend, windows, over, exempt };
}

/** How many lines each list of `/steward spend` holds (largest first). */
export const SPEND_REPORT_LINES = 10;

/** One line of `/steward spend`: a channel, a person or a model, with what it spent today and this month. */
export interface SpendLine {
  /** `<platform>:<channel>`, `<platform>:<person id>`, or the model. */
  key: string;
  /** A person's name as last seen (people only). */
  name?: string;
  dayMicroUsd: number;
  monthMicroUsd: number;
}

/** What `/steward spend` shows: the caps with what is left, and spend by channel, person and model. */
export interface SpendReport {
  windows: SpendWindows;
  /** The workspace's, the asker's channel's and the asker's own windows, with their caps. */
  totals: SpendWindowTotal[];
  byChannel: SpendLine[];
  byPerson: SpendLine[];
  byModel: SpendLine[];
  /** Only the asker's own line is in `byPerson`, and only their channel's in `byChannel` (not an approver). */
  narrowed: boolean;
}

/** A window's total as the store holds it (caps are settings, attached by `withCaps`). */
export type StoredSpendTotal = Omit<SpendWindowTotal, 'capMicroUsd'>;

/** What counts for one run's calls: its six windows (workspace, its channel, its requester), and its own spend. */
export interface RunSpend {
  totals: StoredSpendTotal[];
  /** What the run's calls reserved and spent so far. */
  runMicroUsd: number;
  /** An approver approved the run past the caps. */
  exempt: boolean;
}

/**
 * The port: spend totals as the caps count them (reservations in flight included) and spend by channel, person
 * and model as calls settled. `PgRunStore` implements it.
 */
export interface SpendLedger {
  /** What counts for a run's calls in these windows. */
  runSpend(runId: string, requester: Actor, windows: SpendWindows): Promise<RunSpend>;
  /**
   * The windows of the workspace, `channelKey` and `person`, and spend by channel, person and model settled in
   * them (largest first, at most `limit` lines each); only `person`'s line and `channelKey`'s when `narrow`.
   */
  spendReport(
    windows: SpendWindows,
    who: { channelKey: string; person: Actor; narrow: boolean; limit: number },
  ): Promise<Omit<SpendReport, 'totals' | 'windows' | 'narrowed'> & { totals: StoredSpendTotal[] }>;
}

/** Caps attached to totals read from the store. */
export function withCaps(totals: readonly StoredSpendTotal[], caps: SpendCaps): SpendWindowTotal[] {
  return totals.map((t) => ({ ...t, capMicroUsd: caps[t.scope][t.period] }));
}

/** Whether any cap is set. */
export function anyCap(caps: SpendCaps): boolean {
  return SPEND_SCOPES.some((s) => SPEND_PERIODS.some((p) => caps[s][p] !== null));
}

/** An amount as people read it, exactly to a hundredth of a cent: `$5.00`, `$0.0120`, `$19.9990`. */
export function formatUsd(micro: number): string {
  const dollars = micro / 1_000_000;
  return `$${Math.round(micro) % 10_000 === 0 ? dollars.toFixed(2) : dollars.toFixed(4)}`;
}

/** Whose cap: `this channel's`, `the workspace's`, `Ada's`. */
export function capOwner(scope: SpendScope, person?: string): string {
  if (scope === 'channel') return "this channel's";
  return scope === 'workspace' ? "the workspace's" : person === undefined ? 'your' : `${person}'s`;
}

/** A cap in words: `this channel's daily spend cap of $5.00`. */
export function capWords(scope: SpendScope, period: SpendPeriod, capMicroUsd: number, person?: string): string {
  return `${capOwner(scope, person)} ${period === 'day' ? 'daily' : 'monthly'} spend cap of ${formatUsd(capMicroUsd)}`;
}
