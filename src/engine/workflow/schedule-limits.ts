/**
 * How often schedules may fire (pure): the operator's limits, and the refusals a new schedule meets when saved.
 * Counting live schedules per person and per channel is the store's (in one locked statement); the fires of a
 * workflow per day are judged at each fire (`fire-rules.ts`).
 */
/** The operator's limits on schedules (docs/workflows.md "Limits": STEWARD_SCHEDULE_*). */
export interface ScheduleLimits {
  /** The least time between two fires of one schedule. */
  minIntervalMs: number;
  /** Most live (not paused, not deleted) schedules one person may have added. */
  perPerson: number;
  /** Most live schedules of workflows reporting to one channel. */
  perChannel: number;
  /** Most fires of one workflow that start a run in any 24 hours; a fire past it is skipped and recorded. */
  firesPerDay: number;
  /** Whether 6-field expressions (seconds first) are allowed. */
  seconds: boolean;
}

export const DEFAULT_SCHEDULE_LIMITS: ScheduleLimits = {
  minIntervalMs: 5 * 60_000,
  perPerson: 10,
  perChannel: 20,
  firesPerDay: 48,
  seconds: false,
};

/** How many upcoming times are looked at to find a schedule's closest two (an hour of minutes, and more). */
export const INTERVAL_SAMPLE = 61;

/**
 * Why a schedule may not be saved under `limits`, in words with an expression that would be allowed; null when it
 * may. `upcoming` are its next times (at least `INTERVAL_SAMPLE` of them when it has that many).
 */
export function scheduleRefusal(cron: string, upcoming: readonly Date[], limits: ScheduleLimits): string | null {
  const fields = cron.trim().split(/\s+/);
  // Six fields: seconds first (a nickname such as @hourly is one field).
  if (!limits.seconds && fields.length === 6) {
    return (
      `schedules to the second are off here (the operator's STEWARD_SCHEDULE_SECONDS); ` +
      `without the seconds field it reads \`${fields.slice(1).join(' ')}\`.`
    );
  }
  let closest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < upcoming.length; i++) {
    closest = Math.min(closest, (upcoming[i] as Date).getTime() - (upcoming[i - 1] as Date).getTime());
  }
  if (closest >= limits.minIntervalMs) return null;
  return (
    `\`${cron}\` fires ${every(closest)} at its closest, and schedules here fire at most ${every(limits.minIntervalMs)} ` +
    `(the operator's STEWARD_SCHEDULE_MIN_MINUTES). Try \`${allowedCron(limits.minIntervalMs)}\`.`
  );
}

/** The most frequent simple expression that keeps to `minIntervalMs`: every n minutes, hours, or once a day. */
export function allowedCron(minIntervalMs: number): string {
  const minutes = Math.max(1, Math.ceil(minIntervalMs / 60_000));
  if (minutes === 1) return '* * * * *';
  const minuteSteps = [2, 3, 4, 5, 6, 10, 12, 15, 20, 30];
  const minuteStep = minuteSteps.find((m) => m >= minutes);
  if (minuteStep !== undefined) return `*/${minuteStep} * * * *`;
  if (minutes <= 60) return '0 * * * *';
  const hours = Math.ceil(minutes / 60);
  const hourStep = [2, 3, 4, 6, 8, 12].find((h) => h >= hours);
  return hourStep === undefined ? '0 9 * * *' : `0 */${hourStep} * * *`;
}

/** "every 5 minutes", "every 30 seconds", "every 2 hours". */
function every(ms: number): string {
  if (ms < 60_000) {
    const s = Math.max(1, Math.round(ms / 1000));
    return s === 1 ? 'every second' : `every ${s} seconds`;
  }
  if (ms < 3_600_000 || ms % 3_600_000 !== 0) {
    const m = Math.round(ms / 60_000);
    return m === 1 ? 'every minute' : `every ${m} minutes`;
  }
  const h = ms / 3_600_000;
  return h === 1 ? 'every hour' : `every ${h} hours`;
}
