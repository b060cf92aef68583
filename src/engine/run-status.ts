/** A status answer built from the database alone: no model call. */
import type { Plan } from './plan-schema.ts';
import type { StoredStepAttempt } from './ports.ts';
import { cut, outputText } from './report.ts';
import type { RunStatus } from './types.ts';

/** Which step the run is on, what each finished step returned in short, and what is left. */
export function describeRun(status: RunStatus, plan: Plan | null, attempts: readonly StoredStepAttempt[]): string {
  if (!plan) return `This request is ${status.replace('_', ' ')}; there is no plan yet.`;
  const latest = new Map<string, StoredStepAttempt>();
  for (const a of attempts) if ((latest.get(a.stepId)?.attempt ?? -1) <= a.attempt) latest.set(a.stepId, a);
  const ended = plan.steps.filter((s) => ['succeeded', 'failed', 'skipped', 'cancelled'].includes(latest.get(s.id)?.status ?? ''));
  const running = plan.steps.filter((s) => latest.get(s.id)?.status === 'running');
  const left = plan.steps.filter((s) => !latest.has(s.id));
  const lines = [`Run ${status.replace('_', ' ')}: ${ended.length}/${plan.steps.length} steps finished.`];
  for (const s of ended) {
    const a = latest.get(s.id) as StoredStepAttempt;
    const what = a.status === 'succeeded' ? cut(outputText(a.output ?? undefined), 160) : (a.error?.message ?? a.status);
    lines.push(`• ${s.id} ${a.status}: ${what}`);
  }
  if (running.length > 0) lines.push(`Running now: ${running.map((s) => s.id).join(', ')}`);
  lines.push(left.length > 0 ? `Left: ${left.map((s) => s.id).join(', ')}` : 'Nothing left to start.');
  return lines.join('\n');
}
