/**
 * The report at the end of a run: one model call with no tools, given the request and every step's result.
 * Outputs are cut to a budget for the prompt (the full output stays in the database). If the model fails,
 * code writes a plain report that says why, so the person always learns what ran, failed, was skipped or never ran.
 */
import type { LlmClient, LlmResponse } from '../ports.ts';
import type { DispatchState } from '../run/dispatch-state.ts';
import { producedFiles } from '../run/produced-files.ts';
import { reportImages } from '../run/report-images.ts';
import { plainReport, stepSummaries } from '../run/step-summaries.ts';
import { callFailure } from './planner.ts';

/** Writes the report with the synthesizer model; falls back to a plain report written by code. */
export async function writeReport(
  llm: LlmClient,
  /** With `onText`, the synthesizer's answer is streamed to it as it is written (the plain report never is). */
  input: { request: string; state: DispatchState; outcome: string; onText?: (delta: string) => void },
  onResponse?: (r: LlmResponse) => Promise<void>,
): Promise<string> {
  const lines = stepSummaries(input.state);
  // Images go as images (the router drops them for a model that cannot see them; the lines describe them in words).
  const { images, leftOut } = reportImages(producedFiles(input.state));
  const note = leftOut ? `\n\n${leftOut}` : '';
  try {
    const response = await llm.complete({
      role: 'synthesizer',
      system: `[steward:synthesizer]
You write the final report of a finished run for the person who asked. You cannot call tools.
Answer the request from the step results. Be honest: say plainly which steps failed, were skipped,
were cancelled or never ran, and do not claim results that are not in the step results.
Images the steps produced may follow the step results, each after a line naming its step.`,
      messages: [
        {
          role: 'user',
          content: `Request:\n${input.request}\n\nRun outcome: ${input.outcome}\n\nStep results:\n${lines.join('\n')}${note}`,
          ...(images.length > 0 && { images }),
        },
      ],
      ...(input.onText && { onText: input.onText }),
    });
    await onResponse?.(response);
    if (response.text.trim()) return response.text.trim();
    return plainReport(input.outcome, lines, 'its answer was empty');
  } catch (err) {
    // The plain report still tells the truth; it says why, so a person knows whether to fix the model or a budget.
    return plainReport(input.outcome, lines, callFailure(err));
  }
}

/** The words an Assistant's report opens with, in every channel and in the stored text alike ('' for no Assistant). */
export function reportHeading(assistant: string | null | undefined): string {
  return assistant ? `Report of the Assistant "${assistant}":\n` : '';
}

/**
 * Streams `heading` just before the model's first words (blank space before them dropped, as the stored text drops
 * it), so the words streamed are the words stored and the channel never has to print the report a second time.
 */
export function headedStream(heading: string, onText: (delta: string) => void): (delta: string) => void {
  let started = false;
  return (delta) => {
    if (started) return onText(delta);
    const words = delta.trimStart();
    if (!words) return;
    started = true;
    onText(heading + words);
  };
}
