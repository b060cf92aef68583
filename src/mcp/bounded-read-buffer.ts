/**
 * Stands in for the MCP SDK's stdio `ReadBuffer`, which throws once a message passes 10 MB and so makes its
 * transport close the connection: here a line (one JSON-RPC message) longer than `maxBytes` is never buffered;
 * it is counted and hashed as it passes and becomes an error response to the request it answers.
 */
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describeOversized, OversizedMessage, toTooLargeResponse, type OversizedSummary } from './oversized-message.ts';

const NEWLINE = 0x0a;

/** Same shape as the SDK's `ReadBuffer`: `append` never throws; `readMessage` throws for a message it cannot use. */
export class BoundedReadBuffer {
  private parts: Buffer[] = [];
  private size = 0;
  private oversized: OversizedMessage | undefined;
  private readonly ready: (string | OversizedSummary)[] = [];

  constructor(
    private readonly maxBytes: number,
    /** Told about every message refused for its size. */
    private readonly onOversized: (summary: OversizedSummary) => void = () => {},
  ) {}

  append(chunk: Buffer): void {
    let from = 0;
    while (from < chunk.length) {
      const end = chunk.indexOf(NEWLINE, from);
      const piece = chunk.subarray(from, end === -1 ? chunk.length : end);
      this.take(piece);
      if (end === -1) return;
      this.endLine();
      from = end + 1;
    }
  }

  readMessage(): JSONRPCMessage | null {
    const next = this.ready.shift();
    if (next === undefined) return null;
    if (typeof next === 'string') return deserializeMessage(next);
    const response = toTooLargeResponse(next);
    // Thrown, the SDK reports it through onerror and reads on: nobody waits for a refused request or notification.
    if (!response) throw new Error(`MCP message dropped: ${describeOversized(next)}`);
    return response;
  }

  clear(): void {
    this.parts = [];
    this.size = 0;
    this.oversized = undefined;
    this.ready.length = 0;
  }

  private take(piece: Buffer): void {
    if (this.oversized) return this.oversized.push(piece);
    if (this.size + piece.length <= this.maxBytes) {
      // Copied: the stream may reuse the chunk's memory.
      if (piece.length > 0) this.parts.push(Buffer.from(piece));
      this.size += piece.length;
      return;
    }
    this.oversized = new OversizedMessage(this.maxBytes);
    for (const part of this.parts) this.oversized.push(part);
    this.oversized.push(piece);
    this.parts = [];
    this.size = 0;
  }

  private endLine(): void {
    if (this.oversized) {
      const summary = this.oversized.finish();
      this.oversized = undefined;
      this.onOversized(summary);
      this.ready.push(summary);
      return;
    }
    const line = Buffer.concat(this.parts, this.size).toString('utf8').replace(/\r$/, '');
    this.parts = [];
    this.size = 0;
    // Blank lines carry no message (the SDK's own buffer would fail to parse them).
    if (line.trim() !== '') this.ready.push(line);
  }
}
