/**
 * A tap in front of a Streamable HTTP MCP server: every request is passed on unchanged (SSE answers stream through
 * as they come), and each JSON-RPC message the server received, and the text it sent back, is kept. Tests count
 * from it what the server really got (cancellations) and sent (progress).
 *
 *   const tap = await startHttpTap(server.url);  // point Steward at tap.url
 *   tap.received().filter((m) => m.method === 'notifications/cancelled');
 */
import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';

/** One JSON-RPC message as the server received it. */
export interface TappedMessage {
  method?: string;
  id?: number | string;
  params?: Record<string, unknown>;
}

export interface HttpTap {
  /** The tap's MCP endpoint (same path as the target's). */
  url: string;
  /** Every JSON-RPC message the server received so far, in order. */
  received(): TappedMessage[];
  /** All the text the server sent back so far (SSE streams and JSON bodies, in arrival order). */
  sent(): string;
  close(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1 and passes every request on to `target`. */
export async function startHttpTap(target: string): Promise<HttpTap> {
  const to = new URL(target);
  const messages: TappedMessage[] = [];
  let answers = '';
  const server = createServer((req, res) => {
    void body(req).then((buf) => {
      if (buf.length > 0) {
        const parsed = JSON.parse(buf.toString('utf8')) as TappedMessage | TappedMessage[];
        messages.push(...(Array.isArray(parsed) ? parsed : [parsed]));
      }
      const upstream = request(
        { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('data', (chunk: Buffer) => {
            answers += chunk.toString('utf8');
            res.write(chunk);
          });
          answer.on('end', () => res.end());
          answer.on('error', () => res.destroy());
        },
      );
      upstream.on('error', () => res.destroy());
      // The client gave up (an aborted stream): so does the request to the server.
      res.on('close', () => upstream.destroy());
      upstream.end(buf);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}${to.pathname}`,
    received: () => [...messages],
    sent: () => answers,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function body(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
