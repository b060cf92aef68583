/**
 * When to try a server again after it went away (or never came up): exponential backoff with jitter.
 */

/** The wait before the first retry, doubling after each failed retry up to the cap. */
export interface ReconnectSchedule {
  initialDelayMs: number;
  maxDelayMs: number;
}

/** 250 ms, 500 ms, 1 s, 2 s … up to 30 s between attempts (each drawn between half and all of that). */
export const DEFAULT_RECONNECT_SCHEDULE: ReconnectSchedule = { initialDelayMs: 250, maxDelayMs: 30_000 };

/**
 * The wait before retry number `retry` (1 for the first after a loss): `initialDelayMs · 2^(retry−1)`, capped at
 * `maxDelayMs`, then drawn at random between half and all of it, so servers that went down together (a host
 * restart, a network cut) are not all tried again at the same instant.
 */
export function reconnectDelay(schedule: ReconnectSchedule, retry: number, random: () => number = Math.random): number {
  const doublings = Math.min(Math.max(retry - 1, 0), 40);
  const nominal = Math.min(schedule.maxDelayMs, schedule.initialDelayMs * 2 ** doublings);
  return Math.round(nominal * (0.5 + 0.5 * random()));
}
