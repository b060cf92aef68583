/**
 * The report at the end of a run: one model call with no tools, given the request and every step's result.
 * Outputs are cut to a budget for the prompt (the full output stays in the database). If the model fails,
 * code writes a plain report, so the person always learns what ran, failed, was skipped or never ran.
 */
import type { DispatchState } from '../run/dispatch.ts';
import type { LlmClient, LlmResponse } from '../ports.ts';
import type { Json, StepStatus } from '../types.ts';

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

/** Writes the report with the synthesizer model; falls back to a plain report written by code. */
export async function writeReport(
  llm: LlmClient,
  input: { request: string; state: DispatchState; outcome: string },
  onResponse?: (r: LlmResponse) => Promise<void>,
): Promise<string> {
  const lines = stepSummaries(input.state);
  try {
    const response = await llm.complete({
      role: 'synthesizer',
      system: `[steward:synthesizer]
You write the final report of a finished run for the person who asked. You cannot call tools.
Answer the request from the step results. Be honest: say plainly which steps failed, were skipped,
were cancelled or never ran, and do not claim results that are not in the step results.`,
      messages: [
        {
          role: 'user',
          content: `Request:\n${input.request}\n\nRun outcome: ${input.outcome}\n\nStep results:\n${lines.join('\n')}`,
        },
      ],
    });
    await onResponse?.(response);
    if (response.text.trim()) return response.text.trim();
  } catch {
    // The plain report below still tells the truth; the failure itself is logged by the caller's client.
  }
  return plainReport(input.outcome, lines);
}

/** A report written by code alone. */
export function plainReport(outcome: string, lines: string[]): string {
  return `Run ${outcome}. (The report writer was unavailable; here are the step results.)\n${lines.join('\n')}`;
}

/** Text of a step output: MCP text blocks joined, else compact JSON. */
export function outputText(output: Json | undefined): string {
  if (output && typeof output === 'object' && !Array.isArray(output)) {
    if (typeof output.text === 'string') return output.text;
    const content = output.content;
    if (Array.isArray(content)) {
      // Servers that send structuredContent also send it as text (the spec asks them to): the text is enough.
      const texts = content.flatMap((c) =>
        c && typeof c === 'object' && !Array.isArray(c) && typeof c.text === 'string' ? [c.text] : [],
      );
      if (texts.length > 0) return texts.join('\n');
    }
  }
  return JSON.stringify(output ?? null);
}

/** Cuts text to `max` characters with a note saying how much was left out. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters not shown]`;
}
