/**
 * The spend page: what models cost today and this month, for the workspace, by channel, by person and by model, with
 * each cap the operator set and what is left of it. The figures are those the caps judge (calls in flight included);
 * who sees which lines is decided by the query (`spend-view.ts`), as `/steward spend` decides it.
 */
import { html } from 'hono/html';
import { formatUsd, NO_SPEND_CAPS, type SpendCaps, type SpendLine, type SpendScope } from '../engine/spend.ts';
import type { DashboardSpend } from '../store/spend-view.ts';
import { dataTable, page, type Markup } from './page-layout.ts';

/** How many lines each list shows (largest first). */
export const SPEND_LINES_SHOWN = 50;

/** What is left of a cap: `$0.40 of $0.50`, or `no cap`. */
function left(spent: number, cap: number | null): string {
  return cap === null ? 'no cap' : `${formatUsd(Math.max(0, cap - spent))} of ${formatUsd(cap)}`;
}

/** One row: what it is, today's spend and what is left of the daily cap, the month's and what is left of that. */
function row(scope: SpendScope | 'model', label: string, line: SpendLine, caps: SpendCaps): Markup {
  const cap = scope === 'model' ? null : caps[scope];
  return html`<tr data-key="${line.key}">
    <td>${label}</td>
    <td class="day">${formatUsd(line.dayMicroUsd)}</td>
    ${cap ? html`<td class="day-left">${left(line.dayMicroUsd, cap.day)}</td>` : ''}
    <td class="month">${formatUsd(line.monthMicroUsd)}</td>
    ${cap ? html`<td class="month-left">${left(line.monthMicroUsd, cap.month)}</td>` : ''}
  </tr>`;
}

const CAPPED = ['Today', 'Left today', 'This month', 'Left this month'];

/** The page for what the viewer may see, with the operator's caps (none: every cap reads "no cap"). */
export function spendPage(spend: DashboardSpend, caps: SpendCaps = NO_SPEND_CAPS): Markup {
  const { day, month } = spend.windows;
  const workspace: SpendLine = { key: 'workspace', ...spend.workspace };
  const person = (l: SpendLine) => (l.name ? `${l.name} (${l.key})` : l.key);
  const body = html`<h1>Spend on models</h1>
    <p class="muted">
      US dollars, today (${day}, UTC) and this month (${month.slice(0, 7)}), as the spend caps count it: calls in flight
      included. Caps are set by the operator; an approver may let one run go past them on its card.
      ${
        spend.narrowed
          ? 'You see the workspace, your own spend and the channels your runs spent in; an approver sees every channel and person.'
          : 'As an approver you see every channel and person.'
      }
    </p>
    <section id="workspace">
      <h2>Workspace</h2>
      ${dataTable(['', ...CAPPED], [row('workspace', 'Workspace', workspace, caps)])}
    </section>
    <section id="by-channel">
      <h2>By channel</h2>
      ${dataTable(
        ['Channel', ...CAPPED],
        spend.byChannel.map((l) => row('channel', l.key, l, caps)),
        'No spend in a channel you may see yet.',
      )}
    </section>
    <section id="by-person">
      <h2>By person</h2>
      ${dataTable(
        ['Person', ...CAPPED],
        spend.byPerson.map((l) => row('person', person(l), l, caps)),
        'No spend by a person you may see yet.',
      )}
    </section>
    <section id="by-model">
      <h2>By model</h2>
      ${dataTable(
        ['Model', 'Today', 'This month'],
        spend.byModel.map((l) => row('model', l.key, l, caps)),
        'No settled model call yet.',
      )}
    </section>`;
  return page('Spend', body);
}
