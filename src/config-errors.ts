/**
 * A bad setting as one sentence in Steward's words: the variable, what is wrong with its value, and an example of a
 * good one (`STEWARD_MAX_PARALLEL is "lots", which is not a number: it must be a whole number of 1 or more, e.g.
 * STEWARD_MAX_PARALLEL=16.`), instead of the validator's `expected number, received NaN`.
 */
import type { z } from 'zod';

/** What a setting must be and a value that works, kept on its schema with `.meta()`. */
export interface SettingHint {
  /** Finishes "it must be …": `a whole number of 1 or more`. */
  expected: string;
  /** A value that is accepted, as it would be written after `NAME=`. */
  example: string;
}

/** Whether `meta` (a schema's `.meta()`) is a hint. */
export function isSettingHint(meta: unknown): meta is SettingHint {
  const m = meta as Partial<SettingHint> | undefined;
  return typeof m?.expected === 'string' && typeof m.example === 'string';
}

// zod's own messages start so; a message a schema wrote itself ("must start with postgres://") is used as it is.
const ZOD_WORDING = /^(Invalid|Too (small|big)|Expected)\b/;

/**
 * The sentence for one issue of `name`. `secret`: the value is never shown (a database URL may hold a password).
 * `hint` supplies the expectation and example when the issue carries zod's wording.
 */
export function configIssueSentence(
  name: string,
  value: unknown,
  issue: z.core.$ZodIssue,
  hint: SettingHint | undefined,
  secret: boolean,
): string {
  const shown = secret ? 'set to a value (not shown here)' : describeValue(value);
  const example = hint ? `e.g. ${name}=${hint.example}` : undefined;
  if (!ZOD_WORDING.test(issue.message)) {
    const own = issue.message.replace(/^must /, '');
    const withExample = example && !/\be\.g\.|such as/.test(own) ? `${own}, ${example}` : own;
    return `Configuration error: ${name} is ${shown}, but it must ${withExample}.`;
  }
  const problem = problemOf(issue);
  const must = hint ? `: it must be ${hint.expected}, ${example ?? ''}` : '';
  const emptyAdvice = problem === 'is empty' ? ` (or leave ${name} out to use its default)` : '';
  if (problem === 'is empty') return `Configuration error: ${name} is set but empty${must}${emptyAdvice}.`;
  return `Configuration error: ${name} is ${shown}, which ${problem}${must}.`;
}

/** The value as it was written, quoted and cut short. */
function describeValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

/** What is wrong, from the issue's code: "is not a number", "is less than 1". */
function problemOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.expected === 'int') return 'is not a whole number';
      return issue.expected === 'number' ? 'is not a number' : `is not ${article(issue.expected)}`;
    case 'too_small':
      if (issue.origin === 'string') return 'is empty';
      return issue.inclusive ? `is less than ${String(issue.minimum)}` : `is ${String(issue.minimum)} or less`;
    case 'too_big':
      return issue.inclusive ? `is more than ${String(issue.maximum)}` : `is ${String(issue.maximum)} or more`;
    case 'invalid_value':
      return 'is not one of the words it takes';
    case 'invalid_format':
      return issue.format === 'url' ? 'is not a URL' : `is not in the right form (${issue.format})`;
    default:
      return 'is not accepted';
  }
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`;
}
