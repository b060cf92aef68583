/**
 * The run page's story of each step: its tool, its arguments as the plan wrote them (references shown as references)
 * and as resolved for each attempt, whom it ran as, and each attempt with the reason it ended. Arguments are shown
 * like outputs: cut, escaped text; a value under a key that names a secret (`password`, `apiKey`, `access_token`)
 * is shown as `•••`, since a person may have typed one into a request.
 */
import { html } from 'hono/html';
import type { Step } from '../engine/plan/plan-schema.ts';
import { sensitiveName } from '../engine/run/question-form.ts';
import { cut, outputText } from '../engine/text.ts';
import type { Json } from '../engine/types.ts';
import type { AttemptRow, RunDetail } from '../store/dashboard-queries.ts';
import { attemptImages } from './attempt-media.ts';
import { dataTable, durationText, type Markup } from './page-layout.ts';

/** The most characters of one step's arguments shown. */
export const ARGS_CHARS = 1_000;
const OUTPUT_CHARS = 2_000;

/** The servers whose steps run with someone's connection made in a browser: the requester's own, or the workspace's. */
export interface ActingServers {
  person: readonly string[];
  workspace: readonly string[];
}

/** What a secret's value is shown as. */
export const HIDDEN = '•••';
// A reference is drawn as ⟨steps.a.output…⟩; the private-use mark never needs escaping in JSON.
const REF = '\uE000';

/** Arguments as one line of JSON: references as `⟨path⟩`, secrets hidden, cut to `ARGS_CHARS`. */
export function argsText(args: Json | undefined): string {
  if (args === undefined) return '';
  const text = JSON.stringify(args, (key, value: unknown) => {
    if (key && typeof value === 'string' && sensitiveName(key)) return HIDDEN;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const ref = (value as Record<string, unknown>)['$ref'];
      if (typeof ref === 'string' && Object.keys(value).length === 1) return `${REF}${ref}${REF}`;
    }
    return value;
  });
  const refs = new RegExp(`"${REF}((?:[^"\\\\]|\\\\.)*)${REF}"`, 'g');
  return cut(
    (text ?? '').replace(refs, (_, path: string) => `⟨${JSON.parse(`"${path}"`) as string}⟩`),
    ARGS_CHARS,
  );
}

/** Why an attempt ended, in words: `succeeded`, `failed: timeout: …`, `cancelled by Stop`, `interrupted by a restart`. */
export function endedText(a: AttemptRow): string {
  const error = errorOf(a.error);
  if (a.endedAt === null) return 'running';
  if (a.status === 'succeeded') return 'succeeded';
  if (a.status === 'cancelled') return 'cancelled by Stop';
  if (a.status === 'skipped') return error ? `skipped: ${error.message}` : 'skipped';
  if (interrupted(a)) return 'interrupted by a restart (Steward stopped while it ran)';
  if (a.status === 'failed') return error ? `failed: ${error.code}: ${error.message}` : 'failed';
  return a.status;
}

/** An attempt Steward stopped in the middle of (a restart): how long it ran is not known. */
export function interrupted(a: Pick<AttemptRow, 'status' | 'error'>): boolean {
  return a.status === 'failed' && errorOf(a.error)?.code === 'interrupted';
}

function errorOf(error: unknown): { code: string; message: string } | null {
  if (!error || typeof error !== 'object') return null;
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : 'error';
  return { code, message: typeof e.message === 'string' ? cut(e.message, 500) : '' };
}

/** Whom a step ran as: the requester (their own account), the workspace, the Assistant, or Steward. */
export function ranAs(step: Step | undefined, run: RunDetail['run'], servers: ActingServers): string {
  const server = step?.kind === 'tool' ? step.tool.slice(0, Math.max(0, step.tool.indexOf('.'))) : '';
  const assistant = run.assistant ? `Assistant ${run.assistant}` : '';
  if (server && servers.person.includes(server))
    return `${run.requester} (their own account)${assistant ? `, for ${assistant}` : ''}`;
  if (server && servers.workspace.includes(server))
    return `the workspace (an approver's connection)${assistant ? `, for ${assistant}` : ''}`;
  return assistant || 'Steward';
}

function toolOf(step: Step | undefined, tries: readonly AttemptRow[]): string {
  // The quick path's calls are stored under revisions below zero (`quick-loop.ts`), with no plan step.
  if (!step) return tries.some((a) => a.revision < 0) ? 'a call of the quick path' : 'a step of an earlier revision';
  if (step.kind === 'tool') return step.tool;
  return step.kind === 'llm' ? 'a model call' : 'a condition';
}

function plannedArgs(step: Step | undefined): string {
  if (!step) return '';
  if (step.kind === 'condition') return cut(step.expression, ARGS_CHARS);
  return argsText(step.args);
}

/** Every step of the plan (and any step of an earlier revision that ran), in plan order, with its attempts. */
export function stepsSection(detail: RunDetail, servers: ActingServers): Markup {
  const { run, attempts } = detail;
  const steps = run.plan?.steps ?? [];
  const ids = [...new Set([...steps.map((s) => s.id), ...attempts.map((a) => a.stepId)])];
  if (ids.length === 0) return html`<p class="muted">No steps yet.</p>`;
  return html`${ids.map((id) => {
    const step = steps.find((s) => s.id === id);
    const tries = attempts.filter((a) => a.stepId === id);
    const children = (detail.children ?? []).filter((c) => c.stepId === id);
    return html`<div class="step" data-step="${id}">
      <h3><code>${cut(id, 40)}</code> · <span class="tool">${toolOf(step, tries)}</span></h3>
      <p class="as">Ran as <b>${ranAs(step, run, servers)}</b></p>
      ${step ? html`<p>Arguments as planned: <code class="args planned">${plannedArgs(step)}</code></p>` : ''}
      ${children.map(
        (c) =>
          html`<p class="child">
            Delegated to ${c.assistant ? html`Assistant <b>${c.assistant}</b>` : 'an Assistant'}: run
            <a href="/runs/${encodeURIComponent(c.id)}"><code>${c.id}</code></a> (${c.status})
          </p>`,
      )}
      ${tries.length ? attemptsTable(run.id, tries) : html`<p class="muted">Not started.</p>`}
    </div>`;
  })}`;
}

function attemptsTable(runId: string, attempts: AttemptRow[]): Markup {
  const rows = attempts.map((a) => {
    // A skip is stored with no call: no arguments, no time.
    const called = a.status !== 'skipped';
    const output = a.output === null ? '' : cut(outputText(a.output), OUTPUT_CHARS);
    return html`<tr class="attempt" data-attempt="${a.attempt}">
      <td>${a.attempt}</td>
      <td class="ended">${endedText(a)}</td>
      <td>${!called || a.durationMs === null || interrupted(a) ? '' : durationText(a.durationMs)}</td>
      <td><code class="args resolved">${called && a.args !== null ? argsText(a.args) : ''}</code></td>
      <td>${output ? html`<pre>${output}</pre>` : ''} ${attemptImages(runId, a)}</td>
    </tr>`;
  });
  return dataTable(['Attempt', 'Ended', 'Took', 'Arguments as resolved', 'Output'], rows);
}
