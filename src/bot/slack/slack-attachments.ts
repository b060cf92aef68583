/**
 * A run's files in its Slack thread: uploaded with the files upload API (files.getUploadURLExternal, a POST of the
 * bytes to the URL it gives, files.completeUploadExternal with channel_id and thread_ts; the SDK's filesUploadV2 runs
 * that sequence), one message holding every file, its comment naming what was left out. Needs the `files:write` scope.
 */
import type { WebClient } from '@slack/web-api';
import type { RunFiles } from '../../engine/messages.ts';
import { attachmentsText, fitAttachments, type AttachmentLimits } from '../attachments.ts';
import type { SlackMessage } from './slack-render.ts';
import { safeMrkdwn } from './slack-text.ts';

/**
 * Slack takes files up to 1 GB (https://slack.com/help/articles/201330736); Steward attaches at most 10 to one report,
 * as Discord does, and 50 MB together, since each is held in memory whole.
 */
export const SLACK_ATTACHMENT_LIMITS: AttachmentLimits = {
  platform: 'Slack',
  maxFiles: 10,
  maxFileBytes: 1024 * 1024 * 1024,
  maxTotalBytes: 50 * 1024 * 1024,
};

/** Uploads the files into the thread; resolves to a message for the thread when nothing could be attached, else null. */
export async function uploadRunFiles(
  client: WebClient,
  where: { channel: string; threadTs: string },
  message: RunFiles,
  limits: AttachmentLimits = SLACK_ATTACHMENT_LIMITS,
): Promise<SlackMessage | null> {
  const fitted = fitAttachments(message.files, limits);
  // File names come from MCP servers: escaped, so a name cannot ping a channel.
  const text = safeMrkdwn(attachmentsText(fitted), 3000);
  if (fitted.attach.length === 0) return noteMessage(text);
  try {
    await client.filesUploadV2({
      channel_id: where.channel,
      thread_ts: where.threadTs,
      initial_comment: text,
      file_uploads: fitted.attach.map((f) => ({
        file: Buffer.from(f.data, 'base64'),
        filename: f.name,
        title: f.name,
      })),
    });
    return null;
  } catch (err) {
    // missing_scope: an app installed before files:write was in its manifest; the report stands without its files.
    const code = (err as { data?: { error?: string } }).data?.error ?? (err as Error).message;
    return noteMessage(`${text}\n• The files could not be attached (Slack said ${safeMrkdwn(code, 100)}).`);
  }
}

function noteMessage(text: string): SlackMessage {
  return { text, blocks: [{ type: 'context', elements: [{ type: 'mrkdwn', text, verbatim: true }] }] };
}
