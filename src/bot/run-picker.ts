/**
 * A control word typed at the top of a direct conversation (`stop`, `pause`, `status`) sits in no run's thread, so
 * it names no run: with runs active in that conversation the answer is a picker, each run listed with its own
 * button, never a guess (issue 25, docs/runs.md "Steering a run"). Pure and the same on every platform; the renderers
 * (`slack-run-picker.ts`, `discord-run-picker.ts`) turn it into buttons carrying each run's id and revision.
 */
import type { RunListing } from '../engine/channel.ts';
import { shortRunId } from '../engine/text.ts';
import type { DecisionAction } from '../engine/types.ts';

/** A word that asks for a picker when typed outside a run's thread. */
export type PickerWord = 'stop' | 'pause' | 'status';

/** At most this many runs are listed, with a note of how many more (a chat message, not a dashboard). */
export const PICKER_MAX_RUNS = 10;

/** One run in the picker: its line and the decision its button sends. */
export interface PickerEntry {
  runId: string;
  revision: number;
  line: string;
  action: DecisionAction;
}

/** The picker: an opening sentence, one entry per run, and a closing note when some were left out. */
export interface RunPicker {
  intro: string;
  entries: PickerEntry[];
  more: string | null;
}

/** The control word a whole message is (case and a closing `.`/`!`/`?` aside), or null. */
export function pickerWord(text: string): PickerWord | null {
  const word = text
    .trim()
    .toLowerCase()
    .replace(/[.!?]+$/, '');
  return word === 'stop' || word === 'pause' || word === 'status' ? word : null;
}

/** The picker for `word` over the person's active runs in this conversation (newest first); null when none is. */
export function createRunPicker(word: PickerWord, runs: readonly RunListing[]): RunPicker | null {
  if (runs.length === 0) return null;
  const shown = runs.slice(0, PICKER_MAX_RUNS);
  const intro =
    word === 'status'
      ? `Your active runs here (${runs.length}); each has its own thread:`
      : `Which run should I ${word}? You have ${runs.length === 1 ? 'one active run' : `${runs.length} active runs`} here:`;
  return {
    intro,
    entries: shown.map((run) => ({
      runId: run.id,
      revision: run.revision,
      action: actionFor(word, run),
      line: `${shortRunId(run.id)} · ${run.statusText} · ${cut(run.request, 80)}`,
    })),
    more: runs.length > shown.length ? `…and ${runs.length - shown.length} more: /steward runs lists them.` : null,
  };
}

/** A run waiting for review is cancelled (held steps included), a paused one asked to pause resumes; else the word. */
function actionFor(word: PickerWord, run: RunListing): DecisionAction {
  if (run.status === 'awaiting_review') return 'cancel';
  if (word === 'pause') return run.status === 'paused' ? 'resume' : 'pause';
  return 'stop';
}

function cut(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
