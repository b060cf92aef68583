/**
 * A TCP proxy in front of a PostgreSQL server that can lose the server's replies. A write sent through it then
 * commits while its caller never hears so: the connection breaks between the commit and the answer, which a real
 * restart does only by bad luck. Store fault tests use it to check that a write repeated after that is applied
 * once and answers as the first try would have.
 *
 *   const proxy = await startLossyProxy(server.port);  // connect to 127.0.0.1:<proxy.port> instead
 *   proxy.loseReplies();  // on the connections open now, what the server sends never arrives, and when the
 *                         // server closes one of them the client's side is cut too; new connections work as usual
 *   afterAll(() => proxy.close());
 */
import { connect, createServer, type Socket } from 'node:net';

export interface LossyProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  /** Loses, from now on, every byte the server sends on the connections open now. */
  loseReplies(): void;
  /** How many bytes from the server were lost so far. */
  lostBytes(): number;
  /** Closes every connection and stops listening. */
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  server: Socket;
  lossy: boolean;
}

/** Listens on a free port of 127.0.0.1 and passes every connection on to `targetPort`. */
export async function startLossyProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<LossyProxy> {
  const pairs = new Set<Pair>();
  let lost = 0;
  const proxy = createServer((client) => {
    const server = connect(targetPort, targetHost);
    const pair: Pair = { client, server, lossy: false };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => server.write(chunk));
    server.on('data', (chunk: Buffer) => {
      if (pair.lossy) lost += chunk.length;
      else client.write(chunk);
    });
    // The server went away (or was never there): so does the client's side. A lossy connection is cut at once,
    // so what the server said last never arrives either.
    server.on('close', () => {
      pairs.delete(pair);
      if (pair.lossy) client.destroy();
      else client.end();
    });
    client.on('close', () => {
      pairs.delete(pair);
      server.destroy();
    });
    // Both sides report their failures through 'close' as well.
    server.on('error', () => undefined);
    client.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(0, '127.0.0.1', resolve);
  });
  const address = proxy.address();
  if (typeof address !== 'object' || address === null) throw new Error('the proxy has no TCP address');
  return {
    port: address.port,
    loseReplies() {
      for (const pair of pairs) pair.lossy = true;
    },
    lostBytes: () => lost,
    async close() {
      for (const { client, server } of pairs) {
        client.destroy();
        server.destroy();
      }
      pairs.clear();
      if (proxy.listening) await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
