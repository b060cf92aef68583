/** What each step of a run did, in words: for the report prompt, the plain report, and amendments mid-run. */
import { cut, outputText } from '../text.ts';
import type { StepStatus } from '../types.ts';
import type { DispatchState } from './dispatch-state.ts';

const PER_STEP_BUDGET = 4_000;
const TOTAL_BUDGET = 24_000;

/** One line per step, in plan order, saying what happened. */
export function stepSummaries(state: DispatchState, perStep = PER_STEP_BUDGET): string[] {
  const per = Math.max(200, Math.min(perStep, Math.floor(TOTAL_BUDGET / Math.max(1, state.plan.steps.length))));
  return state.plan.steps.map((step) => {
    const rt = state.steps[step.id];
    const status: StepStatus | 'never ran' = rt?.status === 'pending' ? 'never ran' : (rt?.status ?? 'never ran');
    const target = step.kind === 'tool' ? step.tool : step.kind;
    let detail = '';
    if (rt?.status === 'succeeded') detail = cut(outputText(rt.output), per);
    else if (rt?.error) detail = rt.error.message;
    else if (rt?.note) detail = rt.note;
    return `${step.id} (${target}, ${step.description || 'no description'}): ${status.toUpperCase()}${detail ? ` — ${detail}` : ''}`;
  });
}

/** A report written by code alone, saying why the report writer failed (`why`, a clause). */
export function plainReport(outcome: string, lines: string[], why: string): string {
  return `Run ${outcome}. (The report writer failed (${why}), so here are the step results.)\n${lines.join('\n')}`;
}

/** Steps that have started (or ended): they are history and no revision may change them. */
export function startedSteps(state: DispatchState): string[] {
  return Object.entries(state.steps)
    .filter(([, rt]) => rt.status !== 'pending')
    .map(([id]) => id);
}
