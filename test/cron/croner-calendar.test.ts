import { describe, expect, it } from 'vitest';
import { CronerCalendar } from '../../src/cron/croner-calendar.ts';
import { zoneIso } from '../../src/engine/workflow/zone-time.ts';

const calendar = new CronerCalendar();
const at = (iso: string) => new Date(iso);
const isos = (dates: readonly Date[], zone: string) => dates.map((d) => zoneIso(d, zone));

describe('cron times in a time zone', () => {
  it('fires a daily 02:30 once at 03:00 on the Berlin spring-forward day, when 02:30 does not exist', () => {
    const times = calendar.next('30 2 * * *', 'Europe/Berlin', at('2026-03-27T12:00:00Z'), 4);
    expect(isos(times, 'Europe/Berlin')).toEqual([
      '2026-03-28T02:30:00+01:00',
      '2026-03-29T03:00:00+02:00',
      '2026-03-30T02:30:00+02:00',
      '2026-03-31T02:30:00+02:00',
    ]);
  });

  it('fires a daily 02:30 once on the Berlin fall-back day, when 02:30 happens twice', () => {
    const times = calendar.next('30 2 * * *', 'Europe/Berlin', at('2026-10-24T12:00:00Z'), 3);
    expect(isos(times, 'Europe/Berlin')).toEqual([
      '2026-10-25T02:30:00+02:00',
      '2026-10-26T02:30:00+01:00',
      '2026-10-27T02:30:00+01:00',
    ]);
  });

  it('keeps 09:00 in New York across the March change (14:00 UTC, then 13:00 UTC)', () => {
    const times = calendar.next('0 9 * * *', 'America/New_York', at('2026-03-07T12:00:00Z'), 3);
    expect(times.map((d) => d.toISOString())).toEqual([
      '2026-03-07T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z',
      '2026-03-09T13:00:00.000Z',
    ]);
  });

  it('fires a weekly 0 9 * * MON on Mondays at 09:00 Berlin time, winter and summer', () => {
    const times = calendar.next('0 9 * * MON', 'Europe/Berlin', at('2026-03-20T00:00:00Z'), 3);
    expect(isos(times, 'Europe/Berlin')).toEqual([
      '2026-03-23T09:00:00+01:00',
      '2026-03-30T09:00:00+02:00',
      '2026-04-06T09:00:00+02:00',
    ]);
  });

  it('reads a sixth field at the front as seconds', () => {
    const times = calendar.next('*/20 * * * * *', 'UTC', at('2026-01-01T09:00:00Z'), 3);
    expect(times.map((d) => d.toISOString())).toEqual([
      '2026-01-01T09:00:20.000Z',
      '2026-01-01T09:00:40.000Z',
      '2026-01-01T09:01:00.000Z',
    ]);
  });

  it('gives times strictly after `after`, even when `after` is one of them or falls between seconds', () => {
    expect(calendar.next('0 9 * * *', 'UTC', at('2026-01-01T09:00:00Z'), 1)).toEqual([at('2026-01-02T09:00:00Z')]);
    expect(calendar.next('0 9 * * *', 'UTC', at('2026-01-01T08:59:59.500Z'), 1)).toEqual([at('2026-01-01T09:00:00Z')]);
    expect(calendar.next('0 9 * * *', 'UTC', at('2026-01-01T09:00:00.500Z'), 1)).toEqual([at('2026-01-02T09:00:00Z')]);
  });

  it('gives the latest time strictly before `before`, even between seconds', () => {
    expect(calendar.previous('0 9 * * *', 'UTC', at('2026-01-01T09:00:00Z'))).toEqual(at('2025-12-31T09:00:00Z'));
    expect(calendar.previous('0 9 * * *', 'UTC', at('2026-01-01T09:00:00.500Z'))).toEqual(at('2026-01-01T09:00:00Z'));
    expect(calendar.previous('* * * * * *', 'UTC', at('2026-01-01T09:00:00.500Z'))).toEqual(at('2026-01-01T09:00:00Z'));
    expect(calendar.previous('30 2 * * *', 'Europe/Berlin', at('2026-03-30T00:00:00Z'))).toEqual(
      at('2026-03-29T01:00:00Z'),
    );
  });

  it('joins day-of-month and day-of-week with OR, as Vixie cron does', () => {
    // The 13th, or any Friday.
    const times = calendar.next('0 0 13 * FRI', 'UTC', at('2026-02-01T00:00:00Z'), 4);
    expect(times.map((d) => d.toISOString().slice(0, 10))).toEqual([
      '2026-02-06',
      '2026-02-13',
      '2026-02-20',
      '2026-02-27',
    ]);
  });

  it('takes the Vixie nicknames', () => {
    expect(calendar.check('@daily', 'UTC')).toBeNull();
    expect(calendar.next('@weekly', 'UTC', at('2026-01-01T00:00:00Z'), 1)).toEqual([at('2026-01-04T00:00:00Z')]);
  });

  it('answers no times for a count of 0', () => {
    expect(calendar.next('* * * * *', 'UTC', at('2026-01-01T00:00:00Z'), 0)).toEqual([]);
  });
});

describe('what is wrong with a cron expression or a zone', () => {
  it.each([
    ['0 9 * * MON', 'Europe/Berlin'],
    ['0 9 * * 1-5', 'America/New_York'],
    ['*/15 * * * * *', 'UTC'],
    ['0 0 L * *', 'UTC'],
    ['  0 9 * * MON  ', 'Asia/Tokyo'],
  ])('accepts "%s" in %s', (cron, zone) => {
    expect(calendar.check(cron, zone)).toBeNull();
  });

  it.each([
    ['* * *', '"* * *" has 3 fields; a cron expression has 5 fields'],
    ['* * * * * * *', '"* * * * * * *" has 7 fields'],
    ['', '"" has 0 fields'],
    ['@reboot', '"@reboot" has 1 field;'],
  ])('says which form is expected for "%s"', (cron, start) => {
    const problem = calendar.check(cron, 'UTC');
    expect(problem).toContain(start);
    expect(problem).toContain('(minute hour day-of-month month day-of-week), or 6 with seconds first');
  });

  it.each([
    ['61 * * * *', 'The minute field "61" is not valid: minutes run from 0 to 59.'],
    ['0 24 * * *', 'The hour field "24" is not valid: hours run from 0 to 23.'],
    ['0 0 32 * *', 'The day-of-month field "32" is not valid: days of the month run from 1 to 31.'],
    ['0 0 * 13 *', 'The month field "13" is not valid: months run from 1 to 12 (or JAN to DEC).'],
    [
      '0 0 * * 8',
      'The day-of-week field "8" is not valid: days of the week run from 0 to 7, both Sunday (or SUN to SAT).',
    ],
    ['60 0 0 * * *', 'The second field "60" is not valid: seconds run from 0 to 59.'],
    ['*/0 * * * *', 'The minute field "*/0" is not valid: a step of 0 never moves on.'],
    ['5-1 * * * *', 'The minute field "5-1" is not valid: a range must go from the lower value to the higher.'],
    ['5/2 * * * *', 'The minute field "5/2" is not valid: write a step as */n, or as a range with a step, a-b/n.'],
    ['x * * * *', 'The minute field "x" is not valid: it is not a number or a name a minute field takes.'],
    ['0 0 * FOO *', 'The month field "FOO" is not valid: it is not a number or a name a month field takes.'],
    ['0:30 9 * * *', 'The minute field "0:30" is not valid: it holds a character cron does not use.'],
    [
      '0 9 * * MON#6',
      'The day-of-week field "MON#6" is not valid: after #, write which week of the month: 1 to 5, or L for the last.',
    ],
  ])('names the bad field of "%s"', (cron, sentence) => {
    expect(calendar.check(cron, 'UTC')).toBe(sentence);
  });

  it('never shows the library, its stack or its names', () => {
    for (const cron of ['61 * * * *', '*/0 * * * *', '0 0 1W-5 * *', '0 9 * * MON#6', 'x * * * *']) {
      const problem = calendar.check(cron, 'UTC') ?? '';
      expect(problem).not.toMatch(/croner|CronPattern|TypeError|RangeError|\n|at .*\.js/);
    }
  });

  it('refuses an unknown time zone with an example of a good one', () => {
    expect(calendar.check('0 9 * * *', 'Mars/Base')).toBe(
      'Unknown time zone "Mars/Base": use an IANA name such as Europe/Berlin.',
    );
    expect(calendar.check('0 9 * * *', '')).toBe('Unknown time zone "": use an IANA name such as Europe/Berlin.');
  });

  it.each(['0 0 30 2 *', '0 0 31 4 *'])('refuses "%s", which never fires', (cron) => {
    expect(calendar.check(cron, 'Europe/Berlin')).toBe(`"${cron}" never fires: no date matches it.`);
  });

  it('accepts 29 February, which fires once every four years', () => {
    expect(calendar.check('0 0 29 2 *', 'UTC')).toBeNull();
    expect(calendar.next('0 0 29 2 *', 'UTC', at('2026-01-01T00:00:00Z'), 1)).toEqual([at('2028-02-29T00:00:00Z')]);
  });

  it('refuses to compute times for an expression it refuses to check', () => {
    expect(() => calendar.next('61 * * * *', 'UTC', at('2026-01-01T00:00:00Z'), 1)).toThrow(/minute field "61"/);
    expect(() => calendar.previous('0 9 * * *', 'Mars/Base', at('2026-01-01T00:00:00Z'))).toThrow(/Unknown time zone/);
  });

  it('keeps answering right past its cache size, with many expressions in turn', () => {
    const start = at('2026-01-01T00:00:00Z');
    for (let round = 0; round < 2; round++) {
      for (let minute = 0; minute < 60; minute++) {
        for (const zone of ['UTC', 'Europe/Berlin', 'Asia/Tokyo']) {
          const [next] = calendar.next(`${minute} 12 * * *`, zone, start, 1);
          expect(zoneIso(next as Date, zone).slice(11, 19)).toBe(`12:${String(minute).padStart(2, '0')}:00`);
        }
      }
    }
  });
});
