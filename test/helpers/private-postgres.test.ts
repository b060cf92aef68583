/**
 * The private cluster helper itself: a server a test may restart, crash, stop and start, keeping committed data,
 * refusing connections while it is down, and gone after close().
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitUntil } from './wait.ts';
import { describeNeeding } from './needs.ts';
import { privatePostgresMissing, startPrivatePostgres, type PrivatePostgres } from './private-postgres.ts';

describeNeeding(privatePostgresMissing, 'private PostgreSQL cluster', () => {
  let server: PrivatePostgres;
  const timings: string[] = [];
  beforeAll(async () => {
    server = await timed('initdb + start', startPrivatePostgres);
  });
  afterAll(async () => {
    await server?.close();
    if (timings.length > 0) console.info(`private PostgreSQL: ${timings.join(', ')}`);
  });

  async function timed<T>(what: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await work();
    timings.push(`${what} ${Math.round(performance.now() - started)} ms`);
    return result;
  }

  /** Whether a connection attempt is refused right now; a connection that is made is closed again. */
  async function refused(): Promise<boolean> {
    const client = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5_000 });
    // A connection made just as the server shuts down is ended by it ("terminating connection due to administrator
    // command"): an 'error' event, which with no listener would be an uncaught exception.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      return (error as { code?: unknown }).code === 'ECONNREFUSED';
    }
    await client.end().catch(() => undefined);
    return false;
  }

  async function query(sql: string, values: unknown[] = []): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return await client.query(sql, values);
    } finally {
      await client.end();
    }
  }

  it('listens on 127.0.0.1 at the port in its URL, away from the shared server', async () => {
    expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
    expect(server.port).not.toBe(5432);
    const { rows } = await query(`SELECT current_setting('listen_addresses') AS listen, current_user AS who`);
    expect(rows).toEqual([{ listen: '127.0.0.1', who: 'postgres' }]);
  });

  it('keeps committed rows through a fast restart and through a crash (immediate mode)', async () => {
    await query('CREATE TABLE kept (id int PRIMARY KEY, note text)');
    await query(`INSERT INTO kept VALUES (1, 'before a fast restart')`);
    await timed('restart fast', () => server.restart({ mode: 'fast' }));
    await query(`INSERT INTO kept VALUES (2, 'before a crash')`);
    await timed('restart immediate', () => server.restart({ mode: 'immediate' }));
    const { rows } = await query('SELECT id, note FROM kept ORDER BY id');
    expect(rows).toEqual([
      { id: 1, note: 'before a fast restart' },
      { id: 2, note: 'before a crash' },
    ]);
  });

  it('ends open sessions when it restarts', async () => {
    const client = new pg.Client({ connectionString: server.url });
    const errors: Error[] = [];
    client.on('error', (error) => errors.push(error));
    await client.connect();
    try {
      await server.restart({ mode: 'fast' });
      await expect(client.query('SELECT 1')).rejects.toThrow();
    } finally {
      await client.end().catch(() => undefined);
    }
  });

  it('refuses connections while stopped (ECONNREFUSED), and works again once started', async () => {
    await timed('stop fast', () => server.stop());
    const client = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5_000 });
    await expect(client.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await server.stop(); // already stopped: nothing to do
    await timed('start', () => server.start());
    await server.start(); // already running: nothing to do
    expect((await query('SELECT count(*)::int AS n FROM kept')).rows).toEqual([{ n: 2 }]);
  });

  it('is down for the length of an outage, and up after it', async () => {
    const started = performance.now();
    let ended = false;
    const outage = server.outage(1_000).finally(() => (ended = true));
    await waitUntil('the outage to begin', refused, { timeoutMs: 10_000 });
    expect(ended).toBe(false);
    await outage;
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(await refused()).toBe(false);
  });

  it('close() stops the server and removes its folder, and may be called twice', async () => {
    const other = await startPrivatePostgres();
    expect(other.port).not.toBe(server.port);
    await other.close();
    await other.close();
    expect(existsSync(other.dir)).toBe(false);
    const client = new pg.Client({ connectionString: other.url, connectionTimeoutMillis: 5_000 });
    await expect(client.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
