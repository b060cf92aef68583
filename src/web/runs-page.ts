/** The run list: filters, newest first, a page at a time. */
import { html } from 'hono/html';
import type { RunFilters, RunSummary } from '../store/dashboard-queries.ts';
import { cut } from '../engine/text.ts';
import { RUN_STATUSES } from '../engine/types.ts';
import { dataTable, page, statusLabel, timeText, type Markup } from './page-layout.ts';

/** The list page for these filters; `more` says whether a next page exists. */
export function runsPage(who: string, filters: RunFilters, runs: RunSummary[], more: boolean): Markup {
  const link = (p: number) => `/runs?${query(filters, p)}`;
  const rows = runs.map(
    (r) =>
      html`<tr>
        <td><a href="/runs/${encodeURIComponent(r.id)}">${r.id.slice(0, 8)}</a></td>
        <td>${statusLabel(r.status)}</td>
        <td>${cut(r.request, 160)}</td>
        <td>${r.requester}</td>
        <td>${r.channel}</td>
        <td>${r.workflow ?? ''}</td>
        <td>${timeText(r.createdAt)}</td>
      </tr>`,
  );
  const body = html`<p class="muted">Signed in as ${who}.</p>
    <form class="filters" method="post" action="/signout">
      <button type="submit">Sign out</button>
      <button type="submit" name="everywhere" value="yes">Sign out everywhere</button>
    </form>
    <form class="filters" method="get" action="/runs">
      <select name="status" aria-label="status">
        <option value="">any status</option>
        ${RUN_STATUSES.map((s) => html`<option value="${s}" ${filters.status === s ? 'selected' : ''}>${s}</option>`)}
      </select>
      <input name="person" placeholder="person" value="${filters.person ?? ''}" />
      <input name="channel" placeholder="channel" value="${filters.channel ?? ''}" />
      <input name="workflow" placeholder="workflow" value="${filters.workflow ?? ''}" />
      <button type="submit">Filter</button>
    </form>
    ${dataTable(['Run', 'Status', 'Request', 'Person', 'Channel', 'Workflow', 'Started (UTC)'], rows, 'No runs match.')}
    <p>
      ${filters.page > 1 ? html`<a rel="prev" href="${link(filters.page - 1)}">← newer</a>` : ''}
      <span class="muted">page ${filters.page}</span>
      ${more ? html`<a rel="next" href="${link(filters.page + 1)}">older →</a>` : ''}
    </p>`;
  return page('Runs', body);
}

function query(filters: RunFilters, pageNumber: number): string {
  const params = new URLSearchParams();
  for (const key of ['status', 'person', 'channel', 'workflow'] as const) {
    const value = filters[key];
    if (value) params.set(key, value);
  }
  params.set('page', String(pageNumber));
  return params.toString();
}
