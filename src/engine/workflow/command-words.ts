/** The pieces every workflow command is made of: words with their places, names, and the forms to point people to. */
import { fail, ok, type Result } from '../result.ts';

/** A workflow's name after lower-casing: a letter, then up to 39 lower-case letters, digits, `-` or `_`. */
export const WORKFLOW_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/** Each command's form, for refusals. */
export const FORMS = {
  save: 'save <name> [every-fire]',
  list: 'workflows',
  show: 'workflow <name> [version <n>]',
  run: 'workflow <name> run',
  edit: 'workflow <name> edit <json>',
  amend: 'workflow <name> amend <words>',
  review: 'workflow <name> review every-fire|saved',
  delete: 'workflow <name> delete',
  fork: 'fork <name> <new name>',
  schedule: 'schedule <name> "<cron>" [<time zone>] [catch-up once|skip] [overlap skip|queue]',
  scheduleSet: 'schedule <name> pause|resume|delete [<n>]',
} as const;

/** Each command's form with what it does, in the order the help answer lists them. */
export const WORKFLOW_FORMS: readonly { form: string; says: string }[] = [
  { form: FORMS.save, says: "save this conversation's last approved run as a workflow" },
  { form: FORMS.list, says: 'list workflows with their versions, schedules, next fire and last results' },
  { form: FORMS.show, says: 'show a workflow (its current or an older version)' },
  { form: FORMS.run, says: 'run it now' },
  { form: FORMS.edit, says: 'a new version from JSON (a whole plan or {"steps": [...]})' },
  { form: FORMS.amend, says: 'a new version written by the planner from your words' },
  { form: FORMS.review, says: 'whether each fire waits for a person' },
  { form: FORMS.delete, says: 'delete it and its schedules (its history stays readable)' },
  { form: FORMS.fork, says: 'copy a workflow under a new name' },
  { form: FORMS.schedule, says: 'run it on a schedule, e.g. schedule digest "0 9 * * MON" Europe/Berlin' },
  { form: FORMS.scheduleSet, says: 'pause, resume or delete all its schedules, or the n-th as listed' },
];

/** One word of a command and where it ends in the text (what follows `edit` or a quote is read from there). */
export interface Word {
  text: string;
  end: number;
}

/** More words than any command has: reading stops there, so a line of a million words costs no more than this. */
const MAX_WORDS = 24;

/** The words of `text` from `from`, split at spacing, at most `MAX_WORDS` + 1 (one more says "there is more"). */
export function splitWords(text: string, from: number): Word[] {
  const words: Word[] = [];
  const re = /\S+/g;
  re.lastIndex = from;
  for (let m = re.exec(text); m && words.length <= MAX_WORDS; m = re.exec(text)) {
    words.push({ text: m[0], end: m.index + m[0].length });
  }
  return words;
}

/** A person's word inside a refusal: quoted, and cut so a pasted page does not come back whole. */
export function quoted(word: string): string {
  if (word.length <= 40) return `"${word}"`;
  // Cut before a surrogate pair's second half, never between its halves.
  const end = /[\uD800-\uDBFF]/.test(word.charAt(38)) ? 38 : 39;
  return `"${word.slice(0, end)}…"`;
}

/** The workflow name in `word`, lower-cased; refused with the rule (and the command's form when missing). */
export function nameOf(word: Word | undefined, commandForm: string): Result<string, string> {
  if (!word) return fail(`Name the workflow: ${commandForm}`);
  const name = word.text.toLowerCase();
  if (WORKFLOW_NAME.test(name)) return ok(name);
  return fail(
    `${quoted(word.text)} is not a workflow name: a name is a letter followed by up to 39 letters, digits, - or _ (e.g. weekly-digest).`,
  );
}
