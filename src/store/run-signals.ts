/**
 * Run signals over PostgreSQL `LISTEN/NOTIFY`: the notifications sent by `run-leases.ts` (a decision queued for a run,
 * a run let go) reach every process listening on the channel. PostgreSQL needs a connection of its own for this,
 * outside the pool; when it drops (a server restart), it is opened again with backoff, and listeners are told that
 * signals may have been missed. PGlite delivers the same notifications within its one process.
 */
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { RunSignal, RunSignals } from '../engine/ports.ts';
import { SIGNAL_CHANNEL } from './run-leases.ts';

/**
 * Reads a notification's payload (`decision:<run id>`, `released:<run id>`, or `connected:<run id>` from a person's
 * connection callback, with `-` when no run waited); anything else is ignored.
 */
export function parseSignal(payload: string | undefined): RunSignal | null {
  const match = /^(decision|released|connected):(.+)$/.exec(payload ?? '');
  if (!match) return null;
  return { kind: match[1] as 'decision' | 'released' | 'connected', runId: match[2] as string };
}

/** Listens on a dedicated PostgreSQL connection, reconnecting (250 ms doubling to 5 s) while not stopped. */
export function postgresSignals(
  connectionString: string,
  log: (level: 'info' | 'warn', message: string) => void,
): RunSignals {
  return {
    async listen(onSignal) {
      let stopped = false;
      let client: pg.Client | undefined;
      let retryTimer: NodeJS.Timeout | undefined;
      let delay = 250;
      const connect = async (): Promise<void> => {
        const c = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
        c.on('notification', (n) => {
          if (n.channel !== SIGNAL_CHANNEL) return;
          const signal = parseSignal(n.payload);
          if (signal) onSignal(signal);
        });
        // Until it listens, a failure is the caller's to handle (the first one is thrown, later ones retried).
        c.on('error', () => undefined);
        try {
          await c.connect();
          await c.query(`LISTEN ${SIGNAL_CHANNEL}`);
        } catch (err) {
          await c.end().catch(() => undefined);
          throw err;
        }
        if (stopped) {
          await c.end().catch(() => undefined);
          return;
        }
        let lost = false;
        const onLost = (err?: Error) => {
          if (lost) return;
          lost = true;
          c.removeAllListeners('notification');
          void c.end().catch(() => undefined);
          if (stopped) return;
          log('warn', `run signals: listening connection lost${err ? ` (${err.message})` : ''}; reconnecting`);
          schedule();
        };
        c.on('error', onLost);
        c.on('end', () => onLost());
        client = c;
      };
      const schedule = () => {
        retryTimer = setTimeout(() => {
          connect()
            .then(() => {
              if (stopped) return;
              delay = 250;
              log('info', 'run signals: listening again');
              onSignal({ kind: 'missed' });
            })
            .catch(() => {
              delay = Math.min(delay * 2, 5_000);
              if (!stopped) schedule();
            });
        }, delay);
        retryTimer.unref();
      };
      await connect();
      return async () => {
        stopped = true;
        if (retryTimer) clearTimeout(retryTimer);
        const c = client;
        client = undefined;
        c?.removeAllListeners('end');
        c?.removeAllListeners('error');
        c?.on('error', () => undefined);
        await c?.end().catch(() => undefined);
      };
    },
  };
}

/** Notifications within one PGlite instance (one process holds a PGlite folder). */
export function pgliteSignals(lite: PGlite): RunSignals {
  return {
    async listen(onSignal) {
      const unsubscribe = await lite.listen(SIGNAL_CHANNEL, (payload) => {
        const signal = parseSignal(payload);
        if (signal) onSignal(signal);
      });
      return () => unsubscribe();
    },
  };
}
