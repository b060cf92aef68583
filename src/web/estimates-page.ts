/**
 * The estimates page: ended runs with the duration range they were estimated at, what they took and the error, and
 * a small chart of the error over time (one dot per run) with the median of the last 20 and of all shown. Only runs
 * that ran undisturbed are scored (in the medians and the chart); the others are listed with why they are not (a
 * pause, a stop, a restart, a wait for a person or a connection, or under a second), since what they took measures
 * the disturbance more than the estimate.
 */
import { html } from 'hono/html';
import { cut } from '../engine/text.ts';
import type { EstimatedRun } from '../store/dashboard-queries.ts';
import { estimateErrorPercent, median, percentText } from './estimate-error.ts';
import { dataTable, durationText, figure, page, timeText, type Markup } from './page-layout.ts';

/** How many of the newest runs the page shows, and how many the recent median is over. */
export const ESTIMATES_SHOWN = 200;
export const RECENT_MEDIAN_OF = 20;

/** A range of milliseconds as text: `1.0 s–2.5 s`, or one value when both ends read the same. */
export function rangeText(range: { low: number; high: number }): string {
  const low = durationText(range.low);
  const high = durationText(range.high);
  return low === high ? low : `${low}–${high}`;
}

/** The page for these runs (newest first). */
export function estimatesPage(runs: EstimatedRun[]): Markup {
  const rows = runs.map((r) => ({ ...r, error: estimateErrorPercent(r.durationMs, r.actualMs) }));
  const scored = rows.filter((r) => r.disturbed === null);
  const errors = scored.map((r) => r.error);
  const recent = median(errors.slice(0, RECENT_MEDIAN_OF));
  const all = median(errors);
  const lines = rows.map(
    (r) =>
      html`<tr data-run="${r.id}">
        <td>${timeText(r.createdAt)}</td>
        <td><a href="/runs/${encodeURIComponent(r.id)}">${r.id.slice(0, 8)}</a></td>
        <td>${cut(r.request, 160)}</td>
        <td>${rangeText(r.durationMs)}</td>
        <td>${durationText(r.actualMs)}</td>
        <td class="error">${percentText(r.error)}</td>
        <td class="scored">${r.disturbed === null ? 'yes' : `no: ${r.disturbed}`}</td>
      </tr>`,
  );
  const body = html`<h1>Estimates against actual durations</h1>
    <p class="muted">
      The newest ${ESTIMATES_SHOWN} ended runs you may see that had a duration estimate. The error is 0 when the run
      took a time inside the estimated range, else the distance to the nearest end as a % of what it took. Only runs
      that ran undisturbed are scored: a run that was paused, held, changed, stopped, restarted, waited for an account
      or took under a second is listed with why, and left out of the medians and the chart.
    </p>
    ${
      scored.length
        ? html`<p id="medians">
              Median error: ${percentText(recent ?? 0)} over the last ${Math.min(RECENT_MEDIAN_OF, scored.length)}
              undisturbed runs, ${percentText(all ?? 0)} over all ${scored.length} shown.
              ${rows.length > scored.length ? `${rows.length - scored.length} more shown, not scored.` : ''}
            </p>
            ${errorChart(scored, recent ?? 0, all ?? 0)}`
        : rows.length
          ? html`<p id="medians">No run shown ran undisturbed: none is scored.</p>`
          : ''
    }
    ${dataTable(
      ['Started (UTC)', 'Run', 'Request', 'Estimated', 'Took', 'Error', 'Scored'],
      lines,
      'No ended run with an estimate yet.',
    )}`;
  return page('Estimates', body);
}

const WIDTH = 700;
const HEIGHT = 220;
const PAD = { left: 50, right: 20, top: 14, bottom: 26 };

/** Error % (up) over the runs' start times (right), one dot each, and dashed lines at the two medians. */
function errorChart(rows: (EstimatedRun & { error: number })[], recent: number, all: number): Markup {
  const times = rows.map((r) => r.createdAt.getTime());
  const first = Math.min(...times);
  const span = Math.max(...times) - first;
  const top = Math.max(10, ...rows.map((r) => r.error));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (t: number) => PAD.left + (span > 0 ? ((t - first) / span) * plotW : plotW / 2);
  const y = (e: number) => PAD.top + plotH - (e / top) * plotH;
  const round = (n: number) => Math.round(n * 10) / 10;
  const dots = rows.map(
    (r) =>
      html`<circle class="dot" cx="${round(x(r.createdAt.getTime()))}" cy="${round(y(r.error))}" r="4" fill="#3b6fd1">
        <title>${timeText(r.createdAt)}: ${percentText(r.error)}</title>
      </circle>`,
  );
  // The two labels sit at opposite ends, so equal medians do not print over each other.
  const medianLine = (value: number, colour: string, label: string, end: boolean) =>
    html`<line
        x1="${PAD.left}"
        x2="${PAD.left + plotW}"
        y1="${round(y(value))}"
        y2="${round(y(value))}"
        stroke="${colour}"
        stroke-dasharray="4 3"
      />
      <text
        x="${end ? PAD.left + plotW : PAD.left + 4}"
        y="${round(y(value)) - 3}"
        fill="${colour}"
        text-anchor="${end ? 'end' : 'start'}"
        >${label}</text
      >`;
  return figure(
    'error-chart',
    'estimate error over time',
    WIDTH,
    HEIGHT,
    html`<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + plotH}" stroke="#8a94a6" />
      <line
        x1="${PAD.left}"
        x2="${PAD.left + plotW}"
        y1="${PAD.top + plotH}"
        y2="${PAD.top + plotH}"
        stroke="#8a94a6"
      />
      <text x="${PAD.left - 6}" y="${PAD.top + 10}" text-anchor="end" fill="#6b7280">${percentText(top)}</text>
      <text x="${PAD.left - 6}" y="${PAD.top + plotH}" text-anchor="end" fill="#6b7280">0 %</text>
      <text x="${PAD.left}" y="${HEIGHT - 6}" fill="#6b7280">${timeText(new Date(first))}</text>
      <text x="${PAD.left + plotW}" y="${HEIGHT - 6}" text-anchor="end" fill="#6b7280">
        ${timeText(new Date(first + span))}
      </text>
      ${medianLine(recent, '#b45309', `median, last ${Math.min(RECENT_MEDIAN_OF, rows.length)}: ${percentText(recent)}`, false)}
      ${medianLine(all, '#047857', `median, all: ${percentText(all)}`, true)} ${dots}`,
  );
}
