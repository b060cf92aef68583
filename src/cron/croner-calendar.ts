/**
 * The cron calendar over croner: Vixie-style expressions (5 fields, or 6 with seconds first; day-of-month and
 * day-of-week joined by OR, as Vixie cron does) in IANA time zones, with croner's DST rules: a fixed time that a
 * spring change skips fires once at the change, one that an autumn change repeats fires once (the first time).
 */
import { Cron } from 'croner';
import { StewardError } from '../engine/errors.ts';
import type { CronCalendar } from '../engine/workflows.ts';
import { fieldProblem, NICKNAMES, shapeProblem } from './cron-fields.ts';

// One croner object holds about 80 KB (a year table of 10,000 slots), so the cache stays small; building one costs
// about 0.1 ms, so a miss is cheap too.
const CACHE_SIZE = 128;
// 5/6-field expressions have no year, so their times repeat every 400 years: one with no time after this instant has
// none at all.
const EPOCH = new Date(0);

/** `CronCalendar` over croner 11, reusing one parsed expression per (expression, zone) from a small cache. */
export class CronerCalendar implements CronCalendar {
  // Only expressions that parse in a known zone are cached (one that never fires too: it just has no times).
  readonly #cache = new Map<string, Cron>();

  /** Null when valid; else one sentence about the zone, the number of fields, a field, or an expression that never fires. */
  check(cron: string, timeZone: string): string | null {
    const job = this.#job(cron, timeZone);
    if (typeof job === 'string') return job;
    return job.nextRun(EPOCH) === null ? `"${cron.trim()}" never fires: no date matches it.` : null;
  }

  /** The next `count` times strictly after `after`; throws a `config` error on an expression `check` refuses. */
  next(cron: string, timeZone: string, after: Date, count: number): Date[] {
    if (count <= 0) return [];
    return this.#valid(cron, timeZone).nextRuns(count, after);
  }

  /** The latest time strictly before `before`; throws a `config` error on an expression `check` refuses. */
  previous(cron: string, timeZone: string, before: Date): Date | null {
    // croner drops milliseconds, so 09:00:00.000 would not count as before 09:00:00.500: start from the next second.
    const ms = before.getTime();
    const from = ms % 1000 === 0 ? before : new Date(Math.floor(ms / 1000) * 1000 + 1000);
    return this.#valid(cron, timeZone).previousRuns(1, from)[0] ?? null;
  }

  #valid(cron: string, timeZone: string): Cron {
    const job = this.#job(cron, timeZone);
    if (typeof job === 'string') throw new StewardError('config', job);
    return job;
  }

  /** The parsed expression, from the cache or built (and cached); a sentence when it cannot be built. */
  #job(cron: string, timeZone: string): Cron | string {
    const expr = cron.trim();
    const key = `${timeZone}\n${expr}`;
    const hit = this.#cache.get(key);
    if (hit) {
      // The least recently used goes first: a hit moves to the end.
      this.#cache.delete(key);
      this.#cache.set(key, hit);
      return hit;
    }
    const problem = zoneProblem(timeZone) ?? shapeProblem(expr);
    if (problem) return problem;
    let job: Cron;
    try {
      job = build(expr, timeZone);
    } catch {
      return fieldProblem(expr, (e) => build(e, timeZone)) ?? `"${expr}" is not a valid cron expression.`;
    }
    if (this.#cache.size >= CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(key, job);
    return job;
  }
}

function build(expr: string, timeZone: string): Cron {
  const pattern = NICKNAMES.get(expr.toLowerCase()) ?? expr;
  return new Cron(pattern, { timezone: timeZone, paused: true, mode: '5-or-6-parts', domAndDow: false });
}

function zoneProblem(timeZone: string): string | null {
  const shown = timeZone.length > 60 ? `${timeZone.slice(0, 57)}...` : timeZone;
  const unknown = `Unknown time zone "${shown}": use an IANA name such as Europe/Berlin.`;
  // An empty name would mean the machine's own zone to croner.
  if (timeZone.trim() === '' || timeZone.length > 100) return unknown;
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    return unknown;
  }
  return null;
}
