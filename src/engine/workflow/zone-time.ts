/**
 * Instants as a time zone's wall clock, for parameters and answers. `Intl` knows the IANA zones and their DST
 * rules, so nothing here holds a table of offsets.
 */

interface WallClock {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
  weekday: string;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** Recent answers: the fires of one moment (a thousand schedules due at 09:00) all ask for the same instant. */
const recent = new Map<string, WallClock>();
const RECENT_MAX = 256;

function wallClock(at: Date, timeZone: string): WallClock {
  const key = `${at.getTime()} ${timeZone}`;
  const known = recent.get(key);
  if (known) return known;
  if (recent.size >= RECENT_MAX) recent.clear();
  const found = readWallClock(at, timeZone);
  recent.set(key, found);
  return found;
}

function readWallClock(at: Date, timeZone: string): WallClock {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    });
    formats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, p.value]));
  return parts as unknown as WallClock;
}

/** The zone's offset from UTC at that instant, as `+01:00`. */
function offset(at: Date, w: WallClock): string {
  const asUtc = Date.UTC(+w.year, +w.month - 1, +w.day, +w.hour, +w.minute, +w.second);
  const minutes = Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** ISO 8601 in the zone, with its offset: `2026-12-07T09:00:00+01:00`. */
export function zoneIso(at: Date, timeZone: string): string {
  const w = wallClock(at, timeZone);
  return `${w.year}-${w.month}-${w.day}T${w.hour}:${w.minute}:${w.second}${offset(at, w)}`;
}

/** The calendar date in the zone: `2026-12-07`. */
export function zoneDate(at: Date, timeZone: string): string {
  const w = wallClock(at, timeZone);
  return `${w.year}-${w.month}-${w.day}`;
}

/** For people: `Mon 2026-12-07 09:00` (seconds only when not zero). */
export function zoneShort(at: Date, timeZone: string): string {
  const w = wallClock(at, timeZone);
  const seconds = w.second === '00' ? '' : `:${w.second}`;
  return `${w.weekday} ${w.year}-${w.month}-${w.day} ${w.hour}:${w.minute}${seconds}`;
}
