/**
 * A run's files in its Discord thread: one message with the files as attachments (multipart, `files[n]` with
 * `attachments` naming them), its text naming what was left out. Discord's limits for a bot in a server without
 * boosts (https://discord.com/developers/docs/reference#uploading-files): 10 MiB of files per message, 10 attachments.
 */
import type { RawFile } from 'discord.js';
import type { RunFiles } from '../../engine/messages.ts';
import { attachmentsText, fitAttachments, type AttachmentLimits } from '../attachments.ts';

/** Read as the stricter of the two readings: 10 MiB for one file and for all of one message's files together. */
export const DISCORD_ATTACHMENT_LIMITS: AttachmentLimits = {
  platform: 'Discord',
  maxFiles: 10,
  maxFileBytes: 10 * 1024 * 1024,
  maxTotalBytes: 10 * 1024 * 1024,
};

/** The message body and its files; no files: a message with the words alone. */
export function runFilesMessage(
  message: RunFiles,
  limits: AttachmentLimits = DISCORD_ATTACHMENT_LIMITS,
): { body: Record<string, unknown>; files: RawFile[] } {
  const fitted = fitAttachments(message.files, limits);
  const text = attachmentsText(fitted);
  return {
    body: {
      // Discord's 2,000 characters; file names from MCP servers ping nobody.
      content: text.length <= 2000 ? text : `${text.slice(0, 1999)}…`,
      allowed_mentions: { parse: [] },
      attachments: fitted.attach.map((f, i) => ({ id: i, filename: f.name })),
    },
    files: fitted.attach.map((f) => ({ name: f.name, data: Buffer.from(f.data, 'base64'), contentType: f.mimeType })),
  };
}
