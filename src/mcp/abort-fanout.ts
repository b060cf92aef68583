/**
 * Per-call AbortSignals that follow a caller's signal, with one listener per caller signal however
 * many calls share it: the engine may pass one run-wide signal to many concurrent calls, and a
 * listener per call trips Node's MaxListenersExceeded warning (and the SDK never removes its own).
 */

const followers = new WeakMap<AbortSignal, Set<AbortController>>();

/** A fresh signal aborted with `parent` (same reason); call `release` when the call settles. */
export function followSignal(parent: AbortSignal): { signal: AbortSignal; release: () => void } {
  const child = new AbortController();
  if (parent.aborted) {
    child.abort(parent.reason);
    return { signal: child.signal, release: () => {} };
  }
  let set = followers.get(parent);
  if (!set) {
    const created = new Set<AbortController>();
    followers.set(parent, created);
    parent.addEventListener(
      'abort',
      () => {
        for (const c of created) c.abort(parent.reason);
        created.clear();
      },
      { once: true },
    );
    set = created;
  }
  const members = set;
  members.add(child);
  return { signal: child.signal, release: () => members.delete(child) };
}
