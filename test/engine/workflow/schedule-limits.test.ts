import { describe, expect, it } from 'vitest';
import { CronerCalendar } from '../../../src/cron/croner-calendar.ts';
import {
  allowedCron,
  DEFAULT_SCHEDULE_LIMITS,
  INTERVAL_SAMPLE,
  scheduleRefusal,
} from '../../../src/engine/workflow/schedule-limits.ts';

const calendar = new CronerCalendar();
const from = new Date('2026-12-07T08:00:00Z');
const refusal = (cron: string, limits = DEFAULT_SCHEDULE_LIMITS) =>
  scheduleRefusal(cron, calendar.next(cron, 'UTC', from, INTERVAL_SAMPLE), limits);

describe('schedule limits', () => {
  it('allows what fires at most every 5 minutes, and refuses what fires closer at any point', () => {
    for (const cron of ['*/5 * * * *', '0 9 * * MON', '@hourly', '0,30 * * * *', '0 9,17 * * *'])
      expect(refusal(cron)).toBeNull();
    for (const cron of ['* * * * *', '*/4 * * * *', '0,1 9 * * *', '0,3 * * * *', '58,59 23 * * *'])
      expect(refusal(cron)).toMatch(/at its closest, and schedules here fire at most every 5 minutes/);
  });

  it('refuses seconds unless allowed, then holds them to the interval like any other', () => {
    expect(refusal('0 */5 * * * *')).toContain('schedules to the second are off here');
    const seconds = { ...DEFAULT_SCHEDULE_LIMITS, seconds: true };
    expect(refusal('0 */5 * * * *', seconds)).toBeNull();
    expect(refusal('*/30 * * * * *', seconds)).toContain('fires every 30 seconds at its closest');
    expect(refusal('* * * * * *', { ...seconds, minIntervalMs: 0 })).toBeNull();
  });

  it('suggests the most frequent simple expression that keeps to the interval, and it is allowed', () => {
    const cases: [number, string][] = [
      [60_000, '* * * * *'],
      [5 * 60_000, '*/5 * * * *'],
      [7 * 60_000, '*/10 * * * *'],
      [45 * 60_000, '0 * * * *'],
      [90 * 60_000, '0 */2 * * *'],
      [13 * 3_600_000, '0 9 * * *'],
    ];
    for (const [ms, cron] of cases) {
      expect(allowedCron(ms)).toBe(cron);
      expect(refusal(cron, { ...DEFAULT_SCHEDULE_LIMITS, minIntervalMs: ms })).toBeNull();
    }
  });
});
