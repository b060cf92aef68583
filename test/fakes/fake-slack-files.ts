/**
 * The fake Slack's files upload API, as strict as Slack documents it:
 * - files.getUploadURLExternal (https://docs.slack.dev/reference/methods/files.getUploadURLExternal): `filename` and
 *   `length` (bytes) are required; `missing_argument` "typically only occurs when the `length` provided is 0";
 *   `alt_txt` over 1,000 characters is `alt_txt_too_large`; the bot token needs the `files:write` scope (else
 *   `missing_scope` with `needed`). It answers an `upload_url` on this fake and a `file_id`.
 * - The upload: a POST of the bytes (raw or multipart form) to that URL; 200 when it took them, anything else a
 *   failure. A URL is used once. Slack's files may be up to 1 GB (https://slack.com/help/articles/201330736).
 * - files.completeUploadExternal (https://docs.slack.dev/reference/methods/files.completeUploadExternal): `files`
 *   (a JSON array of `{ id, title? }`) is required; `thread_ts` needs one channel (`channel_id`), "never a reply's
 *   ts"; the files are shared as one message in that thread with `initial_comment`. A file id the fake never gave out
 *   is `file_not_found`; one whose bytes never arrived, or arrived at a size other than `length`, is refused with
 *   `file_upload_incomplete` (the fake's name: Slack documents no code for it, and its job would fail the file).
 */
import { randomBytes } from 'node:crypto';

/** A file the app uploaded, and where it was shared. */
export interface FakeSlackFile {
  id: string;
  filename: string;
  length: number;
  title?: string;
  /** The bytes as received (undefined until the upload POST). */
  bytes?: Buffer;
  /** `<channel>:<thread ts>` once completed into a thread. */
  sharedIn?: string;
  initialComment?: string;
}

type Method = (args: Record<string, unknown>, token: string) => Record<string, unknown>;

/** The three parts of an upload; `uploadUrl` is the fake's base URL for upload POSTs. */
export function createSlackFiles(options: {
  uploadUrl: () => string;
  /** The scopes a token was granted (default: every token has files:write). */
  scopesOf?: (token: string) => readonly string[];
  /** Shares the completed files as one message in a thread; returns its ts. */
  share: (channel: string, threadTs: string | undefined, text: string, files: FakeSlackFile[]) => string;
}) {
  const files = new Map<string, FakeSlackFile>();
  const scoped = (token: string) => (options.scopesOf?.(token) ?? ['files:write']).includes('files:write');
  const methods: Record<string, Method> = {
    'files.getUploadURLExternal': (args, token) => {
      if (!scoped(token)) return { ok: false, error: 'missing_scope', needed: 'files:write', provided: 'chat:write' };
      if (typeof args.filename !== 'string' || !args.filename) return { ok: false, error: 'invalid_arguments' };
      const length = Number(args.length);
      if (!Number.isInteger(length) || length <= 0) return { ok: false, error: 'missing_argument' };
      if (typeof args.alt_txt === 'string' && args.alt_txt.length > 1000)
        return { ok: false, error: 'alt_txt_too_large' };
      if (length > 1024 ** 3) return { ok: false, error: 'file_upload_size_restricted' };
      const id = `F${randomBytes(5).toString('hex').toUpperCase()}`;
      files.set(id, { id, filename: args.filename, length });
      return { ok: true, upload_url: `${options.uploadUrl()}${id}`, file_id: id };
    },
    'files.completeUploadExternal': (args, token) => {
      if (!scoped(token)) return { ok: false, error: 'missing_scope', needed: 'files:write', provided: 'chat:write' };
      const list = args.files;
      if (!Array.isArray(list) || list.length === 0) return { ok: false, error: 'invalid_arguments' };
      const channel = typeof args.channel_id === 'string' ? args.channel_id : undefined;
      const threadTs = typeof args.thread_ts === 'string' ? args.thread_ts : undefined;
      if (threadTs && (!channel || channel.includes(','))) return { ok: false, error: 'invalid_arguments' };
      const done: FakeSlackFile[] = [];
      for (const entry of list as { id?: unknown; title?: unknown }[]) {
        const file = typeof entry.id === 'string' ? files.get(entry.id) : undefined;
        if (!file) return { ok: false, error: 'file_not_found' };
        if (!file.bytes || file.bytes.length !== file.length) return { ok: false, error: 'file_upload_incomplete' };
        if (typeof entry.title === 'string') file.title = entry.title;
        done.push(file);
      }
      const text = typeof args.initial_comment === 'string' ? args.initial_comment : '';
      if (channel) {
        options.share(channel, threadTs, text, done);
        for (const f of done) Object.assign(f, { sharedIn: `${channel}:${threadTs ?? ''}`, initialComment: text });
      }
      return { ok: true, files: done.map((f) => ({ id: f.id, title: f.title ?? f.filename, name: f.filename })) };
    },
  };
  /** The upload POST: multipart (the SDK sends one part) or raw bytes. */
  async function upload(id: string, raw: Buffer, contentType: string): Promise<number> {
    const file = files.get(id);
    if (!file || file.bytes) return 404;
    if (contentType.startsWith('multipart/form-data')) {
      const form = await new Request('http://fake/', {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: new Uint8Array(raw),
      }).formData();
      const part = [...form.values()].find((v): v is File => typeof v !== 'string');
      if (!part) return 400;
      file.bytes = Buffer.from(await part.arrayBuffer());
    } else file.bytes = raw;
    return 200;
  }
  return { methods, upload, files };
}
