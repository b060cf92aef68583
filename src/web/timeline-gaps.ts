/**
 * Where the run page's timeline shows that Steward was down. A restart ends each attempt that was in flight as
 * `interrupted`, stamped when the new process took the run over, so the stored attempt spans the downtime. What is
 * known of it stops earlier: at the last thing the run stored before (the attempt's start, its server's last
 * progress, another attempt's start or end). The attempt is drawn up to that moment, then a gap until the run was
 * taken over (its `recovered` event). Pure: times are milliseconds since the epoch.
 */

/** A try at a step as the gaps need it; `interrupted` when a restart ended it. */
export interface GapAttempt {
  start: number;
  end: number | null;
  interrupted: boolean;
  /** When its server last reported progress (null: never). */
  progressAt: number | null;
}

/** From the attempt's last known moment to when Steward took the run over again. */
export interface RestartGap {
  from: number;
  to: number;
}

/**
 * Each attempt's gap (aligned with `attempts`; null for one a restart did not end): `resumedAt` are the times the run
 * was taken over after a restart, oldest first.
 */
export function restartGaps(attempts: readonly GapAttempt[], resumedAt: readonly number[]): (RestartGap | null)[] {
  return attempts.map((a) => {
    if (!a.interrupted || a.end === null) return null;
    const end = a.end;
    // The takeover ends the attempts it found first, then stores its `recovered` event.
    const to = resumedAt.find((r) => r >= end) ?? end;
    // What the run stored before the interruption was stored: moments of the process that went away.
    const known = attempts.flatMap((o) => [o.start, ...(o.interrupted || o.end === null ? [] : [o.end])]);
    const before = [...known, a.progressAt ?? a.start].filter((t) => t < end);
    const from = Math.max(a.start, ...before.filter((t) => t <= to));
    return to > from ? { from, to } : null;
  });
}
