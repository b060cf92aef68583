/** Pacing of calls' progress reports: the first at once, then the latest at most once per interval, per call. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PacedProgress } from '../../../src/engine/flows/paced-progress.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function paced(intervalMs = 1_000) {
  const shown: string[] = [];
  const box = new PacedProgress<number>((key, n) => shown.push(`${key}:${n}`), { now: () => Date.now(), intervalMs });
  return { box, shown };
}

describe('paced progress', () => {
  it('a report every 10 ms for 3 s is shown 4 times: at once, then the latest of each second', () => {
    const { box, shown } = paced();
    for (let n = 1; n <= 300; n++) {
      box.report('a#1', n);
      vi.advanceTimersByTime(10);
    }
    vi.advanceTimersByTime(5_000);
    expect(shown).toEqual(['a#1:1', 'a#1:100', 'a#1:200', 'a#1:300']);
  });

  it('each call keeps its own pace', () => {
    const { box, shown } = paced();
    box.report('a#1', 1);
    box.report('b#1', 1);
    box.report('a#1', 2);
    vi.advanceTimersByTime(1_000);
    expect(shown).toEqual(['a#1:1', 'b#1:1', 'a#1:2']);
  });

  it('a call that ended (or was stopped) takes its unshown report with it, and a late report starts afresh', () => {
    const { box, shown } = paced();
    box.report('a#1', 1);
    box.report('a#1', 2);
    box.end('a#1');
    vi.advanceTimersByTime(2_000);
    expect(shown).toEqual(['a#1:1']);
    box.report('b#1', 1);
    box.report('b#1', 2);
    box.endAll();
    vi.advanceTimersByTime(2_000);
    expect(shown).toEqual(['a#1:1', 'b#1:1']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a report after a quiet interval shows at once', () => {
    const { box, shown } = paced();
    box.report('a#1', 1);
    vi.advanceTimersByTime(1_500);
    box.report('a#1', 2);
    expect(shown).toEqual(['a#1:1', 'a#1:2']);
  });

  it('a clock that went back delays a report by one interval at most', () => {
    let now = 10_000;
    const shown: number[] = [];
    const box = new PacedProgress<number>((_, n) => shown.push(n), { now: () => now });
    box.report('a#1', 1);
    now = 0;
    box.report('a#1', 2);
    vi.advanceTimersByTime(1_000);
    expect(shown).toEqual([1, 2]);
  });
});
