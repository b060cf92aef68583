/**
 * The estimate line of a live card (pure), shared by Slack and Discord: before and during the run what the card
 * estimated; once it ended, how long it took against that estimate. Beside it, what the run would spend against the
 * spend caps, and the warning of a card that waits for an approver because of one.
 */
import { estimateLine, tookLine } from '../engine/run/estimates.ts';
import { isFinished, type LiveCard } from './live-card-state.ts';
import { spendLine, spendWaitText } from './spend-words.ts';

/** One short line, or null when the card carries no estimate (no history port, or the read failed). */
export function estimateText(live: LiveCard): string | null {
  const estimate = live.took?.estimate ?? live.card.estimate;
  if (!estimate) return null;
  if (!isFinished(live)) return estimateLine(estimate);
  // The engine's measure (from the run's start) wins; a card that missed it uses the times it saw.
  const seen = live.startedAt !== null && live.endedAt !== null ? live.endedAt - live.startedAt : null;
  const ms = live.took?.ms ?? seen;
  return ms === null ? estimateLine(estimate) : tookLine(ms, estimate);
}

/** The card's spend line (what the run would spend, what is left of each cap set), or null when no cap is set. */
export function spendText(live: LiveCard): string | null {
  return live.card.spend && !isFinished(live) ? spendLine(live.card.spend) : null;
}

/** The card's warnings: first, while it waits for review, that a spend cap makes it wait for an approver. */
export function cardWarnings(live: LiveCard): string[] {
  const wait = live.status === 'awaiting_review' ? spendWaitText(live.card.spend) : null;
  return wait ? [wait, ...live.card.warnings] : live.card.warnings;
}
