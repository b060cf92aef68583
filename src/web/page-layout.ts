/**
 * The dashboard's page shell: one small inline style sheet and no script of its own (the run page adds one, with the
 * response's CSP nonce). Every value goes through hono's `html` template, which escapes it.
 */
import { html, raw } from 'hono/html';

/** A piece of markup built with `html` (a promise only when a part is one). */
export type Markup = ReturnType<typeof html>;

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:10px 20px}header a{color:#fff;text-decoration:none;font-weight:600;margin-right:16px}
main{padding:16px 20px;max-width:1200px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #e3e6ea;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef0f3;font-weight:600}
.status{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;background:#e3e6ea}
.s-completed,.s-succeeded{background:#d3f2dc}.s-failed,.s-cancelled,.s-stopped{background:#f8d7da}
.s-running,.s-planning,.s-stopping{background:#d6e6fb}.s-awaiting_review,.s-paused,.s-pending{background:#fdf0c2}
pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #e3e6ea;padding:8px;max-height:24em;overflow:auto}
section{margin:18px 0}h2{font-size:16px;margin:0 0 8px}
code.args{white-space:pre-wrap;overflow-wrap:anywhere}.step pre{overflow-wrap:anywhere}.step h3{font-size:14px;margin:14px 0 4px}
form.filters{display:flex;gap:8px;flex-wrap:wrap;margin-bottom:12px}
.muted{color:#6b7280}svg{background:#fff;border:1px solid #e3e6ea;max-width:100%;height:auto}
svg text{font:12px system-ui,sans-serif}
`;

/** A whole page with the shared header; `script.code` is the app's own constant text, never data. */
export function page(title: string, body: Markup, script?: { nonce: string; code: string }): Markup {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Steward</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <header><a href="/runs">Steward runs</a><a href="/estimates">Estimates</a><a href="/spend">Spend</a></header>
        <main>${body}</main>
        ${
          script
            ? html`<script nonce="${script.nonce}">
                ${raw(script.code)};
              </script>`
            : ''
        }
      </body>
    </html>`;
}

/** An SVG drawing of the page, `width` by `height`, named for screen readers. */
export function figure(id: string, label: string, width: number, height: number, body: Markup): Markup {
  return html`<svg
    id="${id}"
    role="img"
    aria-label="${label}"
    viewBox="0 0 ${width} ${height}"
    width="${width}"
    height="${height}"
  >
    ${body}
  </svg>`;
}

/**
 * A table: its column headings, its rows, a line shown across all columns when there are no rows (`empty`), and an
 * optional footer row. Every table of the dashboard is drawn by this one function.
 */
export function dataTable(headings: readonly string[], rows: readonly Markup[], empty?: string, foot?: Markup): Markup {
  const body = rows.length
    ? rows
    : empty
      ? html`<tr>
          <td colspan="${headings.length}" class="muted">${empty}</td>
        </tr>`
      : '';
  return html`<table>
    <thead>
      <tr>
        ${headings.map((h) => html`<th>${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${body}
    </tbody>
    ${
      foot
        ? html`<tfoot>
            ${foot}
          </tfoot>`
        : ''
    }
  </table>`;
}

/** A status as a coloured label. */
export function statusLabel(status: string): Markup {
  return html`<span class="status s-${status.replace(/[^a-z_]/g, '')}">${status.replace(/_/g, ' ')}</span>`;
}

/** A time as UTC text, to the second. */
export function timeText(at: Date): string {
  return at.toISOString().replace('T', ' ').slice(0, 19);
}

/** A duration in words: `850 ms`, `12.3 s`, `4 min 5 s`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}
