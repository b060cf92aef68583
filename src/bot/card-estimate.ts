/**
 * The estimate line of a live card (pure), shared by Slack and Discord: before and during the run what the card
 * estimated; once it ended, how long it took against that estimate.
 */
import { estimateLine, tookLine } from '../engine/run/estimates.ts';
import { isFinished, type LiveCard } from './live-card-state.ts';

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
