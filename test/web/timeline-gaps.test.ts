import { describe, expect, it } from 'vitest';
import { restartGaps, type GapAttempt } from '../../src/web/timeline-gaps.ts';

const s = (seconds: number) => seconds * 1000;
const attempt = (start: number, end: number | null, more: Partial<GapAttempt> = {}): GapAttempt => ({
  start: s(start),
  end: end === null ? null : s(end),
  interrupted: false,
  progressAt: null,
  ...more,
});

describe('restartGaps: the time Steward was down, after what was known of an interrupted attempt', () => {
  it('starts at the last thing the run stored before the restart and ends when the run was taken over', () => {
    const attempts = [
      attempt(0, 600, { interrupted: true, progressAt: s(12) }),
      attempt(0, 20),
      // Ended by the same takeover: its end is the takeover's, not a sign of life.
      attempt(5, 600, { interrupted: true }),
      // Started after the takeover: not before the restart.
      attempt(640, 650),
    ];
    const gap = { from: s(20), to: s(601) };
    expect(restartGaps(attempts, [s(601)])).toEqual([gap, null, gap, null]);
  });

  it("uses the attempt's own last progress when nothing later is known, and its end when no takeover is stored", () => {
    expect(restartGaps([attempt(0, 300, { interrupted: true, progressAt: s(30) })], [])).toEqual([
      { from: s(30), to: s(300) },
    ]);
  });

  it('draws no gap for an attempt that ended on its own or still runs', () => {
    expect(restartGaps([attempt(0, 10), attempt(0, null)], [s(5)])).toEqual([null, null]);
  });
});
