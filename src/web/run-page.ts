/**
 * One run's page: the plan graph, the timeline of step attempts, the revisions, the decisions, the model calls and
 * the report. Everything a tool or a model wrote is shown as cut, escaped text; nothing of it becomes a link (a
 * resource link shows its title and URI as text). A step's images are shown from a route of this dashboard.
 */
import { html } from 'hono/html';
import type { Plan } from '../engine/plan/plan-schema.ts';
import { formatCost } from '../engine/model-cost.ts';
import { progressWords } from '../engine/run/call-progress.ts';
import { cut } from '../engine/text.ts';
import type { AttemptRow, RunDetail } from '../store/dashboard-queries.ts';
import {
  layoutGraph,
  layoutTimeline,
  type GraphLayout,
  type TimelineBar,
  type TimelineLayout,
  type TimelineWait,
} from './graph-layout.ts';
import { dataTable, durationText, figure, page, statusLabel, timeText, type Markup } from './page-layout.ts';
import { estimateErrorPercent, percentText } from './estimate-error.ts';
import { rangeText } from './estimates-page.ts';
import { planChanges } from './plan-changes.ts';
import { attemptWaits, type WaitKind } from './timeline-waits.ts';
import { interrupted, stepsSection, type ActingServers } from './run-steps.ts';
import { restartGaps } from './timeline-gaps.ts';

export type { ActingServers } from './run-steps.ts';

/** The most characters of one output, error or report shown: enough to read, never a megabyte. */
export const SHOWN_CHARS = { output: 2_000, report: 20_000, label: 20 } as const;

const FILL: Record<string, string> = {
  succeeded: '#bfe8cb',
  failed: '#f3b7bd',
  running: '#b9d4f7',
  skipped: '#e3e6ea',
  cancelled: '#f3b7bd',
  pending: '#fff',
};
const fill = (state: string) => FILL[state] ?? '#fdf0c2';

/** Refreshes the live part when the server says the run moved (server-sent events), with no reload. */
export const LIVE_SCRIPT = `(()=>{const live=document.getElementById('live');if(!live)return;
const es=new EventSource(location.pathname+'/events');
es.addEventListener('changed',async()=>{const r=await fetch(location.pathname+'/fragment');if(r.ok)live.innerHTML=await r.text();});})();`;

/** The whole run page. */
export function runPage(detail: RunDetail, now: Date, nonce: string, servers: ActingServers = NO_SERVERS): Markup {
  const { run } = detail;
  const body = html`<h1>${cut(run.request, 300)}</h1>
    <p class="muted">
      Run <code>${run.id}</code> · asked by ${run.requester} on ${run.channel} · ${timeText(run.createdAt)} UTC
      ${run.workflow ? html`· workflow ${run.workflow}` : ''}
    </p>
    ${lineage(run)}
    <div id="live">${runFragment(detail, now, servers)}</div>`;
  return page(cut(run.request, 60), body, { nonce, code: LIVE_SCRIPT });
}

/**
 * The part of the page that follows the run; `servers` say whose connection their steps run with: the requester's own
 * account (a workflow fire's requester is its owner), or the workspace's.
 */
export function runFragment(detail: RunDetail, now: Date, servers: ActingServers = NO_SERVERS): Markup {
  const { run, attempts } = detail;
  const states = latestStates(attempts);
  const steps = run.plan?.steps ?? [];
  const graph = layoutGraph(steps.map((s) => ({ id: s.id, dependsOn: s.dependsOn })));
  const timed = attempts.map((a) => ({
    stepId: a.stepId,
    attempt: a.attempt,
    revision: a.revision,
    status: a.status,
    start: a.startedAt.getTime(),
    end: a.endedAt?.getTime() ?? null,
  }));
  const waits = attemptWaits(timed, steps, detail.decisions);
  const gaps = restartGaps(
    attempts.map((a, i) => ({
      ...timed[i]!,
      interrupted: interrupted(a),
      progressAt: a.progressAt?.getTime() ?? null,
    })),
    (detail.resumedAt ?? []).map((r) => r.getTime()),
  );
  const timeline = layoutTimeline(
    timed.map((a, i) => ({ ...a, waits: waits[i] ?? [], gap: gaps[i] ?? null })),
    now.getTime(),
    700,
  );
  return html`<p>Status: ${statusLabel(run.status)} · revision ${run.revision} · ${run.tokensUsed} tokens</p>
    <p id="estimate">${estimateLine(detail)}</p>
    <section>
      <h2>Plan</h2>
      ${
        run.plan
          ? html`<p>${cut(run.plan.summary, 1000)}</p>
              ${graphSvg(graph, states)} ${actingAs(run, servers)}`
          : html`<p class="muted">No plan yet.</p>`
      }
    </section>
    <section>
      <h2>Timeline</h2>
      ${attempts.length ? timelineSvg(timeline, runningProgress(attempts)) : html`<p class="muted">No step has started.</p>`}
    </section>
    <section>
      <h2>Steps</h2>
      ${stepsSection(detail, servers)}
    </section>
    ${questionsSection(detail, now)}
    <section>
      <h2>Revisions</h2>
      ${revisionsTable(detail)}
    </section>
    <section>
      <h2>Decisions</h2>
      ${decisionsTable(detail)}
    </section>
    <section>
      <h2>Model calls</h2>
      ${modelCallsTable(detail)}
    </section>
    <section>
      <h2>Report</h2>
      ${run.report ? html`<pre>${cut(run.report, SHOWN_CHARS.report)}</pre>` : html`<p class="muted">No report yet.</p>`}
      ${feedbackLine(detail)}
    </section>`;
}

/** Whose the run is: the Assistant it ran as, and the run whose delegate step made it (a link). */
function lineage(run: RunDetail['run']): Markup | string {
  if (!run.assistant && !run.parentRunId) return '';
  return html`<p class="lineage">
    ${run.assistant ? html`Ran as Assistant <b>${run.assistant}</b>` : 'Ran as Steward'}
    ${
      run.parentRunId
        ? html`· delegated by run
            <a class="parent" href="/runs/${encodeURIComponent(run.parentRunId)}"><code>${run.parentRunId}</code></a>`
        : ''
    }
  </p>`;
}

const NO_SERVERS: ActingServers = { person: [], workspace: [] };

/**
 * Which steps run with the requester's own account (their server connects per person), and which as the workspace
 * (the connection an approver made), as lines; none: empty.
 */
function actingAs(run: RunDetail['run'], servers: ActingServers): Markup | string {
  const on = (names: readonly string[]) =>
    (run.plan?.steps ?? []).flatMap((s) =>
      s.kind === 'tool' && names.includes(s.tool.slice(0, s.tool.indexOf('.'))) ? [s] : [],
    );
  const list = (steps: ReturnType<typeof on>) =>
    steps.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s.id}</code> (${s.tool})`);
  const own = on(servers.person);
  const shared = on(servers.workspace);
  return html`${own.length > 0 ? html`<p class="as">As <b>${run.requester}</b>, with their own account: ${list(own)}</p>` : ''}${shared.length > 0 ? html`<p class="as">As <b>the workspace</b>, with the connection an approver made: ${list(shared)}</p>` : ''}`;
}

/** The duration estimate the run started with and, once it ended, what it took and the error. */
function estimateLine(detail: RunDetail): Markup {
  const e = detail.estimate;
  if (!e) return html`Estimate: <span class="muted">no estimate</span>`;
  const none = e.noHistory.length ? ` for ${e.noHistory.join(', ')}` : '';
  if (!e.durationMs) return html`Estimate: <span class="muted">no duration estimate (no history${none})</span>`;
  const estimated = html`Estimate: ${rangeText(e.durationMs)}`;
  if (e.actualMs === null) return estimated;
  const error = estimateErrorPercent(e.durationMs, e.actualMs);
  return html`${estimated} · took ${durationText(e.actualMs)} · error <span class="error">${percentText(error)}</span>`;
}

/** Each step's state: its latest attempt's status, else pending. */
function latestStates(attempts: AttemptRow[]): Map<string, string> {
  const latest = new Map<string, AttemptRow>();
  for (const a of attempts) {
    const seen = latest.get(a.stepId);
    if (!seen || a.attempt >= seen.attempt) latest.set(a.stepId, a);
  }
  return new Map([...latest].map(([id, a]) => [id, a.status]));
}

function graphSvg(g: GraphLayout, states: Map<string, string>): Markup {
  const edges = g.edges.map((e) => html`<path d="${e.path}" fill="none" stroke="#8a94a6" />`);
  const nodes = g.nodes.map((n) => {
    const state = states.get(n.id) ?? 'pending';
    return html`<g class="node" data-step="${n.id}" data-state="${state}">
      <title>${n.id}: ${state}</title>
      <rect
        x="${n.x}"
        y="${n.y}"
        width="${n.width}"
        height="${n.height}"
        rx="6"
        fill="${fill(state)}"
        stroke="#5b6475"
      />
      <text x="${n.x + 8}" y="${n.y + 18}">${cut(n.id, SHOWN_CHARS.label)}</text>
      <text x="${n.x + 8}" y="${n.y + 35}" fill="#4b5563">${state}</text>
    </g>`;
  });
  return figure('plan-graph', 'plan graph', g.width, g.height, html`${edges}${nodes}`);
}

const LABEL_WIDTH = 150;
const ROW_HEIGHT = 24;

/** How the time Steward was down is drawn: an empty, dashed stretch. */
const GAP = { fill: '#f9fafb', stroke: '#6b7280', words: 'Steward down' } as const;

/** A bar's outline: a retry's stands out. */
const STROKE = { first: '#5b6475', retry: '#b45309' } as const;

/** How each kind of wait is drawn and named. */
const WAITS: Record<WaitKind, { fill: string; words: string }> = {
  queued: { fill: '#d1d5db', words: 'queued' },
  held: { fill: '#fcd34d', words: 'held' },
  backoff: { fill: '#fdba74', words: 'backing off' },
};

/** What a wait's part says on hover: `fetch held 40.0 s, until Ada resumed`. */
function waitTitle(b: TimelineBar, w: TimelineWait): string {
  const what = `${b.stepId} ${WAITS[w.kind].words} ${durationText(w.ms)}`;
  if (w.kind === 'backoff') return `${what} before retry ${b.attempt - 1}`;
  return w.note ? `${what}, ${w.note}` : what;
}

/** What the servers last said of the calls still running, in words, by `<step>#<attempt>`. */
function runningProgress(attempts: readonly AttemptRow[]): Map<string, string> {
  const said = new Map<string, string>();
  for (const a of attempts) {
    const words = a.endedAt === null && a.progress ? progressWords(a.progress) : '';
    if (words) said.set(`${a.stepId}#${a.attempt}`, words);
  }
  return said;
}

function timelineSvg(t: TimelineLayout, progress: ReadonlyMap<string, string> = new Map()): Markup {
  const legend = timelineLegend(t);
  const axisY = t.rows.length * ROW_HEIGHT + 18;
  const height = axisY + (legend.length ? 26 : 12);
  // Room for a server's progress line after a running bar (at most about 130 characters).
  const width = LABEL_WIDTH + t.width + 90 + (progress.size > 0 ? 700 : 0);
  const labels = t.rows.map(
    (id, i) => html`<text x="4" y="${i * ROW_HEIGHT + 16}">${cut(id, SHOWN_CHARS.label)}</text>`,
  );
  const bars = t.bars.map((b) => {
    const x = LABEL_WIDTH + b.x;
    const y = b.row * ROW_HEIGHT + 4;
    // The server's words, made one short line by progressWords and escaped by html like any tool text.
    const said = b.open ? progress.get(`${b.stepId}#${b.attempt}`) : undefined;
    const what = `${b.stepId} attempt ${b.attempt}${b.attempt > 1 ? ' (retry)' : ''}: ${b.status}, ${durationText(b.durationMs)}${b.open ? ' so far' : ''}${said ? `, ${said}` : ''}`;
    const waits = b.waits.map(
      (w) =>
        html`<rect
          class="wait ${w.kind}"
          x="${LABEL_WIDTH + w.x}"
          y="${y + 5}"
          width="${w.width}"
          height="6"
          fill="${WAITS[w.kind].fill}"
        >
          <title>${waitTitle(b, w)}</title>
        </rect>`,
    );
    const gap =
      b.gap &&
      html`<rect
        class="gap"
        x="${LABEL_WIDTH + b.gap.x}"
        y="${y + 2}"
        width="${b.gap.width}"
        height="12"
        fill="${GAP.fill}"
        stroke="${GAP.stroke}"
        stroke-dasharray="3 3"
      >
        <title>
          ${b.stepId}: Steward was down, nothing known for ${durationText(b.gap.ms)}, until a restart took the run over
        </title>
      </rect>`;
    const after = b.gap ? LABEL_WIDTH + b.gap.x + b.gap.width : x + b.width;
    return html`<g class="bar" data-step="${b.stepId}" data-attempt="${b.attempt}" data-state="${b.status}">
      ${waits}${gap ?? ''}
      <title>${what}</title>
      <rect
        x="${x}"
        y="${y}"
        width="${b.width}"
        height="16"
        rx="3"
        fill="${fill(b.status)}"
        stroke="${b.attempt > 1 ? STROKE.retry : STROKE.first}"
      />
      <text x="${after + 4}" y="${y + 12}" fill="#4b5563"
        >${durationText(b.durationMs)}${b.open ? ' so far' : ''}${b.attempt > 1 ? ` · retry ${b.attempt - 1}` : ''}${said ? html` · <tspan class="progress" fill="#1d4ed8">${said}</tspan>` : ''}</text
      >
    </g>`;
  });
  const keys = legend.map(
    (k, i) =>
      html`<g class="legend" data-legend="${k.name}">
        <rect
          x="${4 + i * 100}"
          y="${axisY + (k.wait ? 12 : 9)}"
          width="12"
          height="${k.wait ? 6 : 12}"
          rx="${k.wait ? 0 : 2}"
          fill="${k.fill}"
          stroke="${k.stroke ?? 'none'}"
        />
        <text x="${20 + i * 100}" y="${axisY + 19}" fill="#4b5563">${k.name}</text>
      </g>`,
  );
  const axis = html`<text x="${LABEL_WIDTH}" y="${axisY}" fill="#6b7280">0</text>
    <text x="${LABEL_WIDTH + t.width}" y="${axisY}" fill="#6b7280" text-anchor="end">${durationText(t.spanMs)}</text>`;
  return figure('timeline', 'step timeline', width, height, html`${labels}${bars}${axis}${keys}`);
}

/** The legend's keys: the kinds of wait, the states of attempts, and retries, as far as the timeline shows them. */
function timelineLegend(t: TimelineLayout): { name: string; fill: string; wait: boolean; stroke?: string }[] {
  const kinds = new Set(t.bars.flatMap((b) => b.waits.map((w) => w.kind)));
  const waits = (Object.keys(WAITS) as WaitKind[])
    .filter((k) => kinds.has(k))
    .map((k) => ({ name: WAITS[k].words, fill: WAITS[k].fill, wait: true }));
  const shown = new Set(t.bars.map((b) => b.status));
  const states = [...new Set(['running', 'succeeded', 'failed', ...shown])]
    .filter((s) => shown.has(s))
    .map((s) => ({ name: s, fill: fill(s), wait: false, stroke: STROKE.first }));
  const retry = t.bars.some((b) => b.attempt > 1)
    ? [{ name: 'retry', fill: '#fff', wait: false, stroke: STROKE.retry }]
    : [];
  const down = t.bars.some((b) => b.gap) ? [{ name: GAP.words, fill: GAP.fill, wait: false, stroke: GAP.stroke }] : [];
  return [...waits, ...states, ...retry, ...down];
}

/** Questions servers asked during the steps (shown only when there were some): the server's words and the end. */
function questionsSection(detail: RunDetail, now: Date): Markup | string {
  const questions = detail.questions ?? [];
  if (questions.length === 0) return '';
  const rows = questions.map(
    (q) =>
      html`<tr>
        <td>${q.stepId}</td>
        <td>${q.server}</td>
        <td><pre>${cut(q.message, SHOWN_CHARS.output)}</pre></td>
        <td>
          ${q.outcome ?? (q.deadlineAt < now ? 'unanswered (its call ended)' : 'open')}${q.answeredBy ? ` (${q.answeredBy.name ?? q.answeredBy.id})` : ''}
        </td>
        <td>
          <pre>${q.reason ?? (q.content === null ? '' : cut(JSON.stringify(q.content), SHOWN_CHARS.output))}</pre>
        </td>
      </tr>`,
  );
  return html`<section>
    <h2>Servers' questions</h2>
    <p class="muted">The servers' words, not Steward's.</p>
    ${dataTable(['Step', 'Server', 'Question', 'Ended', 'Sent back or why'], rows)}
  </section>`;
}

function revisionsTable(detail: RunDetail): Markup {
  if (!detail.revisions.length) return html`<p class="muted">No revisions yet.</p>`;
  let before: Plan | null = null;
  const rows = detail.revisions.map((r) => {
    const changes = planChanges(before, r.plan);
    before = r.plan;
    return html`<tr>
      <td>${r.revision}</td>
      <td>${timeText(r.createdAt)}</td>
      <td>${cut(r.reason, 500)}</td>
      <td>${changes.join('; ')}</td>
    </tr>`;
  });
  return dataTable(['Revision', 'When (UTC)', 'Why', 'What changed'], rows);
}

/** "Feedback: 👍 by Ada, 👎 by Bob": each person's last rating of the report; nothing when none was given. */
function feedbackLine(detail: RunDetail): Markup | string {
  const given = detail.feedback ?? [];
  if (given.length === 0) return '';
  const parts = given.map((f) => `${f.rating === 'good' ? '👍' : '👎'} by ${cut(f.by, 80)}`);
  return html`<p class="feedback">Feedback: ${parts.join(', ')}</p>`;
}

function decisionsTable(detail: RunDetail): Markup {
  if (!detail.decisions.length) return html`<p class="muted">No decisions yet.</p>`;
  const rows = detail.decisions.map(
    (d) =>
      html`<tr>
        <td>${timeText(d.createdAt)}</td>
        <td>${d.actor.name ?? d.actor.id} (${d.actor.channel})</td>
        <td>${d.action}</td>
        <td>${d.revision}</td>
        <td>${d.accepted ? 'accepted' : 'refused'}</td>
        <td>${cut(d.note ?? '', 500)}</td>
      </tr>`,
  );
  return dataTable(['When (UTC)', 'Who', 'What', 'Revision', 'Outcome', 'Why'], rows);
}

function modelCallsTable(detail: RunDetail): Markup {
  if (!detail.modelCalls.length) return html`<p class="muted">No model calls.</p>`;
  const rows = detail.modelCalls.map(
    (c) =>
      html`<tr>
        <td>${timeText(c.createdAt)}</td>
        <td>${c.role}</td>
        <td>${c.model}</td>
        <td>${c.inputTokens}${c.cachedInputTokens ? ` (${c.cachedInputTokens} cached)` : ''}</td>
        <td>${c.outputTokens}</td>
        <td>${formatCost(c.costMicroUsd)}</td>
      </tr>`,
  );
  const total = detail.modelCalls.reduce((sum, c) => sum + c.inputTokens + c.outputTokens, 0);
  const priced = detail.modelCalls.every((c) => c.costMicroUsd !== null);
  const cost = priced ? detail.modelCalls.reduce((sum, c) => sum + (c.costMicroUsd ?? 0), 0) : null;
  const foot = html`<tr>
    <th colspan="3">Total</th>
    <th colspan="2">${total} tokens</th>
    <th>${formatCost(cost)}</th>
  </tr>`;
  return dataTable(['When (UTC)', 'Role', 'Model', 'Input tokens', 'Output tokens', 'Cost'], rows, undefined, foot);
}
