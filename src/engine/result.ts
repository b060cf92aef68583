/**
 * The one shape of an expected outcome in the engine: a value, or what went wrong. Expected failures (an invalid
 * plan, a bad reference, a failed tool call) are values of this type; only real faults are thrown.
 */
export type Result<T, E = string> = { ok: true; value: T } | { ok: false; error: E };

/** A successful result. */
export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/** A failed result. */
export function fail<E>(error: E): { ok: false; error: E } {
  return { ok: false, error };
}
