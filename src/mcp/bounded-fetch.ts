/**
 * The `fetch` the Streamable HTTP transport uses, with every response body bounded: a JSON response or an SSE event
 * larger than `maxBytes` is counted and hashed as it streams past (never buffered) and becomes an error response to
 * the request it answers; an error page is cut. The SDK itself would read any body whole into memory.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { OversizedMessage, toTooLargeResponse, type OversizedSummary } from './oversized-message.ts';

const NEWLINE = 0x0a;
const CR = 0x0d;

/** Wraps `base` so that no response body can make the transport hold more than about `maxBytes` per message. */
export function createBoundedFetch(
  maxBytes: number,
  onOversized: (summary: OversizedSummary) => void,
  base: FetchLike = fetch,
): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body) return response;
    const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    const ids = requestIds(init?.body);
    if (!response.ok) return withBody(response, response.body.pipeThrough(cutAfter(maxBytes)));
    if (type === 'text/event-stream') {
      return withBody(response, response.body.pipeThrough(boundedEvents(maxBytes, ids, onOversized)));
    }
    if (type === 'application/json') return boundedJson(response, maxBytes, ids, onOversized);
    return response;
  };
}

/** A copy of `response` with another body (its length is no longer known). */
function withBody(response: Response, body: ReadableStream<Uint8Array> | string): Response {
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/** The ids of the requests a POST body carries (one message or a batch). */
function requestIds(body: RequestInit['body']): (string | number)[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    const messages: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((m) => {
      const { id, method } = (m ?? {}) as { id?: unknown; method?: unknown };
      return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? [id] : [];
    });
  } catch {
    return [];
  }
}

/** Error responses for a refused message: for its own id when it could be read, else for each request sent. */
function standIns(summary: OversizedSummary, ids: (string | number)[]): unknown[] {
  if (summary.hasMethod) return [];
  const answered = summary.id !== undefined ? [summary.id] : ids;
  return answered.flatMap((id) => toTooLargeResponse({ ...summary, id }) ?? []);
}

async function boundedJson(
  response: Response,
  maxBytes: number,
  ids: (string | number)[],
  onOversized: (summary: OversizedSummary) => void,
): Promise<Response> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  let big: OversizedMessage | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (big) big.push(value);
    else if (size + value.length <= maxBytes) {
      parts.push(value);
      size += value.length;
    } else {
      big = new OversizedMessage(maxBytes);
      for (const part of parts) big.push(part);
      big.push(value);
      parts.length = 0;
    }
  }
  if (!big) return withBody(response, Buffer.concat(parts, size).toString('utf8'));
  const summary = big.finish();
  onOversized(summary);
  const answers = standIns(summary, ids);
  return withBody(response, JSON.stringify(answers.length === 1 ? answers[0] : answers));
}

/** Passes at most `maxBytes` through, then ends the body. */
function cutAfter(maxBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let left = maxBytes;
  return new TransformStream({
    transform(chunk, controller) {
      if (left <= 0) return;
      controller.enqueue(chunk.subarray(0, left));
      left -= chunk.length;
    },
  });
}

/**
 * Passes SSE events through whole; an event larger than `maxBytes` is replaced by a `message` event carrying the
 * error response for the request it answers (its id read from its data, or the request this POST sent).
 */
function boundedEvents(
  maxBytes: number,
  ids: (string | number)[],
  onOversized: (summary: OversizedSummary) => void,
): TransformStream<Uint8Array, Uint8Array> {
  let lines: Uint8Array[] = [];
  let size = 0;
  let lineLength = 0;
  let lineFirst = -1;
  let big: OversizedMessage | undefined;
  const add = (piece: Uint8Array) => {
    if (big) return big.push(piece);
    if (size + piece.length <= maxBytes) {
      // Copied: the stream may reuse the chunk's memory.
      lines.push(piece.slice());
      size += piece.length;
      return;
    }
    // The whole event is scanned: field names and line breaks sit outside the JSON object, where they do not count.
    big = new OversizedMessage(maxBytes);
    for (const line of lines) big.push(line);
    big.push(piece);
    lines = [];
    size = 0;
  };
  const endEvent = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (big) {
      const summary = big.finish();
      big = undefined;
      onOversized(summary);
      for (const answer of standIns(summary, ids)) {
        controller.enqueue(Buffer.from(`event: message\ndata: ${JSON.stringify(answer)}\n\n`));
      }
    } else if (size > 0) controller.enqueue(Buffer.concat(lines, size));
    lines = [];
    size = 0;
  };
  return new TransformStream({
    transform(chunk, controller) {
      let from = 0;
      while (from < chunk.length) {
        const end = chunk.indexOf(NEWLINE, from);
        const piece = chunk.subarray(from, end === -1 ? chunk.length : end + 1);
        if (lineLength === 0 && piece.length > 0) lineFirst = piece[0] ?? -1;
        add(piece);
        if (end === -1) {
          lineLength += piece.length;
          return;
        }
        // A blank line (`\n` or `\r\n`) ends the event.
        const content = lineLength + piece.length - 1;
        const blank = content === 0 || (content === 1 && lineFirst === CR);
        lineLength = 0;
        if (blank) endEvent(controller);
        from = end + 1;
      }
    },
    flush(controller) {
      endEvent(controller);
    },
  });
}
