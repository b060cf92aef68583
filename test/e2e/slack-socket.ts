/**
 * A minimal Socket Mode server for tests: a WebSocket endpoint (RFC 6455, text frames, ping/pong, close) that
 * greets with Slack's `hello`, pushes envelopes, and collects the app's acknowledgements.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A running fake Socket Mode endpoint. */
export interface FakeSocketMode {
  url: string;
  /** Messages the app sent (acks), parsed. */
  received: Array<Record<string, unknown>>;
  /** Resolves when an app has connected and been greeted. */
  connected: Promise<void>;
  /** Pushes an envelope (events_api, interactive, …) to the connected app. */
  push(envelope: Record<string, unknown>): void;
  close(): Promise<void>;
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Starts the endpoint on 127.0.0.1 at a free port. */
export async function startFakeSocketMode(): Promise<FakeSocketMode> {
  const received: Array<Record<string, unknown>> = [];
  const sockets = new Set<Socket>();
  let current: Socket | undefined;
  let greet!: () => void;
  const connected = new Promise<void>((resolve) => (greet = resolve));
  const server = createServer((_req, res) => res.writeHead(426).end());
  server.on('upgrade', (req, socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const accept = createHash('sha1')
      .update(`${String(req.headers['sec-websocket-key'])}${GUID}`)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    current = socket;
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (let frame = readFrame(buffer); frame; frame = readFrame(buffer)) {
        buffer = buffer.subarray(frame.size);
        if (frame.opcode === 0x1) received.push(JSON.parse(frame.payload.toString('utf8')) as Record<string, unknown>);
        if (frame.opcode === 0x9) socket.write(writeFrame(0xa, frame.payload));
        if (frame.opcode === 0x8) socket.end(writeFrame(0x8, Buffer.alloc(0)));
      }
    });
    socket.write(
      writeFrame(
        0x1,
        Buffer.from(
          JSON.stringify({
            type: 'hello',
            num_connections: 1,
            connection_info: { app_id: 'A0STEWARD' },
            debug_info: { host: 'fake' },
          }),
        ),
      ),
    );
    greet();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/link/?ticket=test`,
    received,
    connected,
    push(envelope) {
      if (!current) throw new Error('no app is connected');
      current.write(writeFrame(0x1, Buffer.from(JSON.stringify(envelope))));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// Server frames are never masked; payloads here stay far below 2^32 bytes.
function writeFrame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const head =
    n < 126
      ? Buffer.from([0x80 | opcode, n])
      : n < 65_536
        ? Buffer.from([0x80 | opcode, 126, n >> 8, n & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127, 0, 0, 0, 0]), uint32(n)]);
  return Buffer.concat([head, payload]);
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

// Client frames are always masked (RFC 6455 §5.3).
function readFrame(buf: Buffer): { opcode: number; payload: Buffer; size: number } | null {
  if (buf.length < 2) return null;
  const opcode = buf[0]! & 0x0f;
  const masked = (buf[1]! & 0x80) !== 0;
  let length = buf[1]! & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buf.length < 4) return null;
    length = buf.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buf.length < 10) return null;
    length = Number(buf.readBigUInt64BE(2));
    offset = 10;
  }
  const maskAt = offset;
  if (masked) offset += 4;
  if (buf.length < offset + length) return null;
  const payload = Buffer.from(buf.subarray(offset, offset + length));
  if (masked) for (let i = 0; i < payload.length; i++) payload[i]! ^= buf[maskAt + (i % 4)]!;
  return { opcode, payload, size: offset + length };
}
