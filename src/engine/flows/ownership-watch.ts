/**
 * What a process does while it lives so that every run has a driver: it renews its leases, takes over runs that need
 * an owner, and applies decisions other processes queued. Renewal runs on a timer of its own: a takeover round can
 * take long (it may write and post reports, show cards again), and a lease that waited for it would lapse while its
 * holder is alive, so another process would take the run and both would drive it (and both post its report).
 * Now and then (`tidyEveryMs`) it also forgets the old notes that only guard against repeats.
 */
import type { RunSignal, RunSignals } from '../ports.ts';
import type { Log } from './deps.ts';

/** The watch's rounds, as the Steward gives them. */
export interface OwnershipRounds {
  /** Renews every lease this process holds, letting go of the runs another process took over. */
  renew: () => Promise<void>;
  /** Takes over runs that need an owner and applies queued decisions. */
  takeOver: () => Promise<void>;
  /** Applies the decisions queued for one run. */
  drain: (runId: string) => Promise<void>;
  /** Someone connected a server that connects per person: the runs waiting on it look again. */
  connected?: () => Promise<void>;
  /** Forgets old repeat-guarding notes (see `RunStore.pruneLedgers`). */
  tidy: () => Promise<void>;
}

/** A running watch. */
export interface OwnershipWatch {
  /** Runs a takeover round now (or right after the one under way). */
  soon(): void;
  stop(): Promise<void>;
}

/** Starts the watch: both rounds every `everyMs`, a takeover round sooner when a peer signals, decisions at once. */
export function startOwnershipWatch(
  rounds: OwnershipRounds,
  o: { everyMs: number; tidyEveryMs: number; signals?: RunSignals; log: Log },
): OwnershipWatch {
  const { log } = o;
  const renewal = serialRound(rounds.renew, (err) =>
    log('warn', `run leases not renewed: ${err.message}; trying again shortly`),
  );
  const takeover = serialRound(rounds.takeOver, (err) =>
    log('warn', `run ownership: ${err.message}; trying again shortly`),
  );
  const tidying = serialRound(rounds.tidy, (err) => log('warn', `old notes not pruned yet: ${err.message}`));
  const timers = [
    setInterval(renewal.run, o.everyMs),
    setInterval(takeover.run, o.everyMs),
    setInterval(tidying.run, o.tidyEveryMs),
  ];
  for (const t of timers) t.unref();
  const onSignal = (signal: RunSignal) => {
    if (signal.kind === 'connected') {
      void rounds
        .connected?.()
        .catch((err: unknown) => log('warn', `connections not looked at again yet: ${(err as Error).message}`));
      return;
    }
    if (signal.kind !== 'decision') return takeover.run();
    void rounds
      .drain(signal.runId)
      .catch((err: unknown) =>
        log('warn', `run ${signal.runId}: queued decisions not applied yet: ${(err as Error).message}`),
      );
  };
  const listening = o.signals?.listen(onSignal).catch((err: unknown) => {
    log('warn', `not listening for other processes (${(err as Error).message}); polling instead`);
    return undefined;
  });
  return {
    soon: takeover.run,
    stop: async () => {
      for (const t of timers) clearInterval(t);
      const unlisten = await listening;
      await unlisten?.();
      await Promise.all([renewal.settled(), takeover.settled(), tidying.settled()]);
    },
  };
}

/**
 * A round that never overlaps itself: asked while under way, it runs once more right after. `settled` ends it: no
 * round starts after it, and it resolves when the one under way has ended.
 */
function serialRound(work: () => Promise<void>, onError: (err: Error) => void) {
  let running: Promise<void> | undefined;
  let again = false;
  let ended = false;
  const run = (): void => {
    if (ended) return;
    if (running) {
      again = true;
      return;
    }
    running = work()
      .catch((err: unknown) => onError(err as Error))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      });
  };
  const settled = async () => {
    ended = true;
    await running;
  };
  return { run, settled };
}
