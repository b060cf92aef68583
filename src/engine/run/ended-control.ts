/**
 * Pause, resume or stop aimed at a run that has ended, while the same person has other runs active in the same
 * conversation: never a bare "already ended" (issue 25, "which run a word applies to is never ambiguous"). A word
 * typed without naming a run goes to the person's only other active run there; otherwise each one is named with
 * how to reach it. Pure: the caller reads the runs and sends the words.
 */
import type { Conversation, StoredRun } from '../ports.ts';
import type { DecisionAction } from '../types.ts';
import { isTerminal } from '../types.ts';
import { shortRunId } from '../text.ts';

/** What to do with the decision: refuse as before, apply it to another run, or refuse naming the active runs. */
export type EndedControl =
  | { kind: 'ended'; text: string }
  | { kind: 'redirect'; runId: string; revision: number; text: string }
  | { kind: 'others'; text: string };

type Candidate = Pick<StoredRun, 'id' | 'status' | 'request' | 'conversation' | 'parentRunId' | 'revision'>;

const CONTROLS: readonly DecisionAction[] = ['pause', 'resume', 'stop'];

/**
 * The answer to `action` on `ended` (a finished run), given the actor's runs (any order, any status). `byWord`: the
 * person typed the word without naming a run (the channel chose the run), so it may go to their only other one.
 */
export function controlEndedRun(o: {
  action: DecisionAction;
  ended: Pick<StoredRun, 'id' | 'status' | 'conversation'>;
  runs: readonly Candidate[];
  byWord: boolean;
}): EndedControl {
  const ended = `Run ${shortRunId(o.ended.id)} has already ended (${o.ended.status})`;
  // Delegated runs follow the run that delegated them: the person reaches them from there.
  const others = CONTROLS.includes(o.action)
    ? o.runs.filter(
        (r) =>
          r.id !== o.ended.id &&
          !isTerminal(r.status) &&
          !r.parentRunId &&
          sameConversation(r.conversation, o.ended.conversation),
      )
    : [];
  const [only] = others;
  if (!only) return { kind: 'ended', text: `This run has already ended (${o.ended.status}); nothing changed.` };
  if (o.byWord && others.length === 1) {
    const text = `${ended}; "${o.action}" went to your active run ${describe(only)}.`;
    return { kind: 'redirect', runId: only.id, revision: only.revision, text };
  }
  const how = (r: Candidate) =>
    o.byWord ? `type "${o.action} ${shortRunId(r.id)}"` : `press ${capitalized(o.action)} on its card`;
  const lines = others.map((r) => `${describe(r)}: to ${o.action} it, ${how(r)}`);
  const text =
    others.length === 1
      ? `${ended}; nothing changed. Your run ${lines[0]}.`
      : `${ended}; nothing changed. Your active runs here: ${lines.join('; ')}.`;
  return { kind: 'others', text };
}

function describe(run: Candidate): string {
  const request = run.request.length > 60 ? `${run.request.slice(0, 59)}…` : run.request;
  return `${shortRunId(run.id)} ("${request}")`;
}

function sameConversation(a: Conversation, b: Conversation): boolean {
  return a.channel === b.channel && a.key === b.key;
}

function capitalized(word: string): string {
  return `${word.slice(0, 1).toUpperCase()}${word.slice(1)}`;
}
