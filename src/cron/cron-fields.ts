/**
 * What is wrong with a cron expression, in words: its shape (how many fields, which characters), and which field
 * croner refused and why, without the library's names or stack.
 */

/** Vixie cron's nicknames, as the five fields they stand for. */
export const NICKNAMES: ReadonlyMap<string, string> = new Map([
  ['@yearly', '0 0 1 1 *'],
  ['@annually', '0 0 1 1 *'],
  ['@monthly', '0 0 1 * *'],
  ['@weekly', '0 0 * * 0'],
  ['@daily', '0 0 * * *'],
  ['@midnight', '0 0 * * *'],
  ['@hourly', '0 * * * *'],
]);

const FIVE = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'];
const SIX = ['second', ...FIVE];
const FORMS = `5 fields (${FIVE.join(' ')}), or 6 with seconds first (${SIX.join(' ')})`;
const RANGES: Record<string, string> = {
  second: 'seconds run from 0 to 59',
  minute: 'minutes run from 0 to 59',
  hour: 'hours run from 0 to 23',
  'day-of-month': 'days of the month run from 1 to 31',
  month: 'months run from 1 to 12 (or JAN to DEC)',
  'day-of-week': 'days of the week run from 0 to 7, both Sunday (or SUN to SAT)',
};
// Digits, names (JAN, MON), and * , / - plus croner's L, W, # and ?; a ":" would make croner read a date instead.
const FIELD_CHARS = /^[0-9A-Za-z*,/#?-]+$/;

/** A sentence when the expression has the wrong number of fields or a character no field uses; else null. */
export function shapeProblem(expr: string): string | null {
  if (NICKNAMES.has(expr.toLowerCase())) return null;
  const fields = fieldsOf(expr);
  if (fields.length !== 5 && fields.length !== 6) {
    const n = fields.length === 1 ? '1 field' : `${fields.length} fields`;
    return `"${shown(expr)}" has ${n}; a cron expression has ${FORMS}.`;
  }
  const names = fields.length === 5 ? FIVE : SIX;
  const bad = fields.findIndex((f) => !FIELD_CHARS.test(f));
  if (bad < 0) return null;
  return `The ${names[bad]} field "${shown(fields[bad] as string)}" is not valid: it holds a character cron does not use.`;
}

/**
 * Which field croner refuses, found by trying each field alone with `*` in the others, and why, in words; null when
 * no single field is at fault.
 */
export function fieldProblem(expr: string, build: (expr: string) => unknown): string | null {
  const fields = fieldsOf(expr);
  const names = fields.length === 5 ? FIVE : SIX;
  for (const [i, field] of fields.entries()) {
    try {
      build(fields.map((f, j) => (j === i ? f : '*')).join(' '));
    } catch (err) {
      const name = names[i] as string;
      return `The ${name} field "${shown(field)}" is not valid: ${reason(err, name)}.`;
    }
  }
  return null;
}

/** Croner's complaint as a clause, for a field of that name. */
function reason(err: unknown, field: string): string {
  const text = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
  if (/Invalid value for/i.test(text)) return RANGES[field] ?? 'a value is out of range';
  if (/illegal stepping: 0/i.test(text)) return 'a step of 0 never moves on';
  if (/steps cannot be greater/i.test(text)) return "the step is larger than the field's range";
  if (/larger than to value/i.test(text)) return 'a range must go from the lower value to the higher';
  if (/stepping with (numeric|missing) prefix/i.test(text))
    return 'write a step as */n, or as a range with a step, a-b/n';
  if (/illegal characters|is not a number|NaN/i.test(text))
    return `it is not a number or a name a ${field} field takes`;
  if (/\bW\b/.test(text)) return 'W (the nearest weekday) goes in day-of-month, after a single day';
  if (/nth weekday/i.test(text)) return 'after #, write which week of the month: 1 to 5, or L for the last';
  if (/#|\bL modifier/.test(text)) return '# and L after a day go in day-of-week';
  const clause = text
    .replace(/^CronPattern:\s*/i, '')
    .replace(/^Syntax error,\s*/i, '')
    .replace(/\.$/, '');
  return shown(clause.replace(/croner|CronPattern|CronOptions/gi, 'cron'), 160);
}

function fieldsOf(expr: string): string[] {
  return expr.trim() === '' ? [] : expr.trim().split(/\s+/);
}

function shown(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
