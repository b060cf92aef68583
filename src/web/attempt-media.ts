/**
 * The images of a step's output on the run page: each an `<img>` of a route that serves its bytes with their own
 * content type (the page's CSP allows images from 'self' only, so no data: URL and nothing from elsewhere). Only
 * raster types are served: an SVG could carry script, and a browser shown one alone would run it.
 */
import { html } from 'hono/html';
import { outputFiles, type ProducedFile } from '../engine/run/produced-files.ts';
import { sizeText } from '../engine/text.ts';
import type { AttemptRow, RunDetail } from '../store/dashboard-queries.ts';
import type { Markup } from './page-layout.ts';

/** The image types the dashboard serves. */
export const SHOWN_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** At most this many images of one attempt are shown (the rest are named in its output text). */
const SHOWN_PER_ATTEMPT = 8;

/** The route an attempt's `n`th file is served at. */
export function imagePath(runId: string, stepId: string, attempt: number, n: number): string {
  return `/runs/${encodeURIComponent(runId)}/attempts/${encodeURIComponent(stepId)}/${attempt}/files/${n}`;
}

/** The attempt's images as `<img>` elements ('' when it has none). */
export function attemptImages(runId: string, a: AttemptRow): Markup | string {
  const shown = outputFiles(a.stepId, a.output ?? undefined)
    .map((f, n) => ({ f, n }))
    .filter(({ f }) => SHOWN_IMAGE_TYPES.has(f.mimeType))
    .slice(0, SHOWN_PER_ATTEMPT);
  if (shown.length === 0) return '';
  return html`<div class="images">
    ${shown.map(
      ({ f, n }) =>
        html`<img
          src="${imagePath(runId, a.stepId, a.attempt, n)}"
          alt="${f.name} (${f.mimeType}, ${sizeText(f.bytes)}) from step ${a.stepId}"
          loading="lazy"
          style="max-width: 320px; max-height: 240px; margin: 4px 4px 0 0; border: 1px solid #d1d5db"
        />`,
    )}
  </div>`;
}

/** The `n`th file of an attempt of the run, when it is an image the dashboard serves; null otherwise. */
export function attemptImage(detail: RunDetail, stepId: string, attempt: number, n: number): ProducedFile | null {
  const a = detail.attempts.find((x) => x.stepId === stepId && x.attempt === attempt);
  const file = a ? outputFiles(a.stepId, a.output ?? undefined)[n] : undefined;
  return file && SHOWN_IMAGE_TYPES.has(file.mimeType) ? file : null;
}
