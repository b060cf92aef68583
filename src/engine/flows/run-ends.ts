/**
 * Run ends for the `RunTelemetry` port, told as the store writes them: a wrapper of the store the flows use.
 */
import type { RunStore } from '../ports.ts';
import type { RunTelemetry } from '../run-telemetry.ts';
import { isTerminal } from '../types.ts';

/**
 * The store, telling `telemetry` of each run's end as it is written: a report stored (by whichever process stores it),
 * or a move to a terminal status that owes no report (an answer without a plan, a failed or cancelled planning).
 * A move that owes a report ends nothing yet: its report, written next, does.
 */
export function withRunEnds<S extends Pick<RunStore, 'transition' | 'storeReport'>>(
  store: S,
  telemetry: RunTelemetry,
  clock: () => Date,
): S {
  const transition: RunStore['transition'] = async (runId, from, to, options) => {
    const moved = await store.transition(runId, from, to, options);
    if (moved && isTerminal(to) && options?.reportDue !== true)
      telemetry.runEnded({ runId, status: to, at: options?.at ?? clock() });
    return moved;
  };
  const storeReport: RunStore['storeReport'] = async (runId, report, status, at, fence, settle) => {
    const stored = await store.storeReport(runId, report, status, at, fence, settle);
    telemetry.runEnded({ runId, status, at });
    return stored;
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'transition') return transition;
      if (prop === 'storeReport') return storeReport;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
