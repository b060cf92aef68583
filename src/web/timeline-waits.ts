/**
 * The wait before each step attempt on the run page's timeline, told apart by kind: held for a person (the run
 * paused, a breakpoint, steps held for approval), backing off before a retry, or queued (a parallel slot, dispatch).
 * Pure: times are milliseconds since the epoch, and holds are read from the run's accepted decisions.
 */
import type { StoredDecision } from '../engine/ports.ts';
import type { DecisionAction } from '../engine/types.ts';

/** What a part of a wait was spent on. */
export type WaitKind = 'queued' | 'held' | 'backoff';

/** One part of a wait, from `from` to `to`; a hold's `note` names who released it ("until Ada resumed"). */
export interface WaitSegment {
  kind: WaitKind;
  from: number;
  to: number;
  note?: string;
}

/** A try at a step as the waits need it; `end` null while it runs. */
export interface WaitAttempt {
  stepId: string;
  attempt: number;
  revision: number;
  start: number;
  end: number | null;
}

/** A decision as the waits need it. */
export type WaitDecision = Pick<StoredDecision, 'revision' | 'actor' | 'action' | 'accepted' | 'createdAt'>;

/**
 * How long after an attempt's start a release may be stored and still count as the one that let it start: a
 * decision is stored once the people were told, after the steps it let go had started.
 */
export const RELEASE_GRACE_MS = 5_000;

/** The decisions that let held work go: Resume (also Continue at a breakpoint) and Approve (a plan, held steps). */
const RELEASES: ReadonlySet<DecisionAction> = new Set(['resume', 'approve']);

interface Moment {
  at: number;
  action: DecisionAction;
  who: string;
  revision: number;
}

/**
 * Each attempt's wait (aligned with `attempts`), in order: from when it could have started (its dependencies' end,
 * its previous try's end, or for a first step the run's approval) to its start. A release claimed by one try of a
 * step is not claimed again by its next.
 */
export function attemptWaits(
  attempts: readonly WaitAttempt[],
  steps: readonly { id: string; dependsOn: readonly string[] }[],
  decisions: readonly WaitDecision[],
): WaitSegment[][] {
  const moments: Moment[] = decisions
    .filter((d) => d.accepted)
    .map((d) => ({
      at: d.createdAt.getTime(),
      action: d.action,
      who: d.actor.name ?? d.actor.id,
      revision: d.revision,
    }))
    .sort((a, b) => a.at - b.at);
  const claimed = new Map<string, Set<Moment>>();
  const order = attempts.map((a, i) => [a, i] as const).sort(([a], [b]) => a.attempt - b.attempt);
  const waits: WaitSegment[][] = attempts.map(() => []);
  for (const [a, i] of order) {
    const readyAt = readiness(a, attempts, steps, moments);
    if (readyAt === null) continue;
    const used = claimed.get(a.stepId) ?? new Set<Moment>();
    claimed.set(a.stepId, used);
    // An approval releases only the steps of the revision it approved; a Resume, any.
    const releasing = moments.filter((m) => m.action !== 'approve' || m.revision === a.revision);
    waits[i] = splitWait(readyAt, a.start, a.attempt > 1 ? 'backoff' : 'queued', releasing, used);
  }
  return waits;
}

/** When an attempt could have started, or null when nothing says (a first step of a run nobody approved). */
function readiness(
  a: WaitAttempt,
  attempts: readonly WaitAttempt[],
  steps: readonly { id: string; dependsOn: readonly string[] }[],
  moments: readonly Moment[],
): number | null {
  const ended = (stepId: string, attempt?: number) =>
    attempts
      .filter((o) => o.stepId === stepId && (attempt === undefined || o.attempt === attempt))
      .reduce((max, o) => Math.max(max, o.end ?? 0), 0);
  if (a.attempt > 1) return ended(a.stepId, a.attempt - 1) || null;
  const deps = steps.find((s) => s.id === a.stepId)?.dependsOn ?? [];
  if (deps.length) return deps.reduce((max, d) => Math.max(max, ended(d)), 0) || null;
  // A first step is ready when the revision it ran under was approved (its first approval). That approval is stored
  // just after the steps it let go started; then there was no wait to draw. A revision nobody approved (an edit that
  // needed no review) says nothing.
  const approved = moments.find((m) => m.action === 'approve' && m.revision === a.revision)?.at;
  return approved !== undefined && approved < a.start ? approved : null;
}

/**
 * Splits the wait [readyAt, start]: each release in it (or just after the start) ends a hold that began at the
 * latest pause before the release, else where the wait (or the last hold) left off; the rest is `free`.
 */
function splitWait(
  readyAt: number,
  start: number,
  free: 'queued' | 'backoff',
  moments: readonly Moment[],
  used: Set<Moment>,
): WaitSegment[] {
  if (readyAt >= start) return [];
  const segments: WaitSegment[] = [];
  let cursor = readyAt;
  const releases = moments.filter(
    (m) => RELEASES.has(m.action) && m.at > readyAt && m.at <= start + RELEASE_GRACE_MS && !used.has(m),
  );
  for (const release of releases) {
    const pause = moments.filter((m) => m.action === 'pause' && m.at >= cursor && m.at <= release.at).at(-1);
    const begin = pause?.at ?? cursor;
    const to = Math.min(release.at, start);
    if (begin >= to) continue;
    if (begin > cursor) segments.push({ kind: free, from: cursor, to: begin });
    const paused = pause !== undefined || pausedAt(moments, cursor);
    const verb = release.action === 'approve' ? 'approved' : paused ? 'resumed' : 'continued';
    segments.push({ kind: 'held', from: begin, to, note: `until ${release.who} ${verb}` });
    used.add(release);
    cursor = to;
    if (cursor >= start) break;
  }
  if (cursor < start) segments.push({ kind: free, from: cursor, to: start });
  return segments;
}

/** Whether the run stood paused by a person at `at` (else a hold then is a breakpoint's or an approval's). */
function pausedAt(moments: readonly Moment[], at: number): boolean {
  const last = moments.filter((m) => m.at <= at && (m.action === 'pause' || m.action === 'resume')).at(-1);
  return last?.action === 'pause';
}
