/** The `schedule` command: a new schedule with its cron expression in quotes, or pausing, resuming, deleting. */
import { fail, ok, type Result } from '../result.ts';
import type { CatchUp, Overlap } from '../workflows.ts';
import { FORMS, nameOf, quoted, splitWords, type Word } from './command-words.ts';

/** A parsed `schedule` command. */
export type ScheduleCommand =
  | {
      kind: 'schedule';
      name: string;
      cron: string;
      /** Null: the configured default zone. */
      timeZone: string | null;
      catchUp: CatchUp;
      overlap: Overlap;
    }
  | { kind: 'scheduleSet'; name: string; action: 'pause' | 'resume' | 'delete'; index: number | null };

const MAX_CRON_CHARS = 200;
// The shape of an IANA name (Europe/Berlin, America/Argentina/Buenos_Aires, Etc/GMT+5, UTC); the calendar judges it.
const ZONE = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;
// Each opening quote and the quotes that may close it: straight ones, and the typographic ones Slack and phones type
// in their place (“…” in English, „…“ in German, ‘…’ for single quotes).
const CLOSERS = new Map([
  ['"', '"“”'],
  ['“', '”“"'],
  ['”', '”“"'],
  ['„', '“”"'],
  ["'", "'‘’"],
  ['‘', "’‘'"],
  ['’', "’‘'"],
  ['‚', "‘’'"],
]);
const CATCH_UP = new Set(['catch-up', 'catchup', 'catch_up']);

const example = (name: string): string => `schedule ${name} "0 9 * * MON" Europe/Berlin`;

/** Parses `schedule …` from its words (the first is `schedule`) and its text (the cron is read between quotes). */
export function parseSchedule(text: string, words: readonly Word[]): Result<ScheduleCommand, string> {
  const nameWord = words[1];
  if (!nameWord) return fail(`Name the workflow: ${FORMS.schedule}`);
  if (CLOSERS.has(nameWord.text.charAt(0))) {
    return fail(`Name the workflow before the cron expression: ${example('digest')}`);
  }
  const name = nameOf(nameWord, FORMS.schedule);
  if (!name.ok) return name;
  const rest = text.slice(nameWord.end).trimStart();
  const closers = CLOSERS.get(rest.charAt(0));
  if (closers) return parseNew(name.value, text, text.length - rest.length, closers);
  const action = words[2]?.text.toLowerCase();
  if (action === 'pause' || action === 'resume' || action === 'delete') return parseSet(name.value, action, words);
  if (!words[2]) return fail(`Give the cron expression, in quotes: ${example(name.value)}`);
  return fail(`Put the cron expression in quotes, as in: ${example(name.value)} (or ${FORMS.scheduleSet})`);
}

function parseSet(
  name: string,
  action: 'pause' | 'resume' | 'delete',
  words: readonly Word[],
): Result<ScheduleCommand, string> {
  const n = words[3]?.text;
  if (n !== undefined && !/^[1-9][0-9]{0,3}$/.test(n)) {
    return fail(`Give the schedule's number as listed by workflows (1, 2, …), not ${quoted(n)}: ${FORMS.scheduleSet}`);
  }
  if (words.length > 4) return fail(`Unexpected ${quoted(words[4]?.text ?? '')}: the form is ${FORMS.scheduleSet}`);
  return ok({ kind: 'scheduleSet', name, action, index: n === undefined ? null : Number(n) });
}

/** A new schedule; `open` is where its opening quote is in `text`. */
function parseNew(name: string, text: string, open: number, closers: string): Result<ScheduleCommand, string> {
  let close = open + 1;
  while (close < text.length && !closers.includes(text.charAt(close))) close++;
  if (close >= text.length) return fail(`The cron expression's quote is never closed: ${example(name)}`);
  if (close - open - 1 > MAX_CRON_CHARS) return fail(`A cron expression is at most ${MAX_CRON_CHARS} characters.`);
  // Spacing is normalised: a non-breaking space pasted from a chat is still a field separator.
  const cron = text
    .slice(open + 1, close)
    .trim()
    .split(/\s+/)
    .join(' ');
  if (cron === '') return fail(`The cron expression is empty: ${example(name)}`);
  const tail = splitWords(text, close + 1);
  let i = 0;
  let timeZone: string | null = null;
  const first = tail[0]?.text;
  if (first !== undefined && !isOption(first)) {
    if (!ZONE.test(first)) {
      return fail(`${quoted(first)} is not a time zone: use an IANA name such as Europe/Berlin, or leave it out.`);
    }
    timeZone = first;
    i = 1;
  }
  const options = parseOptions(tail.slice(i));
  if (!options.ok) return options;
  return ok({ kind: 'schedule', name, cron, timeZone, ...options.value });
}

const not = (word: Word | undefined): string => (word ? `, not ${quoted(word.text)}` : '');

function isOption(word: string): boolean {
  const w = word.toLowerCase();
  return CATCH_UP.has(w) || w === 'overlap';
}

/** `catch-up once|skip` and `overlap skip|queue`, each at most once, in any order. */
function parseOptions(words: readonly Word[]): Result<{ catchUp: CatchUp; overlap: Overlap }, string> {
  let catchUp: CatchUp | null = null;
  let overlap: Overlap | null = null;
  for (let i = 0; i < words.length; i += 2) {
    const key = words[i]?.text.toLowerCase() ?? '';
    const value = words[i + 1]?.text.toLowerCase();
    if (CATCH_UP.has(key)) {
      if (catchUp !== null) return fail('catch-up is given twice.');
      if (value !== 'once' && value !== 'skip') return fail(`catch-up is once or skip${not(words[i + 1])}.`);
      catchUp = value;
    } else if (key === 'overlap') {
      if (overlap !== null) return fail('overlap is given twice.');
      if (value !== 'skip' && value !== 'queue') return fail(`overlap is skip or queue${not(words[i + 1])}.`);
      overlap = value;
    } else {
      return fail(`Unexpected ${quoted(words[i]?.text ?? '')}: the form is ${FORMS.schedule}`);
    }
  }
  return ok({ catchUp: catchUp ?? 'once', overlap: overlap ?? 'skip' });
}
