/**
 * A store with some of its methods replaced, by composition: the bench taps the run store's seams (a committed
 * state change, a step's start, a sent report) without subclassing the adapter, so any `RunStore` can be measured.
 */

/**
 * `inner` with the methods in `overrides` in place of its own; each override calls `inner` itself. Every other
 * method runs on `inner` as it is, so a call `inner` makes to its own methods does not come back through here: an
 * override that must see those too replaces the outer method as well (see `hookedStore` in bench-steward.ts).
 */
export function withOverrides<S extends object>(inner: S, overrides: Partial<S>): S {
  return new Proxy(inner, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return (overrides as Record<PropertyKey, unknown>)[prop];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
