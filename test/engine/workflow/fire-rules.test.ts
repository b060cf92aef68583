import { describe, expect, it } from 'vitest';
import { CronerCalendar } from '../../../src/cron/croner-calendar.ts';
import {
  decideFire,
  firstFireAt,
  MAX_COUNTED_MISSED,
  missedWords,
  ON_TIME_MS,
  type FireInput,
} from '../../../src/engine/workflow/fire-rules.ts';
import type { CronCalendar, StoredSchedule } from '../../../src/engine/workflows.ts';

const calendar = new CronerCalendar();
const at = (iso: string) => new Date(iso);

function createSchedule(overrides: Partial<StoredSchedule> = {}): StoredSchedule {
  return {
    id: 'sch1',
    workflowId: 'wf1',
    cron: '0 * * * *',
    timeZone: 'UTC',
    catchUp: 'once',
    overlap: 'skip',
    paused: false,
    nextFireAt: at('2026-12-07T09:00:00Z'),
    createdAt: at('2026-12-01T00:00:00Z'),
    ...overrides,
  };
}

function decide(now: string, schedule: Partial<StoredSchedule> = {}, more: Partial<FireInput> = {}) {
  return decideFire({ schedule: createSchedule(schedule), active: false, now: at(now), calendar, ...more });
}

/** The real calendar, with no times after `end`: an expression that runs out. */
function endingAt(end: string): CronCalendar {
  const last = at(end).getTime();
  return {
    check: (cron, zone) => calendar.check(cron, zone),
    next: (cron, zone, after, count) => calendar.next(cron, zone, after, count).filter((d) => d.getTime() <= last),
    previous: (cron, zone, before) => calendar.previous(cron, zone, before),
  };
}

/** The real calendar, counting how many times it handed out. */
function counting(): { calendar: CronCalendar; times: () => number } {
  let handed = 0;
  return {
    calendar: {
      check: (cron, zone) => calendar.check(cron, zone),
      next: (cron, zone, after, count) => {
        const times = calendar.next(cron, zone, after, count);
        handed += times.length;
        return times;
      },
      previous: (cron, zone, before) => {
        handed++;
        return calendar.previous(cron, zone, before);
      },
    },
    times: () => handed,
  };
}

describe('a schedule that is not due', () => {
  it.each<[string, Partial<StoredSchedule>]>([
    ['paused', { paused: true }],
    ['with no next time', { nextFireAt: null }],
    ['whose next time is after now', { nextFireAt: at('2026-12-07T09:00:01Z') }],
  ])('is not due when %s', (_, schedule) => {
    expect(decide('2026-12-07T09:00:00Z', schedule)).toEqual({ kind: 'notDue' });
  });
});

describe('a fire on time', () => {
  it('runs at its time, with the time before it and the next one', () => {
    expect(decide('2026-12-07T09:00:00.200Z')).toEqual({
      kind: 'fire',
      scheduledAt: at('2026-12-07T09:00:00Z'),
      previousAt: at('2026-12-07T08:00:00Z'),
      missed: 0,
      nextFireAt: at('2026-12-07T10:00:00Z'),
    });
  });

  it('runs up to ON_TIME_MS late even when missed fires are skipped, and is skipped just after', () => {
    const edge = new Date(at('2026-12-07T09:00:00Z').getTime() + ON_TIME_MS).toISOString();
    expect(decide(edge, { catchUp: 'skip' }).kind).toBe('fire');
    expect(decide('2026-12-07T09:01:00.001Z', { catchUp: 'skip' })).toEqual({
      kind: 'skipMissed',
      scheduledAt: at('2026-12-07T09:00:00Z'),
      missed: 0,
      nextFireAt: at('2026-12-07T10:00:00Z'),
    });
  });
});

describe('fires missed while Steward was down', () => {
  it('runs the one fire a restart went across with catch-up once, and skips it with catch-up skip', () => {
    const once = decide('2026-12-07T09:20:00Z', { catchUp: 'once' });
    expect(once).toMatchObject({ kind: 'fire', scheduledAt: at('2026-12-07T09:00:00Z'), missed: 0 });
    const skip = decide('2026-12-07T09:20:00Z', { catchUp: 'skip' });
    expect(skip).toEqual({
      kind: 'skipMissed',
      scheduledAt: at('2026-12-07T09:00:00Z'),
      missed: 0,
      nextFireAt: at('2026-12-07T10:00:00Z'),
    });
  });

  it('runs only the latest of three missed hours with catch-up once, counting the two before it as missed', () => {
    expect(decide('2026-12-07T11:30:00Z', { catchUp: 'once' })).toEqual({
      kind: 'fire',
      scheduledAt: at('2026-12-07T11:00:00Z'),
      previousAt: at('2026-12-07T10:00:00Z'),
      missed: 2,
      nextFireAt: at('2026-12-07T12:00:00Z'),
    });
    expect(decide('2026-12-07T11:30:00Z', { catchUp: 'skip' })).toEqual({
      kind: 'skipMissed',
      scheduledAt: at('2026-12-07T11:00:00Z'),
      missed: 2,
      nextFireAt: at('2026-12-07T12:00:00Z'),
    });
  });

  it('resumes from the first time after now, never replaying a paused week one fire at a time', () => {
    const decision = decide('2026-12-14T09:30:00Z', { cron: '0 9 * * *', catchUp: 'once' });
    expect(decision).toMatchObject({ kind: 'fire', scheduledAt: at('2026-12-14T09:00:00Z'), missed: 7 });
    expect(decision).toMatchObject({ nextFireAt: at('2026-12-15T09:00:00Z') });
  });

  it('counts a week of a per-second schedule by estimate, handing out about a thousand times, not 604,800', () => {
    const counter = counting();
    const decision = decideFire({
      schedule: createSchedule({ cron: '* * * * * *', nextFireAt: at('2026-12-07T09:00:00Z') }),
      active: false,
      now: at('2026-12-14T09:00:00.500Z'),
      calendar: counter.calendar,
    });
    expect(decision).toEqual({
      kind: 'fire',
      scheduledAt: at('2026-12-14T09:00:00Z'),
      previousAt: at('2026-12-14T08:59:59Z'),
      missed: 7 * 24 * 3600,
      nextFireAt: at('2026-12-14T09:00:01Z'),
    });
    expect(counter.times()).toBeLessThan(MAX_COUNTED_MISSED + 10);
    expect(missedWords(7 * 24 * 3600)).toBe('more than 1,000 earlier times (about 604,800)');
  });

  it('counts exactly up to the bound', () => {
    // 1,000 minutes missed, then the latest: counted one by one.
    const decision = decide('2026-12-07T09:00:30Z', { cron: '* * * * *', nextFireAt: at('2026-12-06T16:20:00Z') });
    expect(decision).toMatchObject({ kind: 'fire', scheduledAt: at('2026-12-07T09:00:00Z'), missed: 1000 });
    expect(missedWords(1000)).toBe('1,000 earlier times');
  });
});

describe('a fire while an earlier fire of the workflow still runs', () => {
  it('is recorded as skipped with overlap skip, and the schedule moves on', () => {
    expect(decide('2026-12-07T09:00:01Z', { overlap: 'skip' }, { active: true })).toEqual({
      kind: 'skipOverlap',
      scheduledAt: at('2026-12-07T09:00:00Z'),
      previousAt: at('2026-12-07T08:00:00Z'),
      missed: 0,
      nextFireAt: at('2026-12-07T10:00:00Z'),
    });
  });

  it('waits with overlap queue, claiming nothing, and runs once the earlier one ended', () => {
    expect(decide('2026-12-07T09:00:01Z', { overlap: 'queue' }, { active: true })).toEqual({ kind: 'wait' });
    expect(decide('2026-12-07T09:00:30Z', { overlap: 'queue' }, { active: false }).kind).toBe('fire');
  });

  it('is skipped as missed when too late to catch up, whether or not the earlier one still runs', () => {
    const late = { catchUp: 'skip', overlap: 'queue' } as const;
    expect(decide('2026-12-07T09:05:00Z', late, { active: true }).kind).toBe('skipMissed');
  });
});

describe('fires on the days the clocks change', () => {
  const berlin = { cron: '30 2 * * *', timeZone: 'Europe/Berlin' };

  it('fires a daily 02:30 at 03:00 on the spring day, then at 02:30 again', () => {
    const decision = decide('2026-03-29T01:00:05Z', { ...berlin, nextFireAt: at('2026-03-29T01:00:00Z') });
    expect(decision).toEqual({
      kind: 'fire',
      scheduledAt: at('2026-03-29T01:00:00Z'),
      previousAt: at('2026-03-28T01:30:00Z'),
      missed: 0,
      nextFireAt: at('2026-03-30T00:30:00Z'),
    });
  });

  it('fires a daily 02:30 once on the autumn day, not again when 02:30 comes back', () => {
    const first = decide('2026-10-25T00:30:05Z', { ...berlin, nextFireAt: at('2026-10-25T00:30:00Z') });
    expect(first).toMatchObject({ kind: 'fire', nextFireAt: at('2026-10-26T01:30:00Z') });
    const next = first.kind === 'fire' ? first.nextFireAt : null;
    expect(decide('2026-10-25T01:30:05Z', { ...berlin, nextFireAt: next })).toEqual({ kind: 'notDue' });
  });

  it("catches up the spring day's 03:00 fire after a restart at 04:15", () => {
    // 75 minutes late, and the next time is 23.5 hours after it (the day is an hour short): less than a period.
    const decision = decide('2026-03-29T02:15:00Z', { ...berlin, nextFireAt: at('2026-03-29T01:00:00Z') });
    expect(decision).toMatchObject({ kind: 'fire', scheduledAt: at('2026-03-29T01:00:00Z'), missed: 0 });
  });
});

describe('an expression that runs out', () => {
  const ending = endingAt('2026-12-07T11:00:00Z');

  it('runs its last time and leaves no next time', () => {
    const decision = decide('2026-12-07T11:00:10Z', { nextFireAt: at('2026-12-07T11:00:00Z') }, { calendar: ending });
    expect(decision).toEqual({
      kind: 'fire',
      scheduledAt: at('2026-12-07T11:00:00Z'),
      previousAt: at('2026-12-07T10:00:00Z'),
      missed: 0,
      nextFireAt: null,
    });
  });

  it('judges a late last time by the period before it', () => {
    const schedule = { nextFireAt: at('2026-12-07T10:00:00Z') };
    expect(decide('2026-12-07T11:30:00Z', schedule, { calendar: ending })).toMatchObject({ kind: 'fire', missed: 1 });
    expect(decide('2026-12-07T13:30:00Z', schedule, { calendar: ending })).toEqual({
      kind: 'skipMissed',
      scheduledAt: at('2026-12-07T11:00:00Z'),
      missed: 1,
      nextFireAt: null,
    });
  });

  it('gives a new schedule no first time', () => {
    expect(firstFireAt('0 * * * *', 'UTC', at('2026-12-07T11:00:00Z'), ending)).toBeNull();
  });
});

describe('a new schedule', () => {
  it('first fires at the first time after now, in its zone', () => {
    expect(firstFireAt('0 9 * * MON', 'Europe/Berlin', at('2026-12-02T10:00:00Z'), calendar)).toEqual(
      at('2026-12-07T08:00:00Z'),
    );
  });

  it('does not fire at now itself', () => {
    expect(firstFireAt('0 9 * * *', 'UTC', at('2026-12-07T09:00:00Z'), calendar)).toEqual(at('2026-12-08T09:00:00Z'));
  });
});

describe('missed times in words', () => {
  it.each([
    [0, '0 earlier times'],
    [1, '1 earlier time'],
    [2, '2 earlier times'],
    [MAX_COUNTED_MISSED + 1, 'more than 1,000 earlier times (about 1,001)'],
  ])('%d reads "%s"', (missed, words) => {
    expect(missedWords(missed)).toBe(words);
  });
});
