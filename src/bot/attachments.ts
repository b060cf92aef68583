/**
 * Which of a run's files a platform takes with its report, and the words for those it does not (pure). Each channel
 * passes its platform's limits; the files are taken in plan order until a limit is reached.
 */
import type { RunFile } from '../engine/messages.ts';
import { sizeText } from '../engine/text.ts';

/** A platform's limits on the files of one message (or upload). */
export interface AttachmentLimits {
  /** Whose limits, for the words: "Slack", "Discord". */
  platform: string;
  maxFiles: number;
  /** Bytes one file may have. */
  maxFileBytes: number;
  /** Bytes the files of one message may have together (Infinity: no such limit). */
  maxTotalBytes: number;
}

/** The files to attach, and one line per file left out saying why. */
export interface FittedAttachments {
  attach: RunFile[];
  skipped: string[];
}

/** Fits `files` within `limits`, in order; a file too big is skipped and the next may still fit. */
export function fitAttachments(files: readonly RunFile[], limits: AttachmentLimits): FittedAttachments {
  const attach: RunFile[] = [];
  const skipped: string[] = [];
  let total = 0;
  for (const f of files) {
    const why =
      f.bytes === 0
        ? 'it is empty'
        : f.bytes > limits.maxFileBytes
          ? `over ${limits.platform}'s ${sizeText(limits.maxFileBytes)} per file`
          : attach.length >= limits.maxFiles
            ? `at most ${limits.maxFiles} files go with a report here`
            : total + f.bytes > limits.maxTotalBytes
              ? `over ${limits.platform}'s ${sizeText(limits.maxTotalBytes)} per message`
              : undefined;
    if (why) skipped.push(`${fileLine(f)}: not attached (${why})`);
    else {
      attach.push(f);
      total += f.bytes;
    }
  }
  return { attach, skipped };
}

/** `chart.png (image/png, 2.9 kB) from step img`. */
export function fileLine(f: RunFile): string {
  return `${f.name} (${f.mimeType}, ${sizeText(f.bytes)}) from step ${f.stepId}`;
}

/** The words that go with the attachments: a heading and the files left out. */
export function attachmentsText(fitted: FittedAttachments): string {
  const n = fitted.attach.length;
  const heading = n > 0 ? `Files from this run (${n}):` : 'Files from this run:';
  return [heading, ...fitted.skipped.map((s) => `• ${s}`)].join('\n');
}
