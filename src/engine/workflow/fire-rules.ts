/**
 * When a schedule fires, as a pure decision. The due times are the schedule's times from its `nextFireAt` up to and
 * including now; only the latest can run, the earlier ones are missed. Whether it runs depends on how late it is
 * (catch-up) and on whether a fire of the workflow is still active (overlap). Every instant comes from the calendar.
 */
import type { CronCalendar, StoredSchedule } from '../workflows.ts';

/** A fire handled within this long after its time is on time; later, the catch-up policy decides. */
export const ON_TIME_MS = 60_000;

/** Missed times are counted one by one up to this many; a larger `missed` is an estimate (see `missedWords`). */
export const MAX_COUNTED_MISSED = 1000;

/** What a scheduler tick needs to decide about one due schedule. */
export interface FireInput {
  schedule: StoredSchedule;
  /** A run of an earlier fire of the workflow is not finished yet. */
  active: boolean;
  now: Date;
  calendar: CronCalendar;
}

/**
 * What to do with a schedule now. `missed` counts the due times before `scheduledAt`, which never run; `nextFireAt`
 * is the first time after now (null when the expression runs out), so skipped times are never replayed one by one.
 */
export type FireDecision =
  | { kind: 'notDue' }
  | { kind: 'wait' }
  | { kind: 'fire'; scheduledAt: Date; previousAt: Date | null; missed: number; nextFireAt: Date | null }
  | { kind: 'skipMissed'; scheduledAt: Date; missed: number; nextFireAt: Date | null }
  | { kind: 'skipOverlap'; scheduledAt: Date; previousAt: Date | null; missed: number; nextFireAt: Date | null };

interface DueTimes {
  scheduledAt: Date;
  previousAt: Date | null;
  missed: number;
  nextFireAt: Date | null;
}

/** Decides one schedule: not due, wait (overlap `queue`), fire, or skip (missed or overlapping). */
export function decideFire({ schedule, active, now, calendar }: FireInput): FireDecision {
  const first = schedule.nextFireAt;
  if (schedule.paused || !first || first.getTime() > now.getTime()) return { kind: 'notDue' };
  const due = dueTimes(schedule, first, now, calendar);
  const lateness = now.getTime() - due.scheduledAt.getTime();
  if (lateness > ON_TIME_MS && !catchesUp(schedule, due, lateness)) {
    return { kind: 'skipMissed', scheduledAt: due.scheduledAt, missed: due.missed, nextFireAt: due.nextFireAt };
  }
  if (active) return schedule.overlap === 'skip' ? { kind: 'skipOverlap', ...due } : { kind: 'wait' };
  return { kind: 'fire', ...due };
}

/** A new schedule's first time: the first after `now`, or null when the expression never fires again. */
export function firstFireAt(cron: string, timeZone: string, now: Date, calendar: CronCalendar): Date | null {
  return calendar.next(cron, timeZone, now, 1)[0] ?? null;
}

/** How many earlier times were missed, in words: "1 earlier time", "more than 1,000 earlier times (about 604,799)". */
export function missedWords(missed: number): string {
  if (missed <= MAX_COUNTED_MISSED) return `${count(missed)} earlier time${missed === 1 ? '' : 's'}`;
  return `more than ${count(MAX_COUNTED_MISSED)} earlier times (about ${count(missed)})`;
}

/**
 * A late fire runs with catch-up `once` when it is less than one period late: the time from it to the next time, or
 * when the expression ends there, the time since the one before (a single time ever has no period: it runs).
 */
function catchesUp(schedule: StoredSchedule, due: DueTimes, lateness: number): boolean {
  if (schedule.catchUp === 'skip') return false;
  const at = due.scheduledAt.getTime();
  const period = due.nextFireAt
    ? due.nextFireAt.getTime() - at
    : due.previousAt
      ? at - due.previousAt.getTime()
      : Number.POSITIVE_INFINITY;
  return lateness < period;
}

/**
 * The due times from `first` up to `now`, enumerated in growing batches (an on-time fire asks for one time), at most
 * `MAX_COUNTED_MISSED + 1` of them; past that, the rest is estimated from their average spacing.
 */
function dueTimes(s: StoredSchedule, first: Date, now: Date, calendar: CronCalendar): DueTimes {
  const end = now.getTime();
  let last = first;
  let beforeLast: Date | null = null;
  let counted = 1;
  const found = (nextFireAt: Date | null): DueTimes => ({
    scheduledAt: last,
    previousAt: beforeLast ?? calendar.previous(s.cron, s.timeZone, last),
    missed: counted - 1,
    nextFireAt,
  });
  for (let batch = 1; ; batch = Math.min(batch * 8, MAX_COUNTED_MISSED + 2 - counted)) {
    const times = calendar.next(s.cron, s.timeZone, last, batch);
    for (const t of times) {
      if (t.getTime() > end) return found(t);
      beforeLast = last;
      last = t;
      counted++;
    }
    if (times.length < batch) return found(null);
    if (counted - 1 > MAX_COUNTED_MISSED) return estimated(s, first, last, counted, now, calendar);
  }
}

function estimated(
  s: StoredSchedule,
  first: Date,
  last: Date,
  counted: number,
  now: Date,
  calendar: CronCalendar,
): DueTimes {
  const nextFireAt = calendar.next(s.cron, s.timeZone, now, 1)[0] ?? null;
  const found = nextFireAt ? calendar.previous(s.cron, s.timeZone, nextFireAt) : latestUpTo(s, now, calendar);
  const scheduledAt = found && found.getTime() > last.getTime() ? found : last;
  const spacing = (last.getTime() - first.getTime()) / (counted - 1);
  const between = spacing > 0 ? Math.round((scheduledAt.getTime() - last.getTime()) / spacing) : 0;
  const missed = Math.max(MAX_COUNTED_MISSED + 1, counted - 1 + between);
  return { scheduledAt, previousAt: calendar.previous(s.cron, s.timeZone, scheduledAt), missed, nextFireAt };
}

/** The latest time at or before `now`, for an expression with no time after it. */
function latestUpTo(s: StoredSchedule, now: Date, calendar: CronCalendar): Date | null {
  const before = calendar.previous(s.cron, s.timeZone, now);
  const after = before ? calendar.next(s.cron, s.timeZone, before, 1)[0] : undefined;
  return after && after.getTime() === now.getTime() ? after : before;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}
