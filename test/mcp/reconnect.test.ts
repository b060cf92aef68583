import { describe, expect, it } from 'vitest';
import { DEFAULT_RECONNECT_SCHEDULE, reconnectDelay } from '../../src/mcp/reconnect.ts';

describe('reconnectDelay', () => {
  it('starts at 250 ms and doubles up to 30 s by default, each wait between half and all of that', () => {
    const nominal = [250, 500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000];
    nominal.forEach((ms, i) => {
      expect(
        reconnectDelay(DEFAULT_RECONNECT_SCHEDULE, i + 1, () => 0.999_999),
        `retry ${i + 1}`,
      ).toBe(ms);
      expect(
        reconnectDelay(DEFAULT_RECONNECT_SCHEDULE, i + 1, () => 0),
        `retry ${i + 1}`,
      ).toBe(ms / 2);
    });
  });

  it('stays within the cap however many retries there were', () => {
    const schedule = { initialDelayMs: 50, maxDelayMs: 400 };
    for (const retry of [1, 5, 60, 1000, Number.MAX_SAFE_INTEGER]) {
      const wait = reconnectDelay(schedule, retry);
      expect(wait).toBeGreaterThanOrEqual(Math.min(400, 50 * 2 ** (retry - 1)) / 2);
      expect(wait).toBeLessThanOrEqual(400);
    }
  });
});
