/**
 * The images a report writer is shown: a run's image files of types both providers read, within a count and a size
 * (an image costs hundreds to thousands of tokens, and Anthropic refuses one over 5 MB of base64). What is left out
 * is said in one sentence; every image is described in the step results in words either way.
 */
import type { LlmImage } from '../ports.ts';
import { sizeText } from '../text.ts';
import { fileText, type ProducedFile } from './produced-files.ts';

/** At most this many images, this many bytes together, and this many bytes each, reach the model. */
export const REPORT_IMAGE_LIMITS = { count: 4, totalBytes: 4 * 1024 * 1024, eachBytes: 3 * 1024 * 1024 } as const;

const READABLE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The images to send, each labelled, and a sentence on those left out (undefined when none were). */
export function reportImages(
  files: readonly ProducedFile[],
  limits: { count: number; totalBytes: number; eachBytes: number } = REPORT_IMAGE_LIMITS,
): { images: LlmImage[]; leftOut?: string } {
  const images: LlmImage[] = [];
  const left: string[] = [];
  let total = 0;
  for (const f of files) {
    if (!f.mimeType.startsWith('image/')) continue;
    const why = !READABLE.has(f.mimeType)
      ? 'a type models do not read'
      : f.bytes > limits.eachBytes
        ? `over ${sizeText(limits.eachBytes)}`
        : images.length >= limits.count
          ? `past the first ${limits.count} images`
          : total + f.bytes > limits.totalBytes
            ? `past ${sizeText(limits.totalBytes)} of images`
            : undefined;
    if (why) {
      left.push(`${fileText(f)} from step ${f.stepId} (${why})`);
      continue;
    }
    total += f.bytes;
    images.push({
      mimeType: f.mimeType,
      data: f.data,
      label: `Image ${images.length + 1}, from step ${f.stepId}: ${fileText(f)}`,
    });
  }
  if (left.length === 0) return { images };
  return { images, leftOut: `Images not shown to you (described in the step results only): ${left.join('; ')}.` };
}
