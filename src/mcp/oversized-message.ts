/**
 * A JSON-RPC message too large to read whole: its bytes are counted and hashed as they stream past, and only what
 * is needed to route an answer is kept (the top-level `id`, whether it is a request or notification), so a
 * hostile or careless server cannot make the host buffer, parse or drop a connection over one message.
 */
import { createHash, type Hash } from 'node:crypto';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The JSON-RPC error code of a response Steward made up for a message it refused for its size. */
export const OUTPUT_TOO_LARGE = -32090;

/** What is known of a refused message once it ended. */
export interface OversizedSummary {
  bytes: number;
  /** SHA-256 (hex) of the message's bytes as received. */
  sha256: string;
  /** The top-level `id` as JSON text (a number or a string), when one was seen. */
  id: string | number | undefined;
  /** True for a request or notification (it has a top-level `method`), false for a response. */
  hasMethod: boolean;
  limit: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
// A real id is short; anything longer is not one Steward sent.
const MAX_ID_CHARS = 100;

/** Reads the top level of one JSON object byte by byte (UTF-8 never reuses ASCII bytes), keeping only its id. */
export class OversizedMessage {
  private bytes = 0;
  private readonly hash: Hash = createHash('sha256');
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** At depth 1: reading a key, then the value of the key read last. */
  private atKey = true;
  private key = '';
  private collecting: 'key' | 'id' | undefined;
  private text = '';
  private idText: string | undefined;
  private hasMethod = false;

  constructor(private readonly limit: number) {}

  /** Feeds the next bytes of the message. */
  push(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    this.hash.update(chunk);
    // Indexed: iterating a typed array through its iterator costs several times more over megabytes.
    for (let i = 0; i < chunk.length; i++) this.step(chunk[i] as number);
  }

  /** Ends the message. */
  finish(): OversizedSummary {
    if (this.collecting === 'id') this.endId();
    return {
      bytes: this.bytes,
      sha256: this.hash.digest('hex'),
      id: parseId(this.idText),
      hasMethod: this.hasMethod,
      limit: this.limit,
    };
  }

  private step(byte: number): void {
    const collect = this.collecting !== undefined && this.depth === 1;
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (byte === BACKSLASH) this.escaped = true;
      else if (byte === QUOTE) {
        this.inString = false;
        if (this.collecting === 'key' && this.depth === 1) return this.endKey();
      }
      if (collect) this.keep(byte);
      return;
    }
    switch (byte) {
      case QUOTE:
        this.inString = true;
        if (this.depth === 1 && this.atKey) Object.assign(this, { collecting: 'key', text: '' });
        else if (collect) this.keep(byte);
        return;
      case 0x7b: // {
      case 0x5b: // [
        this.depth++;
        return;
      case 0x7d: // }
      case 0x5d: // ]
        if (this.depth === 1 && this.collecting === 'id') this.endId();
        this.depth--;
        return;
      case 0x3a: // :
        if (this.depth === 1) {
          this.atKey = false;
          if (this.key === 'id') Object.assign(this, { collecting: 'id', text: '' });
          if (this.key === 'method') this.hasMethod = true;
        }
        return;
      case 0x2c: // ,
        if (this.depth === 1) {
          if (this.collecting === 'id') this.endId();
          this.atKey = true;
        }
        return;
      default:
        if (collect && byte > 0x20) this.keep(byte);
    }
  }

  private keep(byte: number): void {
    if (this.text.length < MAX_ID_CHARS + 2) this.text += String.fromCharCode(byte);
  }

  private endKey(): void {
    this.key = this.text;
    this.collecting = undefined;
  }

  private endId(): void {
    this.idText = this.text;
    this.collecting = undefined;
  }
}

function parseId(text: string | undefined): string | number | undefined {
  if (text === undefined || text.length > MAX_ID_CHARS) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'number' || typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The sentence a refused message becomes: its size, its hash and the limit. */
export function describeOversized(o: OversizedSummary): string {
  return `output too large: ${o.bytes} bytes (limit ${o.limit}), sha256 ${o.sha256}`;
}

/**
 * The error response that stands in for a refused response, for the request it answers; undefined for a refused
 * request or notification, or a message whose id could not be read (nothing can be routed to anyone).
 */
export function toTooLargeResponse(o: OversizedSummary): JSONRPCMessage | undefined {
  if (o.hasMethod || o.id === undefined) return undefined;
  return {
    jsonrpc: '2.0',
    id: o.id,
    error: {
      code: OUTPUT_TOO_LARGE,
      message: describeOversized(o),
      data: { bytes: o.bytes, sha256: o.sha256, limit: o.limit },
    },
  };
}
