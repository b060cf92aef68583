/**
 * The words people use about workflows, the same in the console, Slack's `/steward` and Discord's `/steward`
 * (`WORKFLOW_FORMS` lists them). Parsing is linear in the text's length and reads at most a few dozen words, so a
 * pasted 100 KB line or a quote that never closes costs one pass and gets a short refusal.
 */
import { MAX_PLAN_CHARS } from '../plan/planner-prompt.ts';
import { fail, ok, type Result } from '../result.ts';
import type { FireReview } from '../workflows.ts';
import { parseSchedule, type ScheduleCommand } from './schedule-command.ts';
import { FORMS, nameOf, quoted, splitWords, type Word } from './command-words.ts';

/** A parsed command. */
export type WorkflowCommand =
  | { kind: 'save'; name: string; everyFire: boolean }
  | { kind: 'list' }
  | { kind: 'show'; name: string; version: number | null }
  | { kind: 'runNow'; name: string }
  | { kind: 'edit'; name: string; json: string }
  | { kind: 'amend'; name: string; text: string }
  | { kind: 'review'; name: string; review: FireReview }
  | { kind: 'delete'; name: string }
  | { kind: 'fork'; name: string; newName: string }
  | ScheduleCommand;

export { WORKFLOW_NAME, WORKFLOW_FORMS } from './command-words.ts';
export type { ScheduleCommand } from './schedule-command.ts';

/** Longest amendment in words (it goes to the planner as a person's instruction). */
export const MAX_AMEND_CHARS = 4000;
// An edit carries a whole plan, so a command may be as long as a plan and a little more.
const MAX_COMMAND_CHARS = MAX_PLAN_CHARS + 1000;
const FIRST_WORDS = new Set(['save', 'workflows', 'workflow', 'fork', 'schedule']);

/** Whether a line starts with a workflow command's word (save, workflows, workflow, fork, schedule). */
export function startsLikeWorkflowCommand(text: string): boolean {
  const first = /^\S+/.exec(text.trimStart().slice(0, 10))?.[0];
  return first !== undefined && FIRST_WORDS.has(first.toLowerCase());
}

/**
 * Whether a typed line is a workflow command: it starts with `workflow`/`workflows`, or it parses as one. A request
 * that merely starts with such a word ("schedule a call with Bob", "save this to notes") is left for the planner.
 */
export function isWorkflowCommand(text: string): boolean {
  if (!startsLikeWorkflowCommand(text)) return false;
  return /^\s*workflows?(\s|$)/i.test(text) || parseWorkflowCommand(text).ok;
}

/** Parses a command; a sentence saying what is wrong (and the right form) when it is not one. */
export function parseWorkflowCommand(text: string): Result<WorkflowCommand, string> {
  if (text.length > MAX_COMMAND_CHARS) {
    return fail(
      `That command is ${text.length.toLocaleString('en-US')} characters long; the most is ${MAX_COMMAND_CHARS.toLocaleString('en-US')}.`,
    );
  }
  if (hasControlCharacters(text)) return fail('That command has control characters in it: type it as plain text.');
  const words = splitWords(text, 0);
  switch (words[0]?.text.toLowerCase()) {
    case 'save':
      return parseSave(words);
    case 'workflows':
      return words.length === 1 ? ok({ kind: 'list' }) : extra(words[1], FORMS.list);
    case 'workflow':
      return parseWorkflow(text, words);
    case 'fork':
      return parseFork(words);
    case 'schedule':
      return parseSchedule(text, words);
    default:
      return fail(`That is not a workflow command: they start with save, workflows, workflow, fork or schedule.`);
  }
}

function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Tabs and line breaks are spacing (a pasted plan has them); every other C0 or C1 control is refused.
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || (c >= 127 && c < 160)) return true;
  }
  return false;
}

function extra(word: Word | undefined, form: string): Result<never, string> {
  return fail(`Unexpected ${quoted(word?.text ?? '')}: the form is ${form}`);
}

function parseSave(words: readonly Word[]): Result<WorkflowCommand, string> {
  const name = nameOf(words[1], FORMS.save);
  if (!name.ok) return name;
  const flag = words[2]?.text.toLowerCase();
  if (flag !== undefined && flag !== 'every-fire' && flag !== 'every_fire') return extra(words[2], FORMS.save);
  if (words.length > 3) return extra(words[3], FORMS.save);
  return ok({ kind: 'save', name: name.value, everyFire: flag !== undefined });
}

function parseFork(words: readonly Word[]): Result<WorkflowCommand, string> {
  const name = nameOf(words[1], FORMS.fork);
  if (!name.ok) return name;
  if (!words[2]) return fail(`Name the new workflow: ${FORMS.fork}`);
  const newName = nameOf(words[2], FORMS.fork);
  if (!newName.ok) return newName;
  if (words.length > 3) return extra(words[3], FORMS.fork);
  if (newName.value === name.value) return fail(`The new name must differ from "${name.value}": ${FORMS.fork}`);
  return ok({ kind: 'fork', name: name.value, newName: newName.value });
}

const WORKFLOW_ACTIONS =
  'nothing (to show it), run, version <n>, edit <json>, amend <words>, review every-fire|saved or delete';

function parseWorkflow(text: string, words: readonly Word[]): Result<WorkflowCommand, string> {
  const name = nameOf(words[1], FORMS.show);
  if (!name.ok) return name;
  const action = words[2];
  if (!action) return ok({ kind: 'show', name: name.value, version: null });
  const rest = text.slice(action.end).trim();
  const n = name.value;
  switch (action.text.toLowerCase()) {
    case 'run':
      return words.length > 3 ? extra(words[3], FORMS.run) : ok({ kind: 'runNow', name: n });
    case 'delete':
      return words.length > 3 ? extra(words[3], FORMS.delete) : ok({ kind: 'delete', name: n });
    case 'version': {
      const version = /^[1-9][0-9]{0,8}$/.test(words[3]?.text ?? '') ? Number(words[3]?.text) : null;
      if (version === null) return fail(`Give the version as a number (1, 2, …): ${FORMS.show}`);
      return words.length > 4 ? extra(words[4], FORMS.show) : ok({ kind: 'show', name: n, version });
    }
    case 'review': {
      const mode = words[3]?.text.toLowerCase();
      const review = mode === 'saved' ? 'saved' : mode === 'every-fire' || mode === 'every_fire' ? 'every_fire' : null;
      if (review === null) return fail(`Say every-fire or saved: ${FORMS.review}`);
      return words.length > 4 ? extra(words[4], FORMS.review) : ok({ kind: 'review', name: n, review });
    }
    case 'edit':
      if (rest === '') return fail(`Give the plan's JSON after edit: ${FORMS.edit}`);
      return ok({ kind: 'edit', name: n, json: rest });
    case 'amend':
      if (rest === '') return fail(`Say what to change after amend: ${FORMS.amend}`);
      if (rest.length > MAX_AMEND_CHARS) return fail(`An amendment is at most ${MAX_AMEND_CHARS} characters.`);
      return ok({ kind: 'amend', name: n, text: rest });
    default:
      return fail(`${quoted(action.text)} is not a workflow action: after workflow ${n} say ${WORKFLOW_ACTIONS}.`);
  }
}
